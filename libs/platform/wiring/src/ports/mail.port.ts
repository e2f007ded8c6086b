import { SmtpMailer } from '@shortlink/mail';
import { MAILER } from '@shortlink/people-domain';
import { portSpec } from '../port';

/** Invitation mail: SMTP through nodemailer when SMTP_URL is set; otherwise null, and invitations are only in the API's answer. */
export const mailPort = portSpec({
  name: 'mail',
  open: (config) => (config.people.mail.smtpUrl ? new SmtpMailer({ url: config.people.mail.smtpUrl, from: config.people.mail.from }) : null),
  provides: [[MAILER, (mailer) => mailer]],
  close: async (mailer) => mailer?.close(),
});
