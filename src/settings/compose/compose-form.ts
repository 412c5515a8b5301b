import { MASTODON_VISIBILITIES, type MastodonVisibility, type Provider } from '../../vocabulary/vocabulary';
import {
  limitsFor,
  MAX_IMAGES_PER_POST,
  measureFor,
  PLATFORM_LIMITS,
  postedText,
  validateForPlatform,
  validateThreadForPlatform,
  type MediaRuleInfo,
} from '../../posts/platform-rules';
import { MAX_THREAD_PARTS, MIN_THREAD_PARTS } from '../../posts/posts.dto';
import { field, fields, isUuid, rawField } from '../page-input';
import { isTimeZone, zonedToInstant } from '../../common/zoned-time';

/**
 * The composer's form, read and decided without I/O: what was typed, what the buttons ask for,
 * the counters and the preview of each chosen account. The API's services still decide
 * everything that is stored (the page never has a second copy of a rule that refuses a post:
 * the counters and preview use the same functions as the intake, platform-rules.ts).
 */

/** What a composer's button asks for. */
export type ComposeAction =
  | { kind: 'now' }
  | { kind: 'schedule' }
  /** "Add to queue": the next free slot of the posting queue. */
  | { kind: 'queue' }
  | { kind: 'draft' }
  | { kind: 'preview' }
  | { kind: 'card' }
  | { kind: 'upload' }
  | { kind: 'up'; mediaId: string }
  | { kind: 'down'; mediaId: string }
  | { kind: 'remove'; mediaId: string }
  | { kind: 'add-part' }
  /** A thread part moved or removed, by its index among the further parts (0: the post's part 2). */
  | { kind: 'part-up' | 'part-down' | 'part-remove'; index: number }
  | { kind: 'none' };

const SIMPLE_ACTIONS = ['now', 'schedule', 'queue', 'draft', 'preview', 'card', 'upload', 'add-part'] as const;

/**
 * A thread's further part as the composer edits it: text and link. Images a part already has
 * (from the API or the failed-posts page) are kept as they are; the composer adds images to the
 * first part only.
 */
export interface ComposePart {
  text: string;
  link: string;
  media: string[];
}

export interface ComposeValues {
  text: string;
  title: string;
  link: string;
  accounts: string[];
  /** Image ids, in the order they are posted. */
  media: string[];
  /** Alt text typed for each image (by id). */
  alts: Record<string, string>;
  /** Alt text of the image being uploaded with this submit. */
  newAlt: string;
  date: string;
  time: string;
  zone: string;
  deadlineDate: string;
  deadlineTime: string;
  /** The thread's further parts (none: a single post). */
  parts: ComposePart[];
  /** For the chosen Mastodon accounts: who sees the post ('' : each account's own default) and a content warning ('' : none). */
  visibility: MastodonVisibility | '';
  spoilerText: string;
}

/** The most images the form keeps: the most any platform takes (the page offers `imageLimit`). */
export const MAX_FORM_IMAGES = MAX_IMAGES_PER_POST;

/**
 * How many images the composer lets a person add to a post for accounts of these platforms: the
 * smallest of their limits (a post to Bluesky and LinkedIn takes 4, to LinkedIn alone 20), and
 * with no account chosen yet the smallest of every platform's. Pure.
 */
export function imageLimit(providers: readonly Provider[]): number {
  const chosen = providers.length > 0 ? providers : (Object.keys(PLATFORM_LIMITS) as Provider[]);
  return Math.min(...chosen.map((p) => PLATFORM_LIMITS[p].maxImages));
}

export function emptyValues(zone: string): ComposeValues {
  return {
    text: '',
    title: '',
    link: '',
    accounts: [],
    media: [],
    alts: {},
    newAlt: '',
    date: '',
    time: '',
    zone,
    deadlineDate: '',
    deadlineTime: '',
    parts: [],
    visibility: '',
    spoilerText: '',
  };
}

