import type { Provider } from '../connectors/connector.interface';
import { formatLocal } from '../common/zoned-time';
import type { RenderedMail } from '../digest/digest.types';
import { esc, excerpt, htmlFrame, link, links, oneLine, plural } from '../mail/mail-format';

export type AlertKind = 'needs_reauth' | 'disabled' | 'failure_warning' | 'token_expiring';
export const ALERT_KINDS: readonly AlertKind[] = ['needs_reauth', 'disabled', 'failure_warning', 'token_expiring'];

/** One account event, as the notifier hands it to the builder. */
export interface AlertFacts {
  kind: AlertKind;
  account: { id: string; name: string; provider: Provider };
  /** The status reason or the last error at the time of the event. */
  detail: string | null;
  consecutiveFailures: number;
  disableThreshold: number | null;
  tokenExpiresAt: Date | null;
  /** When the state changed. */
  at: Date;
  /** The account's jobs waiting for it now (paused or scheduled). */
  waitingJobs: number;
}

export interface AlertContext {
  publicUrl: string;
  timeZone: string;
  workspaceName: string;
}

const PROVIDER_NAMES: Record<Provider, string> = { bluesky: 'Bluesky', linkedin: 'LinkedIn', mastodon: 'Mastodon', webhook: 'webhook' };

interface AlertWords {
  subject: string;
  /** What happened, then what to do, one paragraph each. */
  paragraphs: string[];
}

function words(f: AlertFacts, who: string, ctx: AlertContext): AlertWords {
  const detail = f.detail ? excerpt(f.detail, 300) : null;
  const waiting = f.waitingJobs > 0 ? ` ${plural(f.waitingJobs, 'post')} for it ${f.waitingJobs === 1 ? 'waits' : 'wait'} until then.` : '';
  switch (f.kind) {
    case 'needs_reauth':
      return {
        subject: `Herald: ${who} needs to be reconnected`,
        paragraphs: [
          `The platform refused the credentials of ${who} at ${formatLocal(f.at, ctx.timeZone)} (${ctx.timeZone})${detail ? `: ${detail}` : '.'}`,
          `Re-enter its credentials (or reconnect it) in the settings: Herald publishes nothing to it until then.${waiting}`,
        ],
      };
    case 'disabled':
      return {
        subject: `Herald: ${who} was disabled after ${plural(f.consecutiveFailures, 'failed attempt')} in a row`,
        paragraphs: [
          `Herald stopped publishing to ${who} at ${formatLocal(f.at, ctx.timeZone)} (${ctx.timeZone}): ${plural(f.consecutiveFailures, 'attempt')} in a row failed${detail ? `, the last one with: ${detail}` : '.'}`,
          `Check the receiver, then enable the account in the settings.${waiting}`,
        ],
      };
    case 'failure_warning':
      return {
        subject: `Herald: ${who} has failed ${plural(f.consecutiveFailures, 'time')} in a row`,
        paragraphs: [
          `Deliveries to ${who} have failed ${plural(f.consecutiveFailures, 'time')} in a row${detail ? `, the last one with: ${detail}` : '.'}`,
          f.disableThreshold !== null
            ? `Herald keeps retrying. At ${f.disableThreshold} failures in a row it disables the account and holds its posts until a person enables it again. This warning comes once; it is re-armed after the next success.`
            : 'Herald keeps retrying. This warning comes once; it is re-armed after the next success.',
        ],
      };
    case 'token_expiring': {
      const when = f.tokenExpiresAt ? formatLocal(f.tokenExpiresAt, ctx.timeZone) : 'soon';
      const past = f.tokenExpiresAt !== null && f.tokenExpiresAt.getTime() <= f.at.getTime();
      return {
        subject: past ? `Herald: the access token of ${who} has expired` : `Herald: the access token of ${who} expires on ${when}`,
        paragraphs: [
          `${past ? 'The access token expired' : 'The access token expires'} on ${when} (${ctx.timeZone}), and this app gets no refresh token, so Herald cannot renew it.`,
          'Reconnect the account in the settings before then, or its posts will fail.',
        ],
      };
    }
  }
}

/**
 * An alert mail (docs/notifications.md: re-authentication needed, disabled by the circuit breaker, the early
 * warning at half the threshold; a LinkedIn token that cannot be refreshed, 7 days
 * before it expires). Pure. The account name is the only user content: escaped in the HTML,
 * flattened to one line in the subject.
 */
export function renderAlert(f: AlertFacts, ctx: AlertContext): RenderedMail {
  const who = `"${excerpt(oneLine(f.account.name), 80)}" (${PROVIDER_NAMES[f.account.provider] ?? f.account.provider})`;
  const w = words(f, who, ctx);
  const settings = links.settings(ctx.publicUrl);
  const failed = links.failedPosts(ctx.publicUrl, { accountId: f.account.id });
  const why = `You receive this because your address is a notification recipient of the Herald workspace "${oneLine(ctx.workspaceName)}".`;
  const text = [
    ...w.paragraphs.flatMap((p) => [p, '']),
    `Settings: ${settings}`,
    `Its failed posts: ${failed}`,
    '',
    `${why} Change it: ${links.notificationSettings(ctx.publicUrl)}`,
  ].join('\n');
  const body = [
    `<h1 style="font-size:18px;margin:0 0 12px">${esc(w.subject.replace(/^Herald: /, ''))}</h1>`,
    ...w.paragraphs.map((p) => `<p>${esc(p)}</p>`),
    `<p>${link(settings, 'Open the settings')} · ${link(failed, 'its failed posts')}</p>`,
  ].join('\n');
  return {
    subject: w.subject,
    text,
    html: htmlFrame(w.subject, body, `${esc(why)} ${link(links.notificationSettings(ctx.publicUrl), 'Change the notification settings')}`),
  };
}
