import { composeText } from '../connectors/bluesky/bluesky-post';
import { LINKEDIN_MAX_IMAGES } from '../connectors/linkedin/linkedin-content';
import type { Provider } from '../connectors/connector.interface';
import { limitsOf } from '../connectors/mastodon/mastodon-config';
import { countStatus, DEFAULT_CHARACTERS_PER_URL, statusText } from '../connectors/mastodon/mastodon-text';

/** What the rules need to know about one image (a MediaInfo fits). */
export interface MediaRuleInfo {
  id: string;
  alt: string;
  mimeType: string;
  width: number | null;
  height: number | null;
}

export interface PlatformContent {
  text: string;
  media: readonly MediaRuleInfo[];
  link?: string | null;
  /** Mastodon's content warning: the instance counts it with the text. */
  spoilerText?: string | null;
}

/** How a platform measures text. */
export type TextUnit = 'graphemes' | 'characters';

export interface PlatformLimits {
  maxText: number;
  textUnit: TextUnit;
  /** Bluesky also caps the record's text at 3,000 UTF-8 bytes (lexicon app/bsky/feed/post.json). */
  maxTextBytes: number | null;
  maxImages: number;
  /** MIME types the platform takes as images; null: any type Herald accepts. */
  imageTypes: readonly string[] | null;
  /** Largest image in pixels (width × height), when the platform documents one. */
  maxPixels: number | null;
  /** Whether the platform publishes threads (a post's further parts); false: refused at intake. */
  threads: boolean;
  /**
   * Mastodon: every link counts as this many characters, a remote mention as its local part, and
   * the content warning with the text (connectors/mastodon/mastodon-text.ts); null elsewhere.
   */
  charactersPerUrl: number | null;
  /** Whose limit `maxText` is, for messages (a Mastodon instance's own); null: the platform's. */
  limitSource: string | null;
}

/**
 * One row per platform, from its documentation (limits listed in docs/api.md "Limits"):
 * - Bluesky: `app.bsky.feed.post` text ≤ 300 graphemes and ≤ 3,000 bytes; ≤ 4 images
 *   (`app.bsky.embed.images`).
 * - LinkedIn: commentary ≤ 3,000 characters; images JPG, PNG, GIF under 36,152,320 pixels.
 *   "Characters" are counted as Unicode code points (what a person counts, and never less
 *   than LinkedIn's count if it counted UTF-16 units only for astral characters — we chose
 *   the reading that does not reject text a person sees as 3,000 characters). WebP is not a
 *   LinkedIn image type: the connector converts it, so it is accepted here. Up to 20 images:
 *   one is a single-image post, 2 to 20 a multi-image post (linkedin-content.ts).
 * - Mastodon: each instance's own `max_characters` (500 on most), links counted as 23, the
 *   content warning counted with the text (limitsFor, connectors/mastodon/mastodon-text.ts); at
 *   most 4 images (the instance's `max_media_attachments`, never more than Herald's 4).
 * - Webhook: Herald's generic 10,000 characters (the DTO checks it too), ≤ 4 images: the limit
 *   webhooks have always had, which receivers may rely on; no platform reason to change it.
 */
export const PLATFORM_LIMITS: Record<Provider, PlatformLimits> = {
  bluesky: {
    maxText: 300,
    textUnit: 'graphemes',
    maxTextBytes: 3000,
    maxImages: 4,
    imageTypes: null,
    maxPixels: null,
    threads: true,
    charactersPerUrl: null,
    limitSource: null,
  },
  linkedin: {
    maxText: 3000,
    textUnit: 'characters',
    maxTextBytes: null,
    maxImages: LINKEDIN_MAX_IMAGES,
    imageTypes: null,
    maxPixels: 36_152_320,
    threads: false,
    charactersPerUrl: null,
    limitSource: null,
  },
  // Each instance has its own limits (limitsFor reads them from the account); these are
  // Mastodon's usual ones, counted with when an instance's are not known.
  mastodon: {
    maxText: 500,
    textUnit: 'graphemes',
    maxTextBytes: null,
    maxImages: 4,
    imageTypes: null,
    maxPixels: null,
    threads: true,
    charactersPerUrl: DEFAULT_CHARACTERS_PER_URL,
    limitSource: null,
  },
  webhook: {
    maxText: 10_000,
    textUnit: 'characters',
    maxTextBytes: null,
    maxImages: 4,
    imageTypes: null,
    maxPixels: null,
    threads: true,
    charactersPerUrl: null,
    limitSource: null,
  },
};

