/**
 * Everything the redirect's pages say, in each language we ship (docs/design.md, "Pages"). Plain
 * text: the pages escape it. A new language is one more entry here (its primary subtag as the key);
 * the first of PAGE_LANGUAGES is the fallback.
 */
import { BrokenText, ReportText, SAFETY_TEXT } from './safety-text';

export const PAGE_LANGUAGES = ['en', 'de', 'fr', 'es', 'it'] as const;
export type PageLanguage = (typeof PAGE_LANGUAGES)[number];

/** A page's three lines: the window title, the heading and what it means for the visitor. */
export interface Message {
  readonly title: string;
  readonly heading: string;
  readonly body: string;
}

export interface PageText {
  readonly notFound: Message;
  readonly expired: Message;
  readonly exhausted: Message;
  readonly suspended: Message;
  readonly limited: Message;
  readonly unavailable: Message;
  readonly error: Message;
  readonly blocked: Message;
  /** After a Retry-After: "Try again in 30 seconds." */
  retryIn(seconds: number): string;
  readonly warning: Message & { readonly leadsTo: string; readonly continue: string };
  readonly password: Omit<Message, 'body'> & { readonly flagged: string; readonly wrong: string; readonly label: string; readonly submit: string };
  readonly preview: Omit<Message, 'body'> & {
    readonly flagged: string;
    readonly titleLabel: string;
    readonly target: string;
    readonly hidden: string;
    readonly note: string;
    readonly varies: string;
    readonly created: string;
    readonly open: string;
  };
  /** The app page of a link with an app URL scheme (docs/design.md, "Link options"). */
  readonly app: Message & { readonly open: string; readonly fallback: string };
  /** "Report this link" on the preview and warning pages, and the page of a broken link (docs/design.md, "Trust and safety"). */
  readonly report: ReportText;
  readonly broken: BrokenText;
}

