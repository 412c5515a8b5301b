import type { DeliveryJob } from '../connector.interface';
import type { MastodonStatus } from './mastodon-answers';

/**
 * Finding a part an earlier attempt published without Herald hearing the answer. Pure.
 *
 * The instance keeps an `Idempotency-Key` about an hour: within it, sending a part again with its
 * key gets the first status back, not a second one. Past it (or after the instance forgot the
 * key), only a look at what the account posted can tell. So before posting a part again after an
 * attempt that may have posted it, the connector reads the account's own statuses, newest first,
 * back to the moment the job was scheduled (the part cannot be older), and adopts a status that
 * replies to what the part replies to (nothing for the first part, the previous part's status for
 * the others) and carries the part's text and content warning.
 */

/**
 * Whether an earlier attempt of this job may have published a part without Herald knowing: on
 * every retry. The previous attempt's outcome alone cannot rule it out: an attempt whose answer
 * was lost may be followed by one that failed otherwise (a 429 or a 401 while looking), and the
 * job then remembers only that last failure. One look per retry is cheap; a duplicate is not.
 */
export function mayHavePublished(job: Pick<DeliveryJob, 'attemptNumber'>): boolean {
  return job.attemptNumber > 1;
}

const ENTITIES: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/**
 * The plain text of a status's HTML `content`: paragraphs and line breaks as line breaks, tags
 * dropped (a link keeps its whole address: the parts an instance hides in `invisible` spans are
 * text too), entities decoded.
 */
export function plainText(html: string): string {
  const text = html
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<\/p>\s*<p[^>]*>/gi, '\n\n')
    .replace(/<[^>]*>/g, '');
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (all, name: string) => {
    if (name.startsWith('#x') || name.startsWith('#X')) return codePoint(Number.parseInt(name.slice(2), 16)) ?? all;
    if (name.startsWith('#')) return codePoint(Number.parseInt(name.slice(1), 10)) ?? all;
    return ENTITIES[name.toLowerCase()] ?? all;
  });
}

function codePoint(n: number): string | null {
  return Number.isInteger(n) && n >= 0 && n <= 0x10ffff ? String.fromCodePoint(n) : null;
}

/**
 * Text compared the way an instance's rendering allows: whitespace runs as one space, trimmed,
 * and a mention of another server's account as its local part (`@ada@example.social` is shown as
 * `@ada`).
 */
export function comparable(text: string): string {
  return text
    .replace(/(?<![=/\p{L}\p{M}\p{N}\p{Pc}])@([a-z0-9_]+(?:[.-]+[a-z0-9_]+)*)@[\p{L}\p{M}\p{N}\p{Pc}.-]+[\p{L}\p{M}\p{N}\p{Pc}]+/giu, '@$1')
    .replace(/\s+/gu, ' ')
    .trim()
    .normalize('NFC');
}

/** What the part to find looks like. */
export interface PartToFind {
  /** The status text Herald sends (statusText: the link included). */
  text: string;
  spoilerText: string;
  /** The status the part replies to; null for a thread's first part or a single post. */
  inReplyToId: string | null;
  /** Statuses older than this cannot be the part (the job's scheduled time, less a margin for clocks). */
  notBefore: Date;
}

/** The part among `statuses` (one page of the account's statuses), or null. */
export function findPart(statuses: readonly MastodonStatus[], part: PartToFind): MastodonStatus | null {
  const text = comparable(part.text);
  const cw = comparable(part.spoilerText);
  return (
    statuses.find(
      (s) =>
        (s.inReplyToId ?? null) === part.inReplyToId &&
        (s.createdAt === null || s.createdAt.getTime() >= part.notBefore.getTime()) &&
        comparable(s.spoilerText) === cw &&
        comparable(plainText(s.content)) === text,
    ) ?? null
  );
}

/**
 * Whether a page of statuses (newest first) reaches back past `notBefore`, or is the last page:
 * then older pages cannot hold the part, and the search stops.
 */
export function reachedBack(page: readonly MastodonStatus[], pageSize: number, notBefore: Date): boolean {
  if (page.length < pageSize) return true;
  const oldest = page[page.length - 1].createdAt;
  return oldest !== null && oldest.getTime() < notBefore.getTime();
}

/** How far before the job's scheduled time a status may be dated and still be its part: clocks of two servers differ. */
export const CLOCK_MARGIN_MS = 5 * 60_000;
