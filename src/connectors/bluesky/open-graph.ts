/**
 * Reads a link card's data from a page's HTML: Open Graph tags (`og:title`, `og:description`,
 * `og:image`), then Twitter card tags, then `<title>` and `<meta name="description">`. Pure and
 * tolerant: a regular expression over `<meta>` tags rather than an HTML parser, because only a
 * handful of attributes in the document's head matter and real pages are rarely well-formed.
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

const NAMED_ENTITIES: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };

export function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, (whole, name: string) => {
    if (name[0] === '#') {
      const code = name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
      return Number.isInteger(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return NAMED_ENTITIES[name.toLowerCase()] ?? whole;
  });
}

function attributes(tag: string): Map<string, string> {
  const attrs = new Map<string, string>();
  const pattern = /([a-zA-Z_:][-a-zA-Z0-9_:.]*)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))/g;
  for (const m of tag.matchAll(pattern)) attrs.set(m[1]!.toLowerCase(), decodeEntities(m[2] ?? m[3] ?? m[4] ?? ''));
  return attrs;
}

function clean(value: string | undefined, max: number): string | null {
  if (value === undefined) return null;
  const text = value.replace(/\s+/g, ' ').trim();
  if (text === '') return null;
  return [...text].length > max ? `${[...text].slice(0, max - 1).join('')}…` : text;
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

export function parseOpenGraph(html: string, pageUrl: string): OpenGraph {
  const meta = new Map<string, string>();
  for (const m of html.matchAll(/<meta\b[^>]*>/gi)) {
    const attrs = attributes(m[0]);
    const key = (attrs.get('property') ?? attrs.get('name'))?.toLowerCase();
    const content = attrs.get('content');
    // The first occurrence wins (pages list og:image variants largest first).
    if (key !== undefined && content !== undefined && !meta.has(key)) meta.set(key, content);
  }
  const titleTag = /<title\b[^>]*>([\s\S]*?)<\/title>/i.exec(html)?.[1];
  return {
    title: clean(meta.get('og:title') ?? meta.get('twitter:title') ?? (titleTag === undefined ? undefined : decodeEntities(titleTag)), MAX_TITLE),
    description: clean(meta.get('og:description') ?? meta.get('twitter:description') ?? meta.get('description'), MAX_DESCRIPTION),
    image: absoluteHttpUrl(meta.get('og:image') ?? meta.get('og:image:url') ?? meta.get('og:image:secure_url') ?? meta.get('twitter:image'), pageUrl),
  };
}
