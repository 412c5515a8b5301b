import { decodeHTML, decodeHTMLAttribute } from 'entities';

/**
 * Reads a link card's data from the head of a page: Open Graph tags (`og:title`,
 * `og:description`, `og:image`), then Twitter card tags, then `<title>` and
 * `<meta name="description">`. Pure, tolerant of broken markup, and linear in the page's length
 * whatever the page holds.
 *
 * The page is chosen by whoever writes a post, so it may be built to hurt: an unclosed tag
 * repeated a million times, a megabyte-long attribute, a `<title>` that never ends. Regular
 * expressions over the page text backtrack on such input (minutes of CPU on the one event loop
 * that also serves the API and every delivery), and general HTML parsers are not safe either:
 * htmlparser2 keeps its open-element stack in an array it `unshift`s and searches on every tag,
 * 6 s for 1.2 MB of `<div>`s here. So this is a small scanner that moves forward only: every
 * character is looked at a bounded number of times, and input that ends inside a tag, a
 * comment, a quoted value or the title ends the scan (nothing after it could complete).
 */

export interface OpenGraph {
  title: string | null;
  description: string | null;
  /** Absolute http(s) URL of the preview image, resolved against the page URL. */
  image: string | null;
}

/** Bluesky's own client cuts card texts about here; longer ones only bloat the record. */
const MAX_TITLE = 300;
const MAX_DESCRIPTION = 1000;
/** Attribute values and the title are cut to this before decoding: nothing longer is used. */
const MAX_RAW_VALUE = 8 * 1024;
/** The meta keys read; anything else on the page is skipped without being stored. */
const KEYS = new Set([
  'og:title',
  'og:description',
  'og:image',
  'og:image:url',
  'og:image:secure_url',
  'twitter:title',
  'twitter:description',
  'twitter:image',
  'description',
]);

/** HTML entities decoded as a browser would (named, decimal, hex), via the `entities` package. */
export function decodeEntities(text: string): string {
  return decodeHTML(text);
}

const isNameStart = (c: number): boolean => (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a);

/*
 * The scanner's steps as sticky regular expressions: each is one character class with one
 * quantifier, so it cannot backtrack (it consumes a run and stops), and it runs as native code —
 * several times faster than a character loop in JavaScript on a loaded machine. Used with
 * `lastIndex` + `test`, which allocates nothing.
 */
/** HTML whitespace. */
const SPACES = /[ \t\n\f\r]*/y;
/** Whitespace and stray slashes between attributes (`<meta / a=b />`). */
const GAP = /[ \t\n\f\r/]*/y;
/** A tag name runs to whitespace, '>' or '/'. */
const TAG_NAME = /[^ \t\n\f\r>/]*/y;
/** An attribute name runs to whitespace, '=', '>' or '/'. */
const ATTRIBUTE_NAME = /[^ \t\n\f\r=>/]*/y;
/** An unquoted value runs to whitespace or '>'. */
const UNQUOTED = /[^ \t\n\f\r>]*/y;

/** Where the sticky `pattern` stops matching from `from`. */
function skip(pattern: RegExp, text: string, from: number): number {
  pattern.lastIndex = from;
  pattern.test(text);
  return pattern.lastIndex;
}

/** Where a closing tag `</name` starts at or after `from`, case-insensitively, or -1. */
function closingTag(text: string, name: string, from: number): number {
  const pattern = CLOSING_TAGS.get(name) ?? new RegExp(`</${name}`, 'gi');
  pattern.lastIndex = from;
  return pattern.test(text) ? pattern.lastIndex - name.length - 2 : -1;
}

const END_OF_HEAD = /<\/head|<body/i;

const META_ATTRIBUTES: ReadonlySet<string> = new Set(['property', 'name', 'content']);
const NO_VALUES: ReadonlyMap<string, string> = new Map();
/** The longest tag name that means anything here (noscript, template, textarea). */
const MAX_TAG_NAME = 8;
const MAX_ATTRIBUTES = 256;

interface Tag {
  /** Lower-cased tag name. */
  name: string;
  closing: boolean;
  /** property, name and content of a <meta>; empty for any other tag. */
  attributes: ReadonlyMap<string, string>;
  /** Index just after the tag's `>`. */
  end: number;
}

/**
 * The tag starting at `lt` (a `<`), or 'text' when `<` does not start a tag, or null when the
 * input ends before the tag does. Attributes are kept only for `<meta>` (property, name,
 * content), each value cut to MAX_RAW_VALUE; the first occurrence of a name wins, as in browsers.
 */
