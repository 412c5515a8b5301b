import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { Db, Sql } from '../database/db';
import { param, sql, SqlPiece } from '../database/statement';
import { ApprovalSettings, DEFAULT_APPROVAL_SETTINGS } from './approval-policy';

/** One step of a post's approval, as approval_steps keeps it. */
export type ApprovalStepKind = 'submitted' | 'resubmitted' | 'approved' | 'rejected' | 'expired';

/** Who took a step: a person, an API key, or a reviewer of a client review link (actor id: the link's id). */
export interface StepActor {
  kind: 'person' | 'key' | 'reviewer';
  id: string;
  label: string;
}

export interface ApprovalStepRow {
  id: string;
  workspaceId: string;
  postId: string;
  step: ApprovalStepKind;
  comment: string | null;
  actor: StepActor;
  createdAt: Date;
}

const STEP_COLUMNS = `id, workspace_id AS "workspaceId", post_id AS "postId", step, comment,
  json_build_object('kind', actor_kind, 'id', actor_id, 'label', actor_label) AS actor, created_at AS "createdAt"`;

/** SQL of approval_settings and approval_steps (this module's tables); every statement is scoped by workspace. */
@Injectable()
export class ApprovalPolicyRepository {
  constructor(private readonly db: Db) {}

  transaction<T>(work: (tx: Sql) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  async settings(workspaceId: string, q: Sql = this.db): Promise<ApprovalSettings> {
    const rows = await q.prepared<ApprovalSettings>(
      'herald_approval_settings',
      `SELECT mode, client_approval AS "clientApproval" FROM approval_settings WHERE workspace_id = $1`,
      [workspaceId],
    );
    return rows[0] ?? { ...DEFAULT_APPROVAL_SETTINGS };
  }

  /**
   * The workspace's approval mode as a scalar subquery another module's statement carries
   * (database/statement.ts EmbeddedRead): null when the workspace never set one (the default).
   */
  modePiece(workspaceId: string): SqlPiece {
    return sql`(SELECT mode FROM approval_settings WHERE workspace_id = ${param(workspaceId)})`;
  }

  /** A boolean piece: the workspace's approval mode (the default when it set none) is none of `modes`. */
  modeNotIn(workspaceId: string, modes: readonly string[]): SqlPiece {
    return sql`coalesce((SELECT mode FROM approval_settings WHERE workspace_id = ${param(workspaceId)}), ${param(DEFAULT_APPROVAL_SETTINGS.mode)}) <> ALL (${param(modes)}::text[])`;
  }

  /** The settings written; the previous ones (for the audit trail), read under the row's lock. */
  async saveSettings(q: Sql, workspaceId: string, s: ApprovalSettings): Promise<ApprovalSettings> {
    const rows = await q.query<ApprovalSettings>(
      `SELECT mode, client_approval AS "clientApproval" FROM approval_settings WHERE workspace_id = $1 FOR UPDATE`,
      [workspaceId],
    );
    await q.query(
      `INSERT INTO approval_settings (workspace_id, mode, client_approval, updated_at) VALUES ($1, $2, $3, now())
       ON CONFLICT (workspace_id) DO UPDATE SET mode = EXCLUDED.mode, client_approval = EXCLUDED.client_approval, updated_at = now()`,
      [workspaceId, s.mode, s.clientApproval],
    );
    return rows[0] ?? { ...DEFAULT_APPROVAL_SETTINGS };
  }

  async insertStep(
    q: Sql,
    s: { workspaceId: string; postId: string; step: ApprovalStepKind; comment: string | null; actor: StepActor },
  ): Promise<ApprovalStepRow> {
    const rows = await q.query<ApprovalStepRow>(
      `INSERT INTO approval_steps (id, workspace_id, post_id, step, comment, actor_kind, actor_id, actor_label)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${STEP_COLUMNS}`,
      [randomUUID(), s.workspaceId, s.postId, s.step, s.comment, s.actor.kind, s.actor.id, s.actor.label.slice(0, 300)],
    );
    return rows[0];
  }

  /** A post's steps, oldest first. */
  steps(workspaceId: string, postId: string, q: Sql = this.db): Promise<ApprovalStepRow[]> {
    return q.query<ApprovalStepRow>(
      `SELECT ${STEP_COLUMNS} FROM approval_steps WHERE workspace_id = $1 AND post_id = $2 ORDER BY created_at, id`,
      [workspaceId, postId],
    );
  }

  /** Each post's latest step among `postIds` (the page shows a rejected draft's comment). */
  latestSteps(workspaceId: string, postIds: string[]): Promise<ApprovalStepRow[]> {
    if (postIds.length === 0) return Promise.resolve([]);
    return this.db.query<ApprovalStepRow>(
      `SELECT DISTINCT ON (post_id) ${STEP_COLUMNS} FROM approval_steps
       WHERE workspace_id = $1 AND post_id = ANY($2::uuid[]) ORDER BY post_id, created_at DESC, id DESC`,
      [workspaceId, postIds],
    );
  }
}
