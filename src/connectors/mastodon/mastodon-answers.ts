import type { MastodonLimits } from './mastodon-config';
import { readLimits } from './mastodon-config';

/**
 * The instance's answers Herald reads, parsed leniently and checked field by field (an instance
 * is a server a workspace chose: nothing it sends is trusted to have a shape). Pure.
 */

export function parseJson(body: Buffer | string): unknown {
  try {
    return JSON.parse(typeof body === 'string' ? body : body.toString('utf8')) as unknown;
  } catch {
    return null;
  }
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

/** Who a token posts as (`GET /api/v1/accounts/verify_credentials`, an Account). */
export interface MastodonAccount {
  id: string;
  username: string;
  displayName: string;
  url: string | null;
}

export function parseAccount(body: unknown): MastodonAccount | null {
  const a = record(body);
  const id = str(a.id);
  const username = str(a.username);
  if (id === null || username === null) return null;
  return { id, username, displayName: typeof a.display_name === 'string' ? a.display_name : '', url: str(a.url) };
}

/**
 * The limits in `GET /api/v2/instance`: `configuration.statuses.max_characters`,
 * `characters_reserved_per_url`, `max_media_attachments`, and
 * `configuration.media_attachments.image_matrix_limit`. null when it names no character limit.
 */
export function parseInstanceLimits(body: unknown): MastodonLimits | null {
  const configuration = record(record(body).configuration);
  const statuses = record(configuration.statuses);
  const media = record(configuration.media_attachments);
  return readLimits({
    maxCharacters: statuses.max_characters,
    charactersReservedPerUrl: statuses.characters_reserved_per_url,
    maxMediaAttachments: statuses.max_media_attachments,
    imageMatrixLimit: media.image_matrix_limit,
  });
}

/** A status as Herald reads one (the Status entity): its id, where it is shown, what it replies to, its text. */
export interface MastodonStatus {
  id: string;
  url: string | null;
  inReplyToId: string | null;
  createdAt: Date | null;
  /** HTML, as instances render statuses. */
  content: string;
  spoilerText: string;
}

export function parseStatus(body: unknown): MastodonStatus | null {
  const s = record(body);
  const id = str(s.id);
  if (id === null) return null;
  const created = typeof s.created_at === 'string' ? new Date(s.created_at) : null;
  return {
    id,
    // `url` is the status's page; `uri` its ActivityPub id (also a link, used when url is absent).
    url: str(s.url) ?? str(s.uri),
    inReplyToId: str(s.in_reply_to_id),
    createdAt: created && !Number.isNaN(created.getTime()) ? created : null,
    content: typeof s.content === 'string' ? s.content : '',
    spoilerText: typeof s.spoiler_text === 'string' ? s.spoiler_text : '',
  };
}

/** A list of statuses (`GET /api/v1/accounts/:id/statuses`); entries without an id are skipped. null: not a list. */
export function parseStatuses(body: unknown): MastodonStatus[] | null {
  if (!Array.isArray(body)) return null;
  return body.map(parseStatus).filter((s): s is MastodonStatus => s !== null);
}

/** An uploaded image (`POST /api/v2/media`, `GET /api/v1/media/:id`, a MediaAttachment): `url` is null while it is processed. */
export interface MastodonMedia {
  id: string;
  url: string | null;
}

export function parseMedia(body: unknown): MastodonMedia | null {
  const m = record(body);
  const id = str(m.id);
  return id === null ? null : { id, url: str(m.url) };
}

/** `{ "error": "…" }`, the message of every error answer, or null. */
export function errorMessage(body: unknown): string | null {
  const e = record(body).error;
  return typeof e === 'string' && e.trim() !== '' ? e.trim() : null;
}