function readTag(html: string, lt: number): Tag | 'text' | null {
  const n = html.length;
  let i = lt + 1;
  const closing = html.charCodeAt(i) === 0x2f; // '/'
  if (closing) i++;
  if (i >= n) return null;
  if (!isNameStart(html.charCodeAt(i))) return 'text';
  const nameStart = i;
  i = skip(TAG_NAME, html, i);
  // Only short names matter (meta, title, head, body, script, noscript...): no string is made
  // for the others, so a page of a million made-up tags costs a scan, not a million allocations.
  const name = i - nameStart <= MAX_TAG_NAME ? html.slice(nameStart, i).toLowerCase() : '';
  const attributes: Map<string, string> | null = name === 'meta' && !closing ? new Map() : null;
  for (let count = 0; ; count++) {
    // Real tags have a handful of attributes; one with hundreds is built to make this loop spin.
    // Treated like input that ends inside a tag: the scan stops here.
    if (count > MAX_ATTRIBUTES) return null;
    i = skip(GAP, html, i);
    if (i >= n) return null;
    if (html.charCodeAt(i) === 0x3e) return { name, closing, attributes: attributes ?? NO_VALUES, end: i + 1 }; // '>'
    const attrStart = i;
    // An attribute name is at least one character (a stray '=' is one), so every turn moves on.
    i = Math.max(skip(ATTRIBUTE_NAME, html, i), i + 1);
    const attrEnd = i;
    i = skip(SPACES, html, i);
    let valueStart = i;
    let valueEnd = i;
    if (html.charCodeAt(i) === 0x3d) {
      i = skip(SPACES, html, i + 1);
      if (i >= n) return null;
      const q = html.charCodeAt(i);
      if (q === 0x22 || q === 0x27) {
        const close = html.indexOf(html[i], i + 1);
        if (close < 0) return null;
        valueStart = i + 1;
        valueEnd = close;
        i = close + 1;
      } else {
        valueStart = i;
        i = skip(UNQUOTED, html, i);
        valueEnd = i;
      }
    }
    // property (8), name (4), content (7): other lengths are not even sliced.
    const length = attrEnd - attrStart;
    if (attributes !== null && (length === 4 || length === 7 || length === 8)) {
      const attrName = html.slice(attrStart, attrEnd).toLowerCase();
      if (META_ATTRIBUTES.has(attrName) && !attributes.has(attrName)) {
        attributes.set(attrName, html.slice(valueStart, Math.min(valueEnd, valueStart + MAX_RAW_VALUE)));
      }
    }
  }
}

/** Elements whose content is not markup: tags inside them are not tags. */
const RAW_TEXT = new Set(['script', 'style', 'template', 'noscript', 'textarea']);
const CLOSING_TAGS = new Map([...RAW_TEXT, 'title'].map((name) => [name, new RegExp(`</${name}`, 'gi')]));

/** The raw (undecoded) values found in a page's head. */
interface HeadValues {
  meta: Map<string, string>;
  title: string | null;
}

/** How much of the page is scanned between two chances for the event loop to run (async parse). */
const SLICE_CHARS = 128 * 1024;

/**
 * The scan, as a generator that pauses about every SLICE_CHARS characters: the synchronous
 * parse runs it to the end at once, the asynchronous one lets the event loop (the API, health
 * checks, other deliveries) run between slices. Returns the values found.
 */
