import type { Transporter } from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport';
import { composeMessage, loadNodemailer, MailAccepted, MailDriver, MailSendError, OutgoingMail } from './mail-driver';
import { describeSmtpError, isRetryableSmtpError, SmtpErrorLike } from './smtp-errors';

/**
 * SMTP through nodemailer (SMTP_URL: `smtp://user:pass@host:587` with STARTTLS when the server
 * offers it, `smtps://…:465` for TLS from the start). One connection per message: Herald sends a
 * few mails a day per workspace, not enough to keep a pool open. nodemailer's own logger stays
 * off, so the URL (and its password) never reaches a log. The transport (and nodemailer) is made
 * at the first mail, not at startup.
 */
export class SmtpDriver implements MailDriver {
  readonly name = 'smtp';
  private transport: Transporter<SMTPTransport.SentMessageInfo> | null = null;

  constructor(
    private readonly smtpUrl: string,
    private readonly timeoutMs: number,
    private readonly messageIdDomain: string,
  ) {}

  private async open(): Promise<Transporter<SMTPTransport.SentMessageInfo>> {
    const nodemailer = await loadNodemailer();
    this.transport ??= nodemailer.createTransport({
      url: this.smtpUrl,
      connectionTimeout: this.timeoutMs,
      greetingTimeout: this.timeoutMs,
      socketTimeout: this.timeoutMs,
      logger: false,
      debug: false,
    });
    return this.transport;
  }

  async send(mail: OutgoingMail): Promise<MailAccepted> {
    let info: SMTPTransport.SentMessageInfo;
    try {
      info = await (await this.open()).sendMail(composeMessage(mail, this.messageIdDomain));
    } catch (err) {
      const e = (typeof err === 'object' && err !== null ? err : { message: String(err) }) as SmtpErrorLike;
      throw new MailSendError(describeSmtpError(e), isRetryableSmtpError(e));
    }
    return {
      response: info.response,
      // @types/nodemailer 8 types them as strings (SMTP's own answer); other transports give addresses.
      rejected: info.rejected.map((r: string | { address: string }) => (typeof r === 'string' ? r : r.address)),
    };
  }

  close(): void {
    this.transport?.close();
  }
}
