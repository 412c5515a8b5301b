import type * as Nodemailer from 'nodemailer';
import type Mail from 'nodemailer/lib/mailer';

export type MailKind = 'digest' | 'alert' | 'invitation' | 'password_reset' | 'recipient_confirmation' | 'approval';
export const MAIL_KINDS: readonly MailKind[] = ['digest', 'alert', 'invitation', 'password_reset', 'recipient_confirmation', 'approval'];

/** A mail of the outbox, ready for a driver. */
export interface OutgoingMail {
  id: string;
  kind: MailKind;
  from: string;
  to: string[];
  subject: string;
  html: string;
  text: string;
  createdAt: Date;
}

/** What the receiving side said when it took the message. */
export interface MailAccepted {
  /** The server's answer (SMTP), or where the file was written (outbox). */
  response: string;
  /** Recipients the server refused while it accepted the others. */
  rejected: string[];
}

/** A send that did not go through; `retryable` says whether another try may succeed. */
export class MailSendError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
    this.name = 'MailSendError';
  }
}

/** Where mail goes: SMTP when SMTP_URL is set, `.eml` files under HERALD_DATA_DIR/outbox/ otherwise. */
export interface MailDriver {
  readonly name: 'smtp' | 'outbox';
  /** Resolves once the message was accepted; rejects with MailSendError. */
  send(mail: OutgoingMail): Promise<MailAccepted>;
  close(): void;
}

export const MAIL_DRIVER = Symbol('MAIL_DRIVER');

/**
 * nodemailer, loaded by a driver at its first mail rather than at startup: most processes send a
 * few mails a day, and a worker none (docs/benchmarks.md, "Peak RSS"). Node caches the module.
 */
export async function loadNodemailer(): Promise<typeof Nodemailer> {
  return import('nodemailer');
}

/**
 * The message as nodemailer composes it, the same for both drivers. The Message-ID is the
 * outbox row's: a mail sent twice (a sender that died after the server accepted it, before it
 * could record that) carries the same id, which mail clients use to fold duplicates.
 */
export function composeMessage(mail: OutgoingMail, messageIdDomain: string): Mail.Options {
  return {
    from: mail.from,
    to: mail.to,
    subject: mail.subject,
    text: mail.text,
    html: mail.html,
    messageId: `<${mail.id}@${messageIdDomain}>`,
    date: mail.createdAt,
    headers: {
      // RFC 3834: automatic mail; vacation responders must not answer it.
      'Auto-Submitted': 'auto-generated',
      'X-Herald-Kind': mail.kind,
    },
  };
}