export const PAGE_TEXT: Readonly<Record<PageLanguage, PageText>> = {
  en: {
    ...SAFETY_TEXT.en,
    notFound: {
      title: 'Link not found',
      heading: 'This link does not exist',
      body: 'Check the address for typos, or ask whoever sent it to you for a new one.',
    },
    expired: { title: 'Link expired', heading: 'This link has expired', body: 'It was only valid for a limited time.' },
    exhausted: {
      title: 'Link no longer available',
      heading: 'This link is no longer available',
      body: 'It could only be opened a limited number of times.',
    },
    suspended: {
      title: 'Link unavailable',
      heading: 'This link is unavailable',
      body: 'The account that owns it is suspended by the operators of this service.',
    },
    limited: { title: 'Too many requests', heading: 'Too many requests', body: 'Links were opened from here too often in a short time. Please wait a moment.' },
    unavailable: {
      title: 'Temporarily unavailable',
      heading: 'This link cannot be opened right now',
      body: 'The service has a temporary problem. Please try again in a moment.',
    },
    error: { title: 'Something went wrong', heading: 'Something went wrong', body: 'This link could not be opened. Please try again later.' },
    blocked: {
      title: 'Link blocked',
      heading: 'This link has been blocked',
      body: 'It was disabled by the operators of this service, for example after a legal request or a report of abuse.',
    },
    retryIn: (s) => (s === 1 ? 'Try again in 1 second.' : `Try again in ${s} seconds.`),
    warning: {
      title: 'Warning: this link may be unsafe',
      heading: 'This link may be unsafe',
      body: 'Our checks flagged this link as possibly deceptive or harmful (for example a look-alike of a well-known site).',
      leadsTo: 'It leads to:',
      continue: 'Continue anyway',
    },
    password: {
      title: 'Password required',
      heading: 'This link is protected by a password',
      flagged: 'This link was flagged as possibly unsafe. Continue only if you trust the sender.',
      wrong: 'That password is not right. Please try again.',
      label: 'Password',
      submit: 'Continue',
    },
    preview: {
      title: 'Link preview',
      heading: 'Where this link leads',
      flagged: 'This link was flagged as possibly unsafe.',
      titleLabel: 'Title',
      target: 'Target',
      hidden: 'hidden (this link is protected by a password)',
      note: 'Note',
      varies: 'Visitors may be sent to another address depending on their country, device or an experiment.',
      created: 'Created',
      open: 'Open the link',
    },
    app: {
      title: 'Open in the app',
      heading: 'Open this link in the app',
      body: 'If the app is installed, open it here. Otherwise you will be taken to the website or the store in a few seconds.',
      open: 'Open in the app',
      fallback: 'Continue without the app',
    },
  },
  de: {
    ...SAFETY_TEXT.de,
    notFound: {
      title: 'Link nicht gefunden',
      heading: 'Diesen Link gibt es nicht',
      body: 'Prüfen Sie die Adresse auf Tippfehler oder bitten Sie die Person, die ihn Ihnen geschickt hat, um einen neuen.',
    },
    expired: { title: 'Link abgelaufen', heading: 'Dieser Link ist abgelaufen', body: 'Er war nur für eine begrenzte Zeit gültig.' },
    exhausted: {
      title: 'Link nicht mehr verfügbar',
      heading: 'Dieser Link ist nicht mehr verfügbar',
      body: 'Er konnte nur eine begrenzte Anzahl von Malen geöffnet werden.',
    },
    suspended: {
      title: 'Link nicht verfügbar',
      heading: 'Dieser Link ist nicht verfügbar',
      body: 'Das Konto, dem er gehört, wurde von den Betreibern dieses Dienstes gesperrt.',
    },
    limited: {
      title: 'Zu viele Anfragen',
      heading: 'Zu viele Anfragen',
      body: 'Von hier aus wurden in kurzer Zeit zu viele Links geöffnet. Bitte warten Sie einen Moment.',
    },
    unavailable: {
      title: 'Vorübergehend nicht verfügbar',
      heading: 'Dieser Link kann gerade nicht geöffnet werden',
      body: 'Der Dienst hat ein vorübergehendes Problem. Bitte versuchen Sie es gleich noch einmal.',
    },
    error: {
      title: 'Etwas ist schiefgelaufen',
      heading: 'Etwas ist schiefgelaufen',
      body: 'Dieser Link konnte nicht geöffnet werden. Bitte versuchen Sie es später noch einmal.',
    },
    blocked: {
      title: 'Link gesperrt',
      heading: 'Dieser Link wurde gesperrt',
      body: 'Die Betreiber dieses Dienstes haben ihn deaktiviert, zum Beispiel nach einer rechtlichen Aufforderung oder einer Meldung von Missbrauch.',
    },
    retryIn: (s) => (s === 1 ? 'Bitte versuchen Sie es in 1 Sekunde erneut.' : `Bitte versuchen Sie es in ${s} Sekunden erneut.`),
    warning: {
      title: 'Warnung: Dieser Link ist möglicherweise unsicher',
      heading: 'Dieser Link ist möglicherweise unsicher',
      body: 'Unsere Prüfungen haben diesen Link als möglicherweise irreführend oder schädlich markiert (zum Beispiel als Nachahmung einer bekannten Website).',
      leadsTo: 'Er führt zu:',
      continue: 'Trotzdem fortfahren',
    },
    password: {
      title: 'Passwort erforderlich',
      heading: 'Dieser Link ist durch ein Passwort geschützt',
      flagged: 'Dieser Link wurde als möglicherweise unsicher markiert. Fahren Sie nur fort, wenn Sie dem Absender vertrauen.',
      wrong: 'Das Passwort ist nicht richtig. Bitte versuchen Sie es noch einmal.',
      label: 'Passwort',
      submit: 'Weiter',
    },
    preview: {
      title: 'Link-Vorschau',
      heading: 'Wohin dieser Link führt',
      flagged: 'Dieser Link wurde als möglicherweise unsicher markiert.',
      titleLabel: 'Titel',
      target: 'Ziel',
      hidden: 'verborgen (dieser Link ist durch ein Passwort geschützt)',
      note: 'Hinweis',
      varies: 'Besucher können je nach Land, Gerät oder einem Experiment an eine andere Adresse weitergeleitet werden.',
      created: 'Erstellt',
      open: 'Link öffnen',
    },
    app: {
      title: 'In der App öffnen',
      heading: 'Diesen Link in der App öffnen',
      body: 'Wenn die App installiert ist, öffnen Sie sie hier. Sonst geht es in wenigen Sekunden zur Website oder zum Store.',
      open: 'In der App öffnen',
      fallback: 'Ohne die App weiter',
    },
  },
  fr: {
    ...SAFETY_TEXT.fr,
    notFound: {
      title: 'Lien introuvable',
      heading: 'Ce lien n’existe pas',
      body: 'Vérifiez l’adresse, ou demandez un nouveau lien à la personne qui vous l’a envoyé.',
    },
    expired: { title: 'Lien expiré', heading: 'Ce lien a expiré', body: 'Il n’était valable que pour une durée limitée.' },
    exhausted: {
      title: 'Lien plus disponible',
      heading: 'Ce lien n’est plus disponible',
      body: 'Il ne pouvait être ouvert qu’un nombre limité de fois.',
    },
    suspended: {
      title: 'Lien indisponible',
      heading: 'Ce lien est indisponible',
      body: 'Le compte auquel il appartient a été suspendu par les opérateurs de ce service.',
    },
    limited: {
      title: 'Trop de requêtes',
      heading: 'Trop de requêtes',
      body: 'Trop de liens ont été ouverts d’ici en peu de temps. Veuillez patienter un instant.',
    },
    unavailable: {
      title: 'Temporairement indisponible',
      heading: 'Ce lien ne peut pas être ouvert pour le moment',
      body: 'Le service rencontre un problème temporaire. Veuillez réessayer dans un instant.',
    },
    error: { title: 'Une erreur est survenue', heading: 'Une erreur est survenue', body: 'Ce lien n’a pas pu être ouvert. Veuillez réessayer plus tard.' },
    blocked: {
      title: 'Lien bloqué',
      heading: 'Ce lien a été bloqué',
      body: 'Les opérateurs de ce service l’ont désactivé, par exemple à la suite d’une demande légale ou d’un signalement d’abus.',
    },
    retryIn: (s) => (s === 1 ? 'Réessayez dans 1 seconde.' : `Réessayez dans ${s} secondes.`),
    warning: {
      title: 'Attention\u00a0: ce lien est peut-être dangereux',
      heading: 'Ce lien est peut-être dangereux',
      body: 'Nos vérifications ont signalé ce lien comme potentiellement trompeur ou dangereux (par exemple une imitation d’un site connu).',
      leadsTo: 'Il mène à\u00a0:',
      continue: 'Continuer quand même',
    },
    password: {
      title: 'Mot de passe requis',
      heading: 'Ce lien est protégé par un mot de passe',
      flagged: 'Ce lien a été signalé comme potentiellement dangereux. Ne continuez que si vous faites confiance à l’expéditeur.',
      wrong: 'Ce mot de passe n’est pas le bon. Veuillez réessayer.',
      label: 'Mot de passe',
      submit: 'Continuer',
    },
    preview: {
      title: 'Aperçu du lien',
      heading: 'Où mène ce lien',
      flagged: 'Ce lien a été signalé comme potentiellement dangereux.',
      titleLabel: 'Titre',
      target: 'Destination',
      hidden: 'masquée (ce lien est protégé par un mot de passe)',
      note: 'Remarque',
      varies: 'Les visiteurs peuvent être dirigés vers une autre adresse selon leur pays, leur appareil ou une expérience.',
      created: 'Créé le',
      open: 'Ouvrir le lien',
    },
    app: {
      title: 'Ouvrir dans l’application',
      heading: 'Ouvrir ce lien dans l’application',
      body: 'Si l’application est installée, ouvrez-la ici. Sinon, vous serez dirigé vers le site ou la boutique dans quelques secondes.',
      open: 'Ouvrir dans l’application',
      fallback: 'Continuer sans l’application',
    },
  },
  es: {
    ...SAFETY_TEXT.es,
    notFound: {
      title: 'Enlace no encontrado',
      heading: 'Este enlace no existe',
      body: 'Comprueba que la dirección esté bien escrita o pide un enlace nuevo a quien te lo envió.',
    },
    expired: { title: 'Enlace caducado', heading: 'Este enlace ha caducado', body: 'Solo era válido durante un tiempo limitado.' },
    exhausted: {
      title: 'Enlace ya no disponible',
      heading: 'Este enlace ya no está disponible',
      body: 'Solo se podía abrir un número limitado de veces.',
    },
    suspended: {
      title: 'Enlace no disponible',
      heading: 'Este enlace no está disponible',
      body: 'Los operadores de este servicio han suspendido la cuenta a la que pertenece.',
    },
    limited: {
      title: 'Demasiadas solicitudes',
      heading: 'Demasiadas solicitudes',
      body: 'Se han abierto demasiados enlaces desde aquí en poco tiempo. Espera un momento, por favor.',
    },
    unavailable: {
      title: 'No disponible temporalmente',
      heading: 'Ahora mismo no se puede abrir este enlace',
      body: 'El servicio tiene un problema temporal. Vuelve a intentarlo dentro de un momento.',
    },
    error: { title: 'Algo ha salido mal', heading: 'Algo ha salido mal', body: 'No se ha podido abrir este enlace. Vuelve a intentarlo más tarde.' },
    blocked: {
      title: 'Enlace bloqueado',
      heading: 'Este enlace ha sido bloqueado',
      body: 'Los operadores de este servicio lo han desactivado, por ejemplo tras una solicitud legal o una denuncia de abuso.',
    },
    retryIn: (s) => (s === 1 ? 'Vuelve a intentarlo dentro de 1 segundo.' : `Vuelve a intentarlo dentro de ${s} segundos.`),
    warning: {
      title: 'Advertencia: este enlace podría no ser seguro',
      heading: 'Este enlace podría no ser seguro',
      body: 'Nuestras comprobaciones han marcado este enlace como posiblemente engañoso o dañino (por ejemplo, una imitación de un sitio conocido).',
      leadsTo: 'Lleva a:',
      continue: 'Continuar de todos modos',
    },
    password: {
      title: 'Contraseña necesaria',
      heading: 'Este enlace está protegido con contraseña',
      flagged: 'Este enlace se ha marcado como posiblemente peligroso. Continúa solo si confías en quien te lo envió.',
      wrong: 'La contraseña no es correcta. Inténtalo de nuevo.',
      label: 'Contraseña',
      submit: 'Continuar',
    },
    preview: {
      title: 'Vista previa del enlace',
      heading: 'Adónde lleva este enlace',
      flagged: 'Este enlace se ha marcado como posiblemente peligroso.',
      titleLabel: 'Título',
      target: 'Destino',
      hidden: 'oculto (este enlace está protegido con contraseña)',
      note: 'Nota',
      varies: 'Los visitantes pueden ir a otra dirección según su país, su dispositivo o un experimento.',
      created: 'Creado',
      open: 'Abrir el enlace',
    },
    app: {
      title: 'Abrir en la aplicación',
      heading: 'Abrir este enlace en la aplicación',
      body: 'Si tienes la aplicación instalada, ábrela aquí. Si no, en unos segundos irás al sitio web o a la tienda.',
      open: 'Abrir en la aplicación',
      fallback: 'Continuar sin la aplicación',
    },
  },
  it: {
    ...SAFETY_TEXT.it,
    notFound: {
      title: 'Link non trovato',
      heading: 'Questo link non esiste',
      body: 'Controlla che l’indirizzo sia scritto bene, oppure chiedi un nuovo link a chi te l’ha inviato.',
    },
    expired: { title: 'Link scaduto', heading: 'Questo link è scaduto', body: 'Era valido solo per un periodo limitato.' },
    exhausted: {
      title: 'Link non più disponibile',
      heading: 'Questo link non è più disponibile',
      body: 'Poteva essere aperto solo un numero limitato di volte.',
    },
    suspended: {
      title: 'Link non disponibile',
      heading: 'Questo link non è disponibile',
      body: 'L’account a cui appartiene è stato sospeso dai gestori di questo servizio.',
    },
    limited: {
      title: 'Troppe richieste',
      heading: 'Troppe richieste',
      body: 'Da qui sono stati aperti troppi link in poco tempo. Attendi un momento, per favore.',
    },
    unavailable: {
      title: 'Temporaneamente non disponibile',
      heading: 'Al momento questo link non può essere aperto',
      body: 'Il servizio ha un problema temporaneo. Riprova tra un momento.',
    },
    error: { title: 'Qualcosa è andato storto', heading: 'Qualcosa è andato storto', body: 'Non è stato possibile aprire questo link. Riprova più tardi.' },
    blocked: {
      title: 'Link bloccato',
      heading: 'Questo link è stato bloccato',
      body: 'I gestori di questo servizio lo hanno disattivato, per esempio dopo una richiesta legale o una segnalazione di abuso.',
    },
    retryIn: (s) => (s === 1 ? 'Riprova tra 1 secondo.' : `Riprova tra ${s} secondi.`),
    warning: {
      title: 'Attenzione: questo link potrebbe non essere sicuro',
      heading: 'Questo link potrebbe non essere sicuro',
      body: 'I nostri controlli hanno segnalato questo link come potenzialmente ingannevole o dannoso (per esempio l’imitazione di un sito noto).',
      leadsTo: 'Porta a:',
      continue: 'Continua comunque',
    },
    password: {
      title: 'Password richiesta',
      heading: 'Questo link è protetto da password',
      flagged: 'Questo link è stato segnalato come potenzialmente pericoloso. Continua solo se ti fidi di chi te l’ha inviato.',
      wrong: 'La password non è corretta. Riprova.',
      label: 'Password',
      submit: 'Continua',
    },
    preview: {
      title: 'Anteprima del link',
      heading: 'Dove porta questo link',
      flagged: 'Questo link è stato segnalato come potenzialmente pericoloso.',
      titleLabel: 'Titolo',
      target: 'Destinazione',
      hidden: 'nascosta (questo link è protetto da password)',
      note: 'Nota',
      varies: 'I visitatori possono essere indirizzati a un altro indirizzo in base al paese, al dispositivo o a un esperimento.',
      created: 'Creato il',
      open: 'Apri il link',
    },
    app: {
      title: 'Apri nell’app',
      heading: 'Apri questo link nell’app',
      body: 'Se l’app è installata, aprila da qui. Altrimenti tra pochi secondi verrai portato al sito o allo store.',
      open: 'Apri nell’app',
      fallback: 'Continua senza l’app',
    },
  },
};