/** The form as sent (urlencoded or multipart: the same fields). `fallbackZone`: the zone when the form has none. */
export function readComposeForm(body: unknown, fallbackZone: string): { values: ComposeValues; action: ComposeAction } {
  const media = [
    ...new Set(
      fields(body, 'media')
        .filter(isUuid)
        .map((id) => id.toLowerCase()),
    ),
  ].slice(0, MAX_FORM_IMAGES);
  const alts: Record<string, string> = {};
  for (const id of media) alts[id] = rawField(body, `alt_${id}`).trim().slice(0, 2000);
  const zone = field(body, 'zone');
  const values: ComposeValues = {
    text: rawField(body, 'text'),
    title: field(body, 'title'),
    link: field(body, 'link'),
    accounts: [
      ...new Set(
        fields(body, 'accounts')
          .filter(isUuid)
          .map((id) => id.toLowerCase()),
      ),
    ].slice(0, 20),
    media,
    alts,
    newAlt: rawField(body, 'newAlt').trim().slice(0, 2000),
    date: field(body, 'date'),
    time: field(body, 'time'),
    zone: isTimeZone(zone) ? zone : fallbackZone,
    deadlineDate: field(body, 'deadlineDate'),
    deadlineTime: field(body, 'deadlineTime'),
    parts: readParts(body),
    visibility: MASTODON_VISIBILITIES.find((v) => v === field(body, 'visibility')) ?? '',
    spoilerText: rawField(body, 'spoilerText').trim().slice(0, 1000),
  };
  return { values, action: parseAction(field(body, 'action')) };
}

/** The thread's parts, as the form numbers them (`partCount`, then `part_text_0`, `part_link_0`, `part_media_0`, …). */
function readParts(body: unknown): ComposePart[] {
  const count = Math.min(MAX_THREAD_PARTS, Math.max(0, Number.parseInt(field(body, 'partCount'), 10) || 0));
  return Array.from({ length: count }, (_, i) => ({
    text: rawField(body, `part_text_${i}`),
    link: field(body, `part_link_${i}`),
    media: [
      ...new Set(
        fields(body, `part_media_${i}`)
          .filter(isUuid)
          .map((id) => id.toLowerCase()),
      ),
    ].slice(0, MAX_FORM_IMAGES),
  }));
}

export function parseAction(value: string): ComposeAction {
  const simple = SIMPLE_ACTIONS.find((a) => a === value);
  if (simple) return { kind: simple };
  const part = /^part-(up|down|remove):(\d{1,2})$/.exec(value);
  if (part) return { kind: `part-${part[1]}` as 'part-up' | 'part-down' | 'part-remove', index: Number(part[2]) };
  const m = /^(up|down|remove):([0-9a-f-]{36})$/i.exec(value);
  if (m && isUuid(m[2])) return { kind: m[1].toLowerCase() as 'up' | 'down' | 'remove', mediaId: m[2].toLowerCase() };
  return { kind: 'none' };
}

/** The images after "move up", "move down" or "remove". */
export function moveMedia(media: readonly string[], action: ComposeAction): string[] {
  const list = [...media];
  if (action.kind !== 'up' && action.kind !== 'down' && action.kind !== 'remove') return list;
  const i = list.indexOf(action.mediaId);
  if (i < 0) return list;
  if (action.kind === 'remove') list.splice(i, 1);
  else {
    const j = action.kind === 'up' ? i - 1 : i + 1;
    if (j >= 0 && j < list.length) [list[i], list[j]] = [list[j], list[i]];
  }
  return list;
}

/**
 * The thread after "add a part", "move up", "move down" or "remove". "Add a part" adds one further
 * part, up to the maximum: on a single post it makes a thread of two (the API's minimum, 1 further
 * part). Removing the last further part leaves none: the post is a single post again (`threadOf`
 * gives null), never a thread the API would refuse.
 */
