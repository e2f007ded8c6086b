import { createTransport, Transporter } from 'nodemailer';
import type { Mailer, OutgoingMail } from '@shortlink/people-domain';

export interface SmtpMailerOptions {
  /** smtp://user:pass@host:587 (STARTTLS when the server offers it) or smtps://…:465; nodemailer's URL form. */
  readonly url: string;
  /** The From header, e.g. `shortlink <no-reply@example.com>`. */
  readonly from: string;
  /** Longest wait for the server to connect, greet or answer a command (a request waits on it). */
  readonly timeoutMs?: number;
}

/** Mail through an SMTP server (nodemailer): the invitations (docs/design.md, "People and sessions"). */
export class SmtpMailer implements Mailer {
  private readonly transport: Transporter;

  constructor(private readonly options: SmtpMailerOptions) {
    const timeoutMs = options.timeoutMs ?? 10_000;
    this.transport = createTransport({ url: options.url, connectionTimeout: timeoutMs, greetingTimeout: timeoutMs, socketTimeout: timeoutMs });
  }

  async send(mail: OutgoingMail): Promise<void> {
    await this.transport.sendMail({ from: this.options.from, to: mail.to, subject: mail.subject, text: mail.text });
  }

  close(): void {
    this.transport.close();
  }
}
