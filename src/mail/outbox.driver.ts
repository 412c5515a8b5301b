import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import type { Transporter } from 'nodemailer';
import type StreamTransport from 'nodemailer/lib/stream-transport';
import { composeMessage, loadNodemailer, MailAccepted, MailDriver, MailSendError, OutgoingMail } from './mail-driver';

/**
 * Without SMTP_URL, mail is written as `.eml` files (RFC 5322, what a mail client opens) under
 * `HERALD_DATA_DIR/outbox/`, so `npm start` on a laptop shows what would be sent. The name is
 * made from the mail's creation time, kind and id: stable, so a retry replaces the file instead
 * of adding a second one, and `ls` lists them in order. Written to a temporary name and renamed,
 * so a reader never sees half a message. The transport (and nodemailer) is made at the first mail.
 */
export class OutboxDriver implements MailDriver {
  readonly name = 'outbox';
  private transport: Transporter<StreamTransport.SentMessageInfo> | null = null;

  constructor(
    readonly directory: string,
    private readonly messageIdDomain: string,
  ) {}

  private async open(): Promise<Transporter<StreamTransport.SentMessageInfo>> {
    const nodemailer = await loadNodemailer();
    this.transport ??= nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' });
    return this.transport;
  }

  static fileName(mail: Pick<OutgoingMail, 'id' | 'kind' | 'createdAt'>): string {
    const stamp = mail.createdAt
      .toISOString()
      .replace(/[-:]/g, '')
      .replace(/\.\d+Z$/, 'Z');
    return `${stamp}-${mail.kind}-${mail.id}.eml`;
  }

  async send(mail: OutgoingMail): Promise<MailAccepted> {
    const file = path.join(this.directory, OutboxDriver.fileName(mail));
    try {
      const info = await (await this.open()).sendMail(composeMessage(mail, this.messageIdDomain));
      await fs.mkdir(this.directory, { recursive: true });
      const temporary = `${file}.${process.pid}.tmp`;
      await fs.writeFile(temporary, info.message as Buffer);
      await fs.rename(temporary, file);
    } catch (err) {
      // A full disk or a folder without write access: worth another try once it is fixed.
      throw new MailSendError(`could not write ${file}: ${err instanceof Error ? err.message : String(err)}`, true);
    }
    return { response: `written to ${file}`, rejected: [] };
  }

  close(): void {
    this.transport?.close();
  }
}
