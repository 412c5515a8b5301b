import type { SecretBox } from '../common/crypto/secret-box';
import type { MailKind } from './mail-driver';

/**
 * Mails that carry a one-use link (an invitation, a password reset, a recipient confirmation)
 * hold a live token in their body. Herald stores only the SHA-256 of a token, so that a copy of
 * the database (a backup, a replica, a read-only role) opens nothing; the mail's body would undo
 * that. So such a body is kept in mail_outbox sealed with HERALD_SECRET_KEY (SecretBox,
 * AES-256-GCM) while it waits, opened only by the sender at sending time, and replaced by
 * REMOVED_BODY in the statement that records that it was sent or failed for good.
 *
 * Decided here by kind, for every kind (a new kind must say whether it carries a link). The
 * migration 1765800000000-sealed-mail repeats the list in a CHECK constraint, so a row that
 * breaks the rule cannot be written.
 */
const CARRIES_A_LINK: Record<MailKind, boolean> = {
  digest: false,
  alert: false,
  invitation: true,
  password_reset: true,
  recipient_confirmation: true,
  // Its one link opens the settings page's approvals list (no token).
  approval: false,
};

/** The kinds whose bodies are sealed while they wait and dropped once sent. */
export const SEALED_KINDS: readonly MailKind[] = (Object.keys(CARRIES_A_LINK) as MailKind[]).filter((k) => CARRIES_A_LINK[k]);

export function sealsBody(kind: MailKind): boolean {
  return CARRIES_A_LINK[kind];
}

/** What a sealed mail's html and text become once it was sent or failed for good (the CHECK names it too). */
export const REMOVED_BODY = '(removed once sent: it held a one-use link)';

export interface MailBody {
  html: string;
  text: string;
}

/**
 * Bound to the row and the part (additional authenticated data): a body copied onto another
 * mail, or the html swapped with the text, does not open.
 */
const context = (mailId: string, part: keyof MailBody): string => `mail:${mailId}:${part}`;

/** The body as it is stored: sealed when the kind carries a link, as it is otherwise. */
export function sealBody(box: SecretBox, mailId: string, kind: MailKind, body: MailBody): MailBody {
  if (!sealsBody(kind)) return { html: body.html, text: body.text };
  return { html: box.encrypt(body.html, context(mailId, 'html')), text: box.encrypt(body.text, context(mailId, 'text')) };
}

/** The body to send. Throws SecretDecryptionError when the key is not the one it was sealed with. */
export function openBody(box: SecretBox, mailId: string, kind: MailKind, stored: MailBody): MailBody {
  if (!sealsBody(kind)) return { html: stored.html, text: stored.text };
  return { html: box.decrypt(stored.html, context(mailId, 'html')), text: box.decrypt(stored.text, context(mailId, 'text')) };
}