export function moveParts(parts: readonly ComposePart[], action: ComposeAction): ComposePart[] {
  const list = parts.map((p) => ({ ...p, media: [...p.media] }));
  const empty = (): ComposePart => ({ text: '', link: '', media: [] });
  if (action.kind === 'add-part') {
    const want = Math.max(MIN_THREAD_PARTS, list.length + 1);
    while (list.length < Math.min(want, MAX_THREAD_PARTS)) list.push(empty());
    return list;
  }
  if (action.kind !== 'part-up' && action.kind !== 'part-down' && action.kind !== 'part-remove') return list;
  const i = action.index;
  if (i < 0 || i >= list.length) return list;
  if (action.kind === 'part-remove') list.splice(i, 1);
  else {
    const j = action.kind === 'part-up' ? i - 1 : i + 1;
    if (j >= 0 && j < list.length) [list[i], list[j]] = [list[j], list[i]];
  }
  return list;
}

/** The thread as the API takes it (`thread`), or null for a single post. */
export function threadOf(parts: readonly ComposePart[]): { text: string; link?: string; media?: string[] }[] | null {
  if (parts.length === 0) return null;
  return parts.map((p) => ({
    text: p.text,
    ...(p.link !== '' ? { link: p.link } : {}),
    ...(p.media.length > 0 ? { media: p.media } : {}),
  }));
}

export type When = { ok: true; scheduledAt: string | null; publishBy: string | null } | { ok: false; problem: string };

/**
 * The instants of the form: the time (none for "now": the API's default) and the deadline, from
 * the wall times typed in the chosen zone.
 */
export function instantsOf(values: ComposeValues, now: boolean): When {
  let scheduledAt: string | null = null;
  if (!now) {
    if (values.date === '' || values.time === '')
      return { ok: false, problem: 'choose a date and a time to schedule it (or publish it now)' };
    const at = zonedToInstant(values.date, values.time, values.zone);
    if (!at.ok) return { ok: false, problem: at.problem };
    scheduledAt = at.instant.toISOString();
  }
  let publishBy: string | null = null;
  if (values.deadlineDate !== '' || values.deadlineTime !== '') {
    if (values.deadlineDate === '' || values.deadlineTime === '')
      return { ok: false, problem: 'the deadline needs both a date and a time' };
    const by = zonedToInstant(values.deadlineDate, values.deadlineTime, values.zone);
    if (!by.ok) return { ok: false, problem: `deadline: ${by.problem}` };
    publishBy = by.instant.toISOString();
  }
  return { ok: true, scheduledAt, publishBy };
}

export interface ComposeAccount {
  id: string;
  name: string;
  provider: Provider;
  providerLabel: string;
  /** Its public settings: a Mastodon account's limits are its instance's. */
  config: Record<string, unknown>;
}

/**
 * What a target of the API gets from the form: the account, and for a Mastodon account the
 * visibility and content warning chosen (none when left as they are).
 */
export function targetOf(
  account: Pick<ComposeAccount, 'id' | 'provider'>,
  values: Pick<ComposeValues, 'visibility' | 'spoilerText'>,
): { accountId: string; visibility?: MastodonVisibility; spoilerText?: string } {
  if (account.provider !== 'mastodon') return { accountId: account.id };
  return {
    accountId: account.id,
    ...(values.visibility !== '' ? { visibility: values.visibility } : {}),
    ...(values.spoilerText !== '' ? { spoilerText: values.spoilerText } : {}),
  };
}

export interface AccountPreview {
  accountId: string;
  name: string;
  provider: Provider;
  providerLabel: string;
  /** Measured as the platform measures it. */
  used: number;
  limit: number;
  unit: 'graphemes' | 'characters';
  /** Mastodon: what every link counts as (and the link and content warning count too); null elsewhere. */
  urlLength: number | null;
  /** Mastodon: the content warning shown before the text, and who sees it (null: the account's default). */
  spoilerText: string | null;
  visibility: MastodonVisibility | null;
  over: number;
  /** "12 / 300 characters", "301 / 300 characters: 1 too many": what the live counter says too. */
  counter: string;
  /** The text the platform gets (Bluesky: the link appended when it cannot be a card). */
  text: string;
  /** Why the platform would refuse it, the intake's own sentences; empty when it goes. */
  problems: string[];
  /** Bluesky builds a link card (no images, a link). */
  card: boolean;
  /** Each further part of the thread, counted and checked as the first. */
  parts: PartPreview[];
  /** Why the platform refuses the thread as a whole (LinkedIn has no threads); null when it takes one. */
  threadRefused: string | null;
}

