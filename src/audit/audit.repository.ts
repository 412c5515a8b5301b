import { Injectable } from '@nestjs/common';
import type { Keyset } from '../common/pagination';
import { Db, Sql } from '../database/db';
import type { AuditActor, AuditKind, AuditRow, NewAuditEntry } from './audit.types';

const COLUMNS = `id, workspace_id AS "workspaceId", at, (extract(epoch FROM at) * 1000000)::bigint::text AS "cursorMicros",
  actor_kind AS "actorKind", actor_id AS "actorId", actor_label AS "actorLabel", kind, action, subject_id AS "subjectId",
  summary, before, after`;

export interface AuditFilter {
  actorId?: string;
  kind?: AuditKind;
  subjectId?: string;
}

/** The INSERT of `entries`, its parameters numbered from `first`. */
function insertStatement(
  first: number,
  workspaceId: string,
  actor: AuditActor,
  entries: NewAuditEntry[],
): { sql: string; params: unknown[] } {
  const p = (i: number) => `$${first + i}`;
  return {
    sql: `INSERT INTO audit_events (workspace_id, actor_kind, actor_id, actor_label, kind, action, subject_id, summary, before, after)
       SELECT ${p(0)}, ${p(1)}, ${p(2)}, ${p(3)}, r.kind, r.action, r.subject_id, r.summary, r.before, r.after
       FROM unnest(${p(4)}::text[], ${p(5)}::text[], ${p(6)}::uuid[], ${p(7)}::text[], ${p(8)}::jsonb[], ${p(9)}::jsonb[])
         WITH ORDINALITY AS r(kind, action, subject_id, summary, before, after, n)
       ORDER BY r.n`,
    params: [
      workspaceId,
      actor.kind,
      actor.id,
      actor.label.slice(0, 400),
      entries.map((e) => e.kind),
      entries.map((e) => e.action),
      entries.map((e) => e.subjectId ?? null),
      entries.map((e) => e.summary.slice(0, 1000)),
      entries.map((e) => (e.before ? JSON.stringify(e.before) : null)),
      entries.map((e) => (e.after ? JSON.stringify(e.after) : null)),
    ],
  };
}

/** SQL of audit_events, the one audit trail (this module's table; others call AuditService). */
@Injectable()
export class AuditRepository {
  constructor(private readonly db: Db) {}

  /** Adds entries inside the caller's transaction (or alone), so a change and its record commit together. */
  async insert(q: Sql | null, workspaceId: string, actor: AuditActor, entries: NewAuditEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const { sql, params } = insertStatement(1, workspaceId, actor, entries);
    await (q ?? this.db).query(sql, params);
  }

  /**
   * The same INSERT as a data-modifying CTE named `audit`, its parameters numbered from `first`,
   * for a statement of another module to embed (the intake: the post, its jobs and its audit
   * entry in one statement and one commit; PostsRepository.create). The SQL stays this module's.
   */
  insertCte(first: number, workspaceId: string, actor: AuditActor, entries: NewAuditEntry[]): { cte: string; params: unknown[] } {
    const { sql, params } = insertStatement(first, workspaceId, actor, entries);
    return { cte: `audit AS (${sql})`, params };
  }

  /** Newest first, over audit_events_workspace (or _actor when filtered by actor). */
  list(workspaceId: string, filter: AuditFilter, after: Keyset | null, limit: number): Promise<AuditRow[]> {
    return this.db.query<AuditRow>(
      `SELECT ${COLUMNS} FROM audit_events
       WHERE workspace_id = $1
         AND ($2::uuid IS NULL OR actor_id = $2)
         AND ($3::text IS NULL OR kind = $3)
         AND ($4::uuid IS NULL OR subject_id = $4)
         AND ($5::bigint IS NULL OR (at, id) < ('epoch'::timestamptz + $5::bigint * interval '1 microsecond', $6::uuid))
       ORDER BY at DESC, id DESC LIMIT $7`,
      [
        workspaceId,
        filter.actorId ?? null,
        filter.kind ?? null,
        filter.subjectId ?? null,
        after?.micros ?? null,
        after?.id ?? null,
        limit + 1,
      ],
    );
  }

  /** Everything recorded about one thing, oldest first (a failed post's trail). */
  forSubject(workspaceId: string, subjectId: string, q: Sql = this.db): Promise<AuditRow[]> {
    return q.query<AuditRow>(`SELECT ${COLUMNS} FROM audit_events WHERE subject_id = $1 AND workspace_id = $2 ORDER BY at, id`, [
      subjectId,
      workspaceId,
    ]);
  }
}
