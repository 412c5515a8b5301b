import { esc, excerpt, htmlFrame, link, oneLine } from '../mail/mail-format';

/**
 * The limits that keep Herald's mail from being a relay (pure; docs/notifications.md prints the
 * numbers). A recipient gets nothing before confirming their address through a mailed link;
 * confirmation mails and alerts are limited per day.
 */

/** A confirmation link works for 7 days, once. */
export const CONFIRMATION_TTL_MS = 7 * 86_400_000;
/** An address gets at most one confirmation mail per this long, however often it is re-added. */
export const CONFIRMATION_EVERY_MS = 86_400_000;
/** Confirmation mails per workspace in any 24 hours (the recipient list holds at most 20 addresses). */
export const CONFIRMATIONS_PER_DAY = 20;

/** Alerts mailed in any 24 hours: per account, and per workspace. Events beyond are recorded as `capped`. */
export const ALERTS_PER_ACCOUNT_PER_DAY = 4;
export const ALERTS_PER_WORKSPACE_PER_DAY = 20;
/**
 * Approval mails (to owners: a post waits; to an author: the decision) mailed per workspace in any
 * 24 hours (ALERT_WINDOW_MS). Beyond it the step is still recorded and shown on the page; only the
 * mail is left out (the approvals list is the place to look).
 */
export const APPROVAL_MAILS_PER_WORKSPACE_PER_DAY = 50;

/** May one more approval mail be written, given how many the workspace wrote in the window? */
export function approvalMailAllowed(mailedInWindow: number, cap = APPROVAL_MAILS_PER_WORKSPACE_PER_DAY): boolean {
  return mailedInWindow < cap;
}

/** The window both alert limits count over. */
export const ALERT_WINDOW_MS = 86_400_000;

export type AlertCapDecision = { send: true } | { send: false; reached: 'account' | 'workspace' };

/** May one more alert be mailed, given how many were mailed in the last ALERT_WINDOW_MS? */
export function alertCapDecision(
  mailed: { account: number; workspace: number },
  caps: { perAccount: number; perWorkspace: number } = {
    perAccount: ALERTS_PER_ACCOUNT_PER_DAY,
    perWorkspace: ALERTS_PER_WORKSPACE_PER_DAY,
  },
): AlertCapDecision {
  if (mailed.account >= caps.perAccount) return { send: false, reached: 'account' };
  if (mailed.workspace >= caps.perWorkspace) return { send: false, reached: 'workspace' };
  return { send: true };
}

/** How many confirmation mails a workspace may still write now, given how many it wrote in the last 24 hours. */
export function confirmationBudget(sentInLastDay: number, perDay = CONFIRMATIONS_PER_DAY): number {
  return Math.max(0, perDay - Math.max(0, sentInLastDay));
}

/** The start of the window that alert and confirmation limits count over. */
export function dayBefore(now: Date): Date {
  return new Date(now.getTime() - ALERT_WINDOW_MS);
}

/** The confirmation mail (pure). Its link opens a page with a button; following it changes nothing. */
export function confirmationMail(f: { workspaceName: string; address: string; link: string; days: number }): {
  subject: string;
  html: string;
  text: string;
} {
  const ws = excerpt(oneLine(f.workspaceName), 80);
  const subject = `Confirm Herald notifications for ${ws}`;
  const text = [
    `Someone added ${f.address} to the recipients of Herald's notifications (a daily digest of`,
    `failed posts, and alerts when an account needs a person) for the workspace "${ws}".`,
    '',
    `Nothing is sent to this address until you confirm it. To confirm, open this link (it works`,
    `once, for the next ${f.days} days) and press the button:`,
    '',
    f.link,
    '',
    'If you did not expect this, ignore this mail: you will get nothing more.',
  ].join('\n');
  const html = htmlFrame(
    subject,
    [
      `<p>Someone added ${esc(f.address)} to the recipients of Herald's notifications (a daily digest of failed posts, and alerts when an account needs a person) for the workspace “${esc(ws)}”.</p>`,
      `<p>Nothing is sent to this address until you confirm it. ${link(f.link, 'Confirm the address')}: the link works once, for the next ${f.days} days.</p>`,
    ].join('\n'),
    'If you did not expect this, ignore this mail: you will get nothing more.',
  );
  return { subject, html, text };
}
