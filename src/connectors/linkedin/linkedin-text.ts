/**
 * LinkedIn's "little" text format (Posts API `commentary`): these characters are markup and
 * must be backslash-escaped to appear as themselves; an unescaped one can make LinkedIn drop
 * the rest of the text (learn.microsoft.com/linkedin/marketing/community-management/shares/little-text-format).
 */
const RESERVED = /[\\|{}@[\]()<>#*_~]/g;

/**
 * Escapes `text` for `commentary`. A `#word` at the start or after a space becomes a LinkedIn
 * hashtag (`{hashtag|\#|word}`), as a person typing it means; every other reserved character is
 * escaped, so no text can form a mention or other markup by accident.
 */
export function toLittleText(text: string): string {
  const parts: string[] = [];
  const hashtag = /(^|\s)#([\p{L}\p{N}]+)/gu;
  let last = 0;
  for (const m of text.matchAll(hashtag)) {
    const start = m.index + m[1].length;
    parts.push(text.slice(last, start).replace(RESERVED, '\\$&'));
    parts.push(`{hashtag|\\#|${m[2]}}`);
    last = start + 1 + m[2].length;
  }
  parts.push(text.slice(last).replace(RESERVED, '\\$&'));
  return parts.join('');
}

/** The text a reader sees for `commentary` (used by tests and the fake to compare). */
export function fromLittleText(commentary: string): string {
  return commentary.replace(/\{hashtag\|\\#\|([^}]*)\}/g, '#$1').replace(/\\([\\|{}@[\]()<>#*_~])/g, '$1');
}