/** The host of an instance URL as stored, or null. */
function hostOf(url: unknown): string | null {
  if (typeof url !== 'string') return null;
  try {
    return new URL(url).host;
  } catch {
    return null;
  }
}

/**
 * The limits of one account: its platform's, and for a Mastodon account its instance's own
 * (read from `/api/v2/instance` when the account was connected or last checked, kept in its
 * config): `max_characters`, the length every link counts as, the most images per status (never
 * more than Herald's 4) and the largest image. An instance whose limits are not known yet is
 * counted with Mastodon's usual ones (500 characters, links as 23). Pure.
 */
export function limitsFor(provider: Provider, config?: Record<string, unknown> | null): PlatformLimits {
  const base = PLATFORM_LIMITS[provider];
  if (provider !== 'mastodon' || !config) return base;
  const instance = limitsOf(config);
  const known = config.limits !== undefined && config.limits !== null;
  const host = hostOf(config.instanceUrl);
  return {
    ...base,
    maxText: instance.maxCharacters,
    charactersPerUrl: instance.charactersReservedPerUrl,
    maxImages: Math.min(base.maxImages, instance.maxMediaAttachments),
    maxPixels: instance.imageMatrixLimit,
    limitSource: known && host ? `${host}'s own limit` : "Mastodon's usual limit: the instance's own is read when the account is checked",
  };
}

/**
 * The most images any platform takes in one post (LinkedIn's 20): the API's own cap on `media`
 * before the platforms' rules, which then refuse a post per target (`targets.0 (bluesky): 5
 * images attached, the limit is 4`).
 */
export const MAX_IMAGES_PER_POST = Math.max(...Object.values(PLATFORM_LIMITS).map((l) => l.maxImages));

/**
 * Why LinkedIn refuses a thread at intake rather than publishing it some other way: its Posts API
 * (POST /rest/posts) makes one post and defines no thread, series or reply-to-own-post; the
 * nearest thing, comments under the post (socialActions), is another product with its own
 * permission and reads as a conversation, not as the author's thread. Publishing only the first
 * part would drop what the person wrote, so the whole target is refused with a 400 instead.
 */
export const LINKEDIN_THREAD_REFUSAL =
  'LinkedIn has no threads (its Posts API publishes single posts): send the thread to Bluesky, Mastodon or a webhook, and give LinkedIn its own post without `thread`';

const graphemeSegmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/**
 * User-perceived characters (extended grapheme clusters, UAX #29): a family emoji joined with
 * ZWJ, a flag (two regional indicators), an emoji with a skin tone, or a letter with combining
 * accents each count as one — as Bluesky counts them.
 */
export function countGraphemes(text: string): number {
  let n = 0;
  for (const _ of graphemeSegmenter.segment(text)) n++;
  return n;
}

