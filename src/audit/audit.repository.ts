import { Injectable } from '@nestjs/common';
import type { Keyset } from '../common/pagination';
import { Db, Sql } from '../database/db';
import { compose, Cte, cte, param, sql, SqlPiece } from '../database/statement';
import type { AuditActor, AuditKind, AuditRow, NewAuditEntry } from './audit.types';

const COLUMNS = `id, workspace_id AS "workspaceId", at, (extract(epoch FROM at) * 1000000)::bigint::text AS "cursorMicros",
  actor_kind AS "actorKind", actor_id AS "actorId", actor_label AS "actorLabel", kind, action, subject_id AS "subjectId",
  summary, before, after`;

export interface AuditFilter {
  actorId?: string;
  kind?: AuditKind;
  subjectId?: string;
}

/** The INSERT of `entries`, a piece of a statement (database/statement.ts numbers its parameters). */
function insertStatement(workspaceId: string, actor: AuditActor, entries: NewAuditEntry[]): SqlPiece {
  const kind = param(entries.map((e) => e.kind));
  const action = param(entries.map((e) => e.action));
  const subject = param(entries.map((e) => e.subjectId ?? null));
  const summary = param(entries.map((e) => e.summary.slice(0, 1000)));
  const before = param(entries.map((e) => (e.before ? JSON.stringify(e.before) : null)));
  const after = param(entries.map((e) => (e.after ? JSON.stringify(e.after) : null)));
  return sql`INSERT INTO audit_events (workspace_id, actor_kind, actor_id, actor_label, kind, action, subject_id, summary, before, after)
       SELECT ${param(workspaceId)}, ${param(actor.kind)}, ${param(actor.id)}, ${param(actor.label.slice(0, 400))}, r.kind, r.action, r.subject_id, r.summary, r.before, r.after
       FROM unnest(${kind}::text[], ${action}::text[], ${subject}::uuid[], ${summary}::text[], ${before}::jsonb[], ${after}::jsonb[])
         WITH ORDINALITY AS r(kind, action, subject_id, summary, before, after, n)
       ORDER BY r.n`;
}

/** SQL of audit_events, the one audit trail (this module's table; others call AuditService). */
@Injectable()
export class AuditRepository {
  constructor(private readonly db: Db) {}

  /** Adds entries inside the caller's transaction (or alone), so a change and its record commit together. */
  async insert(q: Sql | null, workspaceId: string, actor: AuditActor, entries: NewAuditEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const { text, values } = compose(insertStatement(workspaceId, actor, entries));
    await (q ?? this.db).query(text, values);
  }

  /**
   * The same INSERT as a data-modifying CTE named `audit`, for a statement of another module to
   * embed (the intake: the post, its jobs and its audit entry in one statement and one commit;
   * PostsRepository.create). The SQL stays this module's; the composition numbers its parameters.
   */
  insertCte(workspaceId: string, actor: AuditActor, entries: NewAuditEntry[]): Cte<'audit'> {
    return cte('audit', insertStatement(workspaceId, actor, entries));
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
