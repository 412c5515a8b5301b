/**
 * Text as a Mastodon instance counts it, and as Herald posts it. Pure functions, no I/O.
 *
 * An instance measures a status by its user-perceived characters (extended grapheme clusters: a
 * family emoji joined with ZWJ, a flag, a letter with combining accents each count as one) after
 * two substitutions, and adds the content warning:
 * - every http(s) link counts as the instance's `characters_reserved_per_url` (23 on Mastodon,
 *   read from `/api/v2/instance`), however long it is;
 * - a mention of an account on another server, `@ada@example.social`, counts as `@ada`: the
 *   server part is not shown, so it is not counted;
 * - the content warning (`spoiler_text`) is counted with the text, as one string.
 * The limit is the instance's own `max_characters` (500 on most instances).
 */

/** The count a URL gets when the instance has not said (Mastodon's own value). */
export const DEFAULT_CHARACTERS_PER_URL = 23;

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

function countGraphemes(text: string): number {
  let n = 0;
  for (const _ of graphemes.segment(text)) n++;
  return n;
}

/** A letter, a mark, a digit or a connector (`_`): a "word" character in any script. */
const WORD = '\\p{L}\\p{M}\\p{N}\\p{Pc}';

/**
 * An http(s) link as the instance recognises one: the scheme, a host name with at least one dot
 * (or an IPv4 address), an optional port, then a path, query or fragment up to the next space.
 * Only where a link can start: at the beginning, or after a character that is not a letter, a
 * digit, `@`, `$` or `#` (`xhttp://…` and `@https://…` are not links). Trailing punctuation is
 * trimmed by `trimLinkEnd`: "see https://example.com/a." links to `/a`.
 */
const LINK = new RegExp(`(^|[^${WORD}@$#＠＃])(https?://[${WORD}-]+(?:\\.[${WORD}-]+)+(?::\\d{1,5})?(?:[/?#][^\\s]*)?)`, 'giu');

/**
 * A mention: `@name` or `@name@server`, not inside a word, an address or a path (`a@b`, `=@x`,
 * `/@x` are not mentions). Names are letters, digits and `_`, with single `.` or `-` inside.
 */
const MENTION = new RegExp(`(?<![=/${WORD}])@([a-z0-9_]+(?:[.-]+[a-z0-9_]+)*)(?:@[${WORD}.-]+[${WORD}]+)?`, 'giu');

/** Characters a link does not end with: they belong to the sentence around it. */
const TRAILING = /[.,:;!?'"’”…*]+$/u;

/** A link without the punctuation that ends the sentence around it, and without an unbalanced closing parenthesis. */
export function trimLinkEnd(link: string): string {
  let out = link;
  for (;;) {
    const before = out;
    out = out.replace(TRAILING, '');
    if (out.endsWith(')') && count(out, '(') < count(out, ')')) out = out.slice(0, -1);
    if (out === before) return out;
  }
}

function count(text: string, ch: string): number {
  let n = 0;
  for (const c of text) if (c === ch) n++;
  return n;
}

/** The links in `text`, each once per occurrence, as the instance would link them. */
export function linksIn(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(LINK)) out.push(trimLinkEnd(m[2]));
  return out;
}

/** `text` with each link replaced by `perUrl` placeholder characters and each remote mention by its local part. */
export function countableText(text: string, perUrl: number): string {
  const placeholder = 'x'.repeat(Math.max(0, perUrl));
  const linked = text.replace(LINK, (_all, before: string, url: string) => {
    const kept = trimLinkEnd(url);
    return `${before}${placeholder}${url.slice(kept.length)}`;
  });
  return linked.replace(MENTION, (_all, name: string) => `@${name}`);
}

/**
 * The length of a status as the instance measures it (see the file's comment): the content
 * warning and the countable text, joined, in grapheme clusters.
 */
export function countStatus(text: string, spoilerText: string | null = null, perUrl = DEFAULT_CHARACTERS_PER_URL): number {
  return countGraphemes(`${spoilerText ?? ''}${countableText(text, perUrl)}`);
}

/**
 * The text of a status as Herald posts it: Mastodon has no separate link field (it shows a
 * preview card for a link in the text), so the post's `link` is appended on a paragraph of its
 * own, unless the text already holds it.
 */
export function statusText(text: string, link: string | null): string {
  if (link === null || link === '' || text.includes(link)) return text;
  return text.trim() === '' ? link : `${text.trimEnd()}\n\n${link}`;
}

/**
 * The `Idempotency-Key` of one status: the job's key for a single post; for a thread, the job's
 * key and the part's number (`<key>/part-2`), so no two parts of a job, and no part of two jobs,
 * share one. A requeue after an edit gives the job a new key, and with it every part.
 */
export function partIdempotencyKey(jobKey: string, index: number, thread: boolean): string {
  return thread ? `${jobKey}/part-${index + 1}` : jobKey;
}