/** Unicode code points: an astral character (most emoji) is one, not two UTF-16 units. */
export function countCodePoints(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

export function measureText(text: string, unit: TextUnit): number {
  return unit === 'graphemes' ? countGraphemes(text) : countCodePoints(text);
}

/**
 * The length of a text as the account's platform counts it: a Mastodon instance counts the
 * status it gets (the link appended, every link as `charactersPerUrl`) and the content warning
 * with it; the others count the text in their unit.
 */
export function measureFor(limits: PlatformLimits, text: string, link: string | null = null, spoilerText: string | null = null): number {
  if (limits.charactersPerUrl !== null) return countStatus(statusText(text, link), spoilerText, limits.charactersPerUrl);
  return measureText(text, limits.textUnit);
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/**
 * The problems that stop `content` from being published on `provider`, each a sentence a person
 * can act on (without the target prefix: the caller knows which target it checks). Pure.
 */
export function validateForPlatform(
  provider: Provider,
  content: PlatformContent,
  limits: PlatformLimits = PLATFORM_LIMITS[provider],
): string[] {
  const problems: string[] = [];
  if (limits.charactersPerUrl !== null) {
    const length = measureFor(limits, content.text, content.link ?? null, content.spoilerText ?? null);
    if (length > limits.maxText) {
      const parts = [
        `every link as ${limits.charactersPerUrl}`,
        ...(content.link ? ['the link included'] : []),
        ...(content.spoilerText ? ['the content warning included'] : []),
      ];
      problems.push(
        `text is ${plural(length, 'character')} as the instance counts them (${parts.join(', ')}), the limit is ${limits.maxText} (${limits.limitSource ?? "the instance's"})`,
      );
    }
  } else {
    const length = measureText(content.text, limits.textUnit);
    if (length > limits.maxText) {
      problems.push(`text is ${plural(length, limits.textUnit.slice(0, -1))}, the limit is ${limits.maxText}`);
    }
  }
  if (limits.maxTextBytes !== null) {
    const bytes = Buffer.byteLength(content.text, 'utf8');
    if (bytes > limits.maxTextBytes) problems.push(`text is ${bytes} bytes in UTF-8, the limit is ${limits.maxTextBytes}`);
  }
  if (provider !== 'webhook' && content.text.trim() === '' && content.media.length === 0 && !content.link) {
    problems.push('text is empty and there is no image or link to post instead');
  }
  if (content.media.length > limits.maxImages) {
    problems.push(`${plural(content.media.length, 'image')} attached, the limit is ${limits.maxImages}`);
  }
  content.media.forEach((m, i) => {
    if (m.alt.trim() === '') {
      problems.push(`media.${i} (${m.id}) has no alt text; add it with PATCH /v1/media/${m.id} { "alt": "…" }`);
    }
    if (limits.imageTypes !== null && !limits.imageTypes.includes(m.mimeType)) {
      problems.push(`media.${i} (${m.id}) is ${m.mimeType}, accepted types are ${limits.imageTypes.join(', ')}`);
    }
    if (limits.maxPixels !== null && m.width !== null && m.height !== null && m.width * m.height > limits.maxPixels) {
      problems.push(`media.${i} (${m.id}) is ${m.width}×${m.height} pixels, the limit is ${limits.maxPixels} pixels`);
    }
  });
  return problems;
}

/**
 * The problems of a thread's further parts on `provider`: a platform without threads refuses the
 * thread as a whole; otherwise each part is checked like the first (`validateForPlatform`), its
 * problems named by the part's field path: `thread.1: text is 301 graphemes, the limit is 300`.
 * Pure.
 */
export function validateThreadForPlatform(
  provider: Provider,
  parts: readonly PlatformContent[],
  limits: PlatformLimits = PLATFORM_LIMITS[provider],
): string[] {
  if (parts.length === 0) return [];
  if (!limits.threads) return [`thread: ${LINKEDIN_THREAD_REFUSAL}`];
  return parts.flatMap((part, i) => validateForPlatform(provider, part, limits).map((p) => `thread.${i}: ${p}`));
}

/**
 * The text `provider` gets for a post with this text, link and number of images: Bluesky puts the
 * link in the text when it cannot be a card (a post with images: one embed per post,
 * bluesky-post.ts composeText); Mastodon always (it has no link field: the instance shows a card
 * for a link in the text, mastodon-text.ts statusText); the others send the link apart. Pure.
 */
export function postedText(provider: Provider, text: string, link: string | null, images: number): string {
  if (provider === 'mastodon') return statusText(text, link);
  return provider === 'bluesky' ? composeText(text, link, images > 0) : text;
}

export class PlatformRuleError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('; '));
    this.name = 'PlatformRuleError';
  }
}

/**
 * The throwing variant, with the target named in every problem:
 * `targets.1 (bluesky): text is 301 graphemes, the limit is 300`.
 */
export function assertValidForPlatform(label: string, provider: Provider, content: PlatformContent): void {
  const problems = validateForPlatform(provider, content);
  if (problems.length > 0) throw new PlatformRuleError(problems.map((p) => `${label} (${provider}): ${p}`));
}
