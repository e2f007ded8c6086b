import type { ReportReason } from '@shortlink/safety-domain';

/**
 * What the pages of trust and safety say (docs/design.md, "Trust and safety"): the "Report this
 * link" form of the preview and warning pages, its confirmation, and the page of a broken link.
 * Plain text, escaped by the pages; one entry per language of PAGE_LANGUAGES.
 */
export interface ReportText {
  /** The control that opens the form. */
  readonly summary: string;
  readonly legend: string;
  readonly reasons: Readonly<Record<ReportReason, string>>;
  readonly details: string;
  readonly detailsHint: string;
  readonly send: string;
  /** The form sent without a reason (or with too long details). */
  readonly invalid: string;
  readonly sent: { readonly title: string; readonly heading: string; readonly body: string };
  readonly back: string;
}

export interface BrokenText {
  readonly title: string;
  readonly heading: string;
  readonly body: string;
  readonly leadsTo: string;
  readonly continue: string;
}

export const SAFETY_TEXT = {
  en: {
    report: {
      summary: 'Report this link',
      legend: 'What is wrong with this link?',
      reasons: {
        phishing: 'Phishing: it imitates a site to steal passwords or payment details',
        malware: 'Malware or an unwanted download',
        spam: 'Spam',
        scam: 'Fraud or a scam',
        illegal: 'Illegal content',
        other: 'Something else',
      },
      details: 'Details (optional)',
      detailsHint: 'At most 1000 characters. Do not include personal data.',
      send: 'Send the report',
      invalid: 'Choose what is wrong with the link (and keep the details to 1000 characters).',
      sent: { title: 'Report sent', heading: 'Thank you for your report', body: 'The operators of this service will look at this link.' },
      back: 'Back to the link',
    },
    broken: {
      title: 'Destination unavailable',
      heading: 'This link’s destination seems to be down',
      body: 'Our checks could not reach the page this link leads to. It may be back later.',
      leadsTo: 'It leads to:',
      continue: 'Try it anyway',
    },
  },
  de: {
    report: {
      summary: 'Diesen Link melden',
      legend: 'Was stimmt mit diesem Link nicht?',
      reasons: {
        phishing: 'Phishing: Er ahmt eine Website nach, um Passwörter oder Zahlungsdaten zu stehlen',
        malware: 'Schadsoftware oder ein unerwünschter Download',
        spam: 'Spam',
        scam: 'Betrug',
        illegal: 'Illegale Inhalte',
        other: 'Etwas anderes',
      },
      details: 'Details (optional)',
      detailsHint: 'Höchstens 1000 Zeichen. Bitte keine persönlichen Daten.',
      send: 'Meldung senden',
      invalid: 'Wählen Sie, was mit dem Link nicht stimmt (und fassen Sie die Details in 1000 Zeichen).',
      sent: { title: 'Meldung gesendet', heading: 'Danke für Ihre Meldung', body: 'Die Betreiber dieses Dienstes sehen sich den Link an.' },
      back: 'Zurück zum Link',
    },
    broken: {
      title: 'Ziel nicht erreichbar',
      heading: 'Das Ziel dieses Links scheint nicht erreichbar zu sein',
      body: 'Unsere Prüfungen konnten die Seite, zu der dieser Link führt, nicht erreichen. Vielleicht ist sie später wieder da.',
      leadsTo: 'Er führt zu:',
      continue: 'Trotzdem versuchen',
    },
  },
  fr: {
    report: {
      summary: 'Signaler ce lien',
      legend: 'Quel est le problème avec ce lien ?',
      reasons: {
        phishing: 'Hameçonnage : il imite un site pour voler des mots de passe ou des données de paiement',
        malware: 'Logiciel malveillant ou téléchargement indésirable',
        spam: 'Spam',
        scam: 'Fraude ou arnaque',
        illegal: 'Contenu illégal',
        other: 'Autre chose',
      },
      details: 'Détails (facultatif)',
      detailsHint: '1000 caractères au plus. N’indiquez pas de données personnelles.',
      send: 'Envoyer le signalement',
      invalid: 'Choisissez le problème du lien (et limitez les détails à 1000 caractères).',
      sent: { title: 'Signalement envoyé', heading: 'Merci pour votre signalement', body: 'Les opérateurs de ce service vont examiner ce lien.' },
      back: 'Retour au lien',
    },
    broken: {
      title: 'Destination indisponible',
      heading: 'La destination de ce lien semble hors service',
      body: 'Nos vérifications n’ont pas pu joindre la page vers laquelle mène ce lien. Elle reviendra peut-être plus tard.',
      leadsTo: 'Il mène à :',
      continue: 'Essayer quand même',
    },
  },
  es: {
    report: {
      summary: 'Denunciar este enlace',
      legend: '¿Qué problema tiene este enlace?',
      reasons: {
        phishing: 'Phishing: imita un sitio para robar contraseñas o datos de pago',
        malware: 'Malware o una descarga no deseada',
        spam: 'Spam',
        scam: 'Fraude o estafa',
        illegal: 'Contenido ilegal',
        other: 'Otra cosa',
      },
      details: 'Detalles (opcional)',
      detailsHint: 'Como máximo 1000 caracteres. No incluya datos personales.',
      send: 'Enviar la denuncia',
      invalid: 'Elija qué problema tiene el enlace (y limite los detalles a 1000 caracteres).',
      sent: { title: 'Denuncia enviada', heading: 'Gracias por su denuncia', body: 'Los operadores de este servicio revisarán este enlace.' },
      back: 'Volver al enlace',
    },
    broken: {
      title: 'Destino no disponible',
      heading: 'El destino de este enlace parece caído',
      body: 'Nuestras comprobaciones no pudieron llegar a la página a la que lleva este enlace. Puede que vuelva más tarde.',
      leadsTo: 'Lleva a:',
      continue: 'Intentarlo de todos modos',
    },
  },
  it: {
    report: {
      summary: 'Segnala questo link',
      legend: 'Qual è il problema di questo link?',
      reasons: {
        phishing: 'Phishing: imita un sito per rubare password o dati di pagamento',
        malware: 'Malware o un download indesiderato',
        spam: 'Spam',
        scam: 'Frode o truffa',
        illegal: 'Contenuti illegali',
        other: 'Altro',
      },
      details: 'Dettagli (facoltativo)',
      detailsHint: 'Al massimo 1000 caratteri. Non inserire dati personali.',
      send: 'Invia la segnalazione',
      invalid: 'Scegli il problema del link (e limita i dettagli a 1000 caratteri).',
      sent: { title: 'Segnalazione inviata', heading: 'Grazie per la segnalazione', body: 'Gli operatori di questo servizio esamineranno questo link.' },
      back: 'Torna al link',
    },
    broken: {
      title: 'Destinazione non disponibile',
      heading: 'La destinazione di questo link sembra non funzionare',
      body: 'I nostri controlli non hanno raggiunto la pagina a cui porta questo link. Potrebbe tornare più tardi.',
      leadsTo: 'Porta a:',
      continue: 'Prova comunque',
    },
  },
} as const satisfies Record<string, { readonly report: ReportText; readonly broken: BrokenText }>;
