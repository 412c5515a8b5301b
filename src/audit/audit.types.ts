import type { AuthContext } from '../access/auth-context';

/** What an audit entry is about. */
export type AuditKind = 'account' | 'post' | 'failed_post' | 'person' | 'invitation' | 'api_key' | 'notifications' | 'media' | 'workspace';
export const AUDIT_KINDS: readonly AuditKind[] = [
  'account',
  'post',
  'failed_post',
  'person',
  'invitation',
  'api_key',
  'notifications',
  'media',
  'workspace',
];

export type ActorKind = 'person' | 'key' | 'system';

/** Who made a change, as the trail keeps it. */
export interface AuditActor {
  kind: ActorKind;
  id: string | null;
  /** The name as it was then. */
  label: string;
}

/** A change to record. `before`/`after` hold the fields that changed, never a secret. */
export interface NewAuditEntry {
  kind: AuditKind;
  action: string;
  subjectId?: string | null;
  summary: string;
  before?: Record<string, unknown> | null;
  after?: Record<string, unknown> | null;
}

export interface AuditRow {
  id: string;
  workspaceId: string;
  at: Date;
  /** `at` in microseconds since the epoch: the list's keyset. */
  cursorMicros: string;
  actorKind: ActorKind;
  actorId: string | null;
  actorLabel: string;
  kind: AuditKind;
  action: string;
  subjectId: string | null;
  summary: string;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
}

/** One entry of GET /v1/audit. */
export interface AuditEventView {
  id: string;
  at: string;
  actor: AuditActor;
  kind: AuditKind;
  action: string;
  subjectId: string | null;
  summary: string;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
}

export function toAuditEventView(r: AuditRow): AuditEventView {
  return {
    id: r.id,
    at: r.at.toISOString(),
    actor: { kind: r.actorKind, id: r.actorId, label: r.actorLabel },
    kind: r.kind,
    action: r.action,
    subjectId: r.subjectId,
    summary: r.summary,
    before: r.before,
    after: r.after,
  };
}

export function actorOf(auth: Pick<AuthContext, 'principal' | 'label'>): AuditActor {
  return { kind: auth.principal.kind, id: auth.principal.id, label: auth.label };
}

export const SYSTEM_ACTOR: AuditActor = { kind: 'system', id: null, label: 'Herald' };

/**
 * The fields that differ between two views of a thing, as `{ before, after }` (pure). Keys in
 * `secret` are compared but shown only as "changed", never with their values.
 */
export function diffFields(
  before: Record<string, unknown>,
  after: Record<string, unknown>,
  secret: readonly string[] = [],
): { before: Record<string, unknown>; after: Record<string, unknown> } {
  const b: Record<string, unknown> = {};
  const a: Record<string, unknown> = {};
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (JSON.stringify(before[key] ?? null) === JSON.stringify(after[key] ?? null)) continue;
    if (secret.includes(key)) {
      b[key] = '(secret)';
      a[key] = '(changed)';
    } else {
      b[key] = before[key] ?? null;
      a[key] = after[key] ?? null;
    }
  }
  return { before: b, after: a };
}
