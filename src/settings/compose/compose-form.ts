import type { Provider } from '../../connectors/connector.interface';
import { composeText } from '../../connectors/bluesky/bluesky-post';
import { measureText, PLATFORM_LIMITS, validateForPlatform, type MediaRuleInfo } from '../../posts/platform-rules';
import { field, fields, isUuid, rawField } from '../page-input';
import { isTimeZone, zonedToInstant } from './zoned-time';

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
  | { kind: 'draft' }
  | { kind: 'preview' }
  | { kind: 'card' }
  | { kind: 'upload' }
  | { kind: 'up'; mediaId: string }
  | { kind: 'down'; mediaId: string }
  | { kind: 'remove'; mediaId: string }
  | { kind: 'none' };

const SIMPLE_ACTIONS = ['now', 'schedule', 'draft', 'preview', 'card', 'upload'] as const;

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
}

export const MAX_IMAGES = 4;

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
  ].slice(0, MAX_IMAGES);
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
  };
  return { values, action: parseAction(field(body, 'action')) };
}

export function parseAction(value: string): ComposeAction {
  const simple = SIMPLE_ACTIONS.find((a) => a === value);
  if (simple) return { kind: simple };
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
  over: number;
  /** "12 / 300 characters", "301 / 300 characters: 1 too many": what the live counter says too. */
  counter: string;
  /** The text the platform gets (Bluesky: the link appended when it cannot be a card). */
  text: string;
  /** Why the platform would refuse it, the intake's own sentences; empty when it goes. */
  problems: string[];
  /** Bluesky builds a link card (no images, a link). */
  card: boolean;
}

/** The counter's sentence (settings.js writes the same one as a person types). */
export function counterText(used: number, limit: number): string {
  const over = used - limit;
  return over > 0 ? `${used} / ${limit} characters: ${over} too many` : `${used} / ${limit} characters`;
}

/** What each chosen account gets, counted and checked as the intake does (platform-rules.ts). */
export function previewFor(account: ComposeAccount, values: ComposeValues, media: readonly MediaRuleInfo[]): AccountPreview {
  const limits = PLATFORM_LIMITS[account.provider];
  const used = measureText(values.text, limits.textUnit);
  const link = values.link === '' ? null : values.link;
  const card = account.provider === 'bluesky' && media.length === 0 && link !== null;
  // Bluesky puts the link in the text when it cannot be a card (with images); the others send it apart.
  const text = account.provider === 'bluesky' ? composeText(values.text, link, media.length > 0) : values.text;
  return {
    accountId: account.id,
    name: account.name,
    provider: account.provider,
    providerLabel: account.providerLabel,
    used,
    limit: limits.maxText,
    unit: limits.textUnit,
    over: Math.max(0, used - limits.maxText),
    counter: counterText(used, limits.maxText),
    text,
    problems: validateForPlatform(account.provider, { text: values.text, media, link }),
    card,
  };
}

/**
 * The API's message with its labels turned into the names a person chose: `targets.0 (bluesky): …`
 * → `Herald on Bluesky (bluesky): …`, and `job <id> (…)` likewise.
 */
export function withAccountNames(message: string, targets: readonly { label: string; name: string }[]): string {
  let out = message;
  for (const t of targets) out = out.split(`${t.label} (`).join(`${t.name} (`);
  return out;
}