function* scanHead(html: string): Generator<void, HeadValues, void> {
  const meta = new Map<string, string>();
  let title: string | null = null;
  let i = 0;
  let pauseAt = SLICE_CHARS;
  while (i < html.length) {
    if (i >= pauseAt) {
      yield;
      pauseAt = i + SLICE_CHARS;
    }
    const lt = html.indexOf('<', i);
    if (lt < 0) break;
    const next = html.charCodeAt(lt + 1);
    // A '<' that starts nothing (text like "a < b"): the cheapest path, for pages made of them.
    if (!isNameStart(next) && next !== 0x2f && next !== 0x21 && next !== 0x3f) {
      i = lt + 1;
      continue;
    }
    if (html.startsWith('<!--', lt)) {
      const end = html.indexOf('-->', lt + 4);
      if (end < 0) break;
      i = end + 3;
      continue;
    }
    if (html.charCodeAt(lt + 1) === 0x21 || html.charCodeAt(lt + 1) === 0x3f) {
      // <!doctype …>, <![CDATA[ …, <?xml …?>: skipped to their '>'.
      const end = html.indexOf('>', lt + 2);
      if (end < 0) break;
      i = end + 1;
      continue;
    }
    const tag = readTag(html, lt);
    if (tag === null) break;
    if (tag === 'text') {
      i = lt + 1;
      continue;
    }
    i = tag.end;
    if (tag.closing) {
      if (tag.name === 'head') break;
      continue;
    }
    if (tag.name === 'body') break;
    if (tag.name === 'meta') {
      const key = (tag.attributes.get('property') ?? tag.attributes.get('name'))?.toLowerCase().trim();
      const content = tag.attributes.get('content');
      // The first occurrence wins (pages list og:image variants largest first).
      if (key !== undefined && content !== undefined && KEYS.has(key) && !meta.has(key)) meta.set(key, content);
    } else if (tag.name === 'title' || RAW_TEXT.has(tag.name)) {
      const close = closingTag(html, tag.name, i);
      if (tag.name === 'title' && title === null)
        title = html.slice(i, close < 0 ? Math.min(html.length, i + MAX_RAW_VALUE) : Math.min(close, i + MAX_RAW_VALUE));
      if (close < 0) break;
      i = close;
    }
  }
  return { meta, title };
}

function clean(value: string | undefined | null, max: number): string | null {
  if (value === undefined || value === null) return null;
  const text = value.replace(/\s+/g, ' ').trim();
  if (text === '') return null;
  const chars = [...text];
  return chars.length > max ? `${chars.slice(0, max - 1).join('')}…` : text;
}

function absoluteHttpUrl(value: string | undefined, base: string): string | null {
  if (value === undefined || value.trim() === '') return null;
  try {
    const url = new URL(value.trim(), base);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
  } catch {
    return null;
  }
}

/** Runs a scan to its end at once. */
function scanAll(html: string): HeadValues {
  const steps = scanHead(html);
  for (;;) {
    const step = steps.next();
    if (step.done === true) return step.value;
  }
}

export function parseOpenGraph(html: string, pageUrl: string): OpenGraph {
  return toOpenGraph(scanAll(html), pageUrl);
}

/**
 * The same as parseOpenGraph, giving the event loop a turn between slices of the page: on a
 * loaded machine even linear work over 2 MB is tens of milliseconds, and the process also
 * answers health checks and the API.
 */
export async function parseOpenGraphYielding(html: string, pageUrl: string): Promise<OpenGraph> {
  const steps = scanHead(html);
  for (;;) {
    const step = steps.next();
    if (step.done === true) return toOpenGraph(step.value, pageUrl);
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

function toOpenGraph({ meta, title }: HeadValues, pageUrl: string): OpenGraph {
  const attr = (key: string): string | undefined => {
    const raw = meta.get(key);
    return raw === undefined ? undefined : decodeHTMLAttribute(raw);
  };
  return {
    title: clean(attr('og:title') ?? attr('twitter:title') ?? (title === null ? null : decodeHTML(title)), MAX_TITLE),
    description: clean(attr('og:description') ?? attr('twitter:description') ?? attr('description'), MAX_DESCRIPTION),
    image: absoluteHttpUrl(attr('og:image') ?? attr('og:image:url') ?? attr('og:image:secure_url') ?? attr('twitter:image'), pageUrl),
  };
}

/**
 * Watches a page as it streams in and says when its head is over (`</head>` or `<body`), so the
 * reader stops downloading there. Keeps the text read so far for `parseOpenGraph`. The search
 * only looks at each new piece (plus the few characters before it, for a marker split between
 * pieces), so watching is linear too.
 */
export class HeadWatcher {
  private readonly parts: string[] = [];
  private carry = '';
  done = false;

  /** Adds a piece of the page; true once the head is over (the rest need not be read). */
  write(text: string): boolean {
    if (this.done) return true;
    this.parts.push(text);
    // The marker inside this piece, or across the edge with the previous one: no concatenation
    // of the whole piece (a copy of 64 KB per chunk, for the garbage collector to clear).
    if (END_OF_HEAD.test(text) || END_OF_HEAD.test(this.carry + text.slice(0, 5))) this.done = true;
    this.carry = (this.carry + text.slice(-5)).slice(-5);
    return this.done;
  }

  text(): string {
    return this.parts.join('');
  }
}