export interface PartPreview {
  /** The part's number as a person counts: the post's own text is part 1. */
  number: number;
  used: number;
  limit: number;
  over: number;
  counter: string;
  text: string;
  problems: string[];
}

/** The counter's sentence (settings.js writes the same one as a person types). */
export function counterText(used: number, limit: number): string {
  const over = used - limit;
  return over > 0 ? `${used} / ${limit} characters: ${over} too many` : `${used} / ${limit} characters`;
}

/**
 * Whether an account of `provider` shows a link card for a post with `images` images and this
 * link: Bluesky does when there is a link and no image (one embed per post: with images, the
 * link goes in the text). The composer fetches a card only when a chosen account shows one.
 */
export function showsLinkCard(provider: Provider, images: number, link: string): boolean {
  return provider === 'bluesky' && images === 0 && link !== '';
}

/** What each chosen account gets, counted and checked as the intake does (platform-rules.ts). */
export function previewFor(
  account: ComposeAccount,
  values: ComposeValues,
  media: readonly MediaRuleInfo[],
  partMedia: (id: string) => MediaRuleInfo | undefined = () => undefined,
): AccountPreview {
  const limits = limitsFor(account.provider, account.config);
  const mastodon = account.provider === 'mastodon';
  const spoilerText = mastodon && values.spoilerText !== '' ? values.spoilerText : null;
  const link = values.link === '' ? null : values.link;
  const used = measureFor(limits, values.text, link, spoilerText);
  const card = showsLinkCard(account.provider, media.length, values.link);
  // Bluesky puts the link in the text when it cannot be a card (with images); the others send it apart.
  const shown = (t: string, l: string | null, images: number) => postedText(account.provider, t, l, images);
  const text = shown(values.text, link, media.length);
  const contents = values.parts.map((p) => ({
    text: p.text,
    link: p.link === '' ? null : p.link,
    media: p.media.map(partMedia).filter((m): m is MediaRuleInfo => m !== undefined),
    spoilerText,
  }));
  const threadRefused = limits.threads || contents.length === 0 ? null : validateThreadForPlatform(account.provider, contents, limits)[0];
  const parts = contents.map((c, i): PartPreview => {
    const partUsed = measureFor(limits, c.text, c.link, spoilerText);
    return {
      number: i + 2,
      used: partUsed,
      limit: limits.maxText,
      over: Math.max(0, partUsed - limits.maxText),
      counter: counterText(partUsed, limits.maxText),
      text: shown(c.text, c.link, c.media.length),
      problems: threadRefused === null ? validateForPlatform(account.provider, c, limits) : [],
    };
  });
  return {
    accountId: account.id,
    name: account.name,
    provider: account.provider,
    providerLabel: account.providerLabel,
    used,
    limit: limits.maxText,
    unit: limits.textUnit,
    urlLength: limits.charactersPerUrl,
    spoilerText,
    visibility: mastodon && values.visibility !== '' ? values.visibility : null,
    over: Math.max(0, used - limits.maxText),
    counter: counterText(used, limits.maxText),
    text,
    problems: validateForPlatform(account.provider, { text: values.text, media, link, spoilerText }, limits),
    card,
    parts,
    threadRefused: threadRefused ?? null,
  };
}

/**
 * The API's message with its labels turned into the names a person chose: `targets.0 (bluesky): …`
 * → `Herald on Bluesky (bluesky): …`, and `job <id> (…)` likewise.
 */
export function withAccountNames(message: string, targets: readonly { label: string; name: string }[]): string {
  let out = message;
  for (const t of targets) out = out.split(`${t.label} (`).join(`${t.name} (`);
  // A thread's part as the page numbers it: `thread.0` is the post's part 2.
  return out.replace(/\bthread\.(\d+)/g, (_, i: string) => `part ${Number(i) + 2}`);
}
