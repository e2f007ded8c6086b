import { simpleParser } from 'mailparser';
import { AddressInfo } from 'net';
import { SMTPServer } from 'smtp-server';
import { SmtpMailer } from './smtp-mailer';

/** A real SMTP server on 127.0.0.1 (smtp-server) takes the message; mailparser reads what arrived. */
describe('SmtpMailer', () => {
  let server: SMTPServer;
  let port: number;
  const received: Array<{ from: string; to: string[]; raw: Buffer }> = [];

  beforeAll(async () => {
    server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          received.push({
            from: (session.envelope.mailFrom && session.envelope.mailFrom.address) || '',
            to: session.envelope.rcptTo.map((r) => r.address),
            raw: Buffer.concat(chunks),
          });
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.server.address() as AddressInfo).port;
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('hands the message to the server with its sender, recipient, subject and text', async () => {
    const mailer = new SmtpMailer({ url: `smtp://127.0.0.1:${port}`, from: 'shortlink <no-reply@sho.rt>' });
    await mailer.send({
      to: 'ana@example.com',
      subject: 'You are invited to Acme',
      text: 'Choose a password here: https://console.example/accept#token=inv_x',
    });
    mailer.close();
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({ from: 'no-reply@sho.rt', to: ['ana@example.com'] });
    const parsed = await simpleParser(received[0].raw);
    expect(parsed.subject).toBe('You are invited to Acme');
    expect(parsed.text?.trim()).toBe('Choose a password here: https://console.example/accept#token=inv_x');
  });

  it('fails the send when the server is not there', async () => {
    const mailer = new SmtpMailer({ url: 'smtp://127.0.0.1:1', from: 'x <x@sho.rt>', timeoutMs: 2000 });
    await expect(mailer.send({ to: 'a@example.com', subject: 's', text: 't' })).rejects.toThrow();
    mailer.close();
  });
});
