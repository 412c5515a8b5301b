import { Injectable } from '@nestjs/common';
import { Db, Sql } from '../database/db';
import type { MailKind } from './mail-driver';
import { REMOVED_BODY, SEALED_KINDS } from './mail-seal';
import type { MailState, NewMail } from './mail.types';

/** A mail a sender holds (status `sending`) until its lease runs out. */
export interface ClaimedMail {
  id: string;
  workspaceId: string;
  kind: MailKind;
  recipients: string[];
  subject: string;
  /** As stored: sealed for the kinds that carry a one-use link (mail-seal.ts). */
  html: string;
  text: string;
  /** The number of this try (1-based). */
  attempt: number;
  createdAt: Date;
}

/**
 * SQL of mail_outbox: every mail Herald sends (digests, alerts, and mails with a one-use link),
 * with the outcome of its tries. Mails are written in the transaction that decides them (the
 * digest claim, the alert event) and sent afterwards, outside any transaction: no transaction
 * stays open across an SMTP conversation. A sender leases the rows it sends; every outcome is
 * written guarded by the lease (status `sending` and the try's number), so a sender whose lease
 * ran out (and whose mail another sender took over) cannot overwrite the newer outcome.
 *
 * The bodies of mails with a one-use link come here sealed (mail-seal.ts) and are replaced by
 * REMOVED_BODY in the very statement that records that the mail was sent or failed for good:
 * never a moment where the row says "sent" and still holds the link (the CHECK
 * mail_outbox_links_sealed refuses such a row).
 */
@Injectable()
export class MailOutboxRepository {
  constructor(private readonly db: Db) {}

  /**
   * Adds a mail, due now, inside the caller's transaction. The id comes from the caller: a sealed
   * body is bound to it, so it is known before the row is written.
   */
  async enqueue(runner: Sql, id: string, mail: NewMail): Promise<void> {
    await runner.query(
      `INSERT INTO mail_outbox (id, workspace_id, kind, recipients, subject, html, text)
       VALUES ($1, $2, $3, $4::text[], $5, $6, $7)`,
      [id, mail.workspaceId, mail.kind, mail.recipients, mail.subject, mail.html, mail.text],
    );
  }

  /** Mails of `kind` the workspace wrote since `since` (mail_outbox_approval_mails serves the approval kind). */
  async countSince(runner: Sql, workspaceId: string, kind: MailKind, since: Date): Promise<number> {
    const rows = await runner.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM mail_outbox WHERE workspace_id = $1 AND kind = $2 AND created_at > $3`,
      [workspaceId, kind, since],
    );
    return rows[0].n;
  }

  /**
   * Leases up to `limit` mails that are due: pending ones whose time has come, and ones whose
   * sender's lease ran out (it died or hung mid-conversation; the try it started counts).
   * SKIP LOCKED: processes sending at the same time take disjoint mails without waiting.
   * Mails that already used every try are not taken (see failAbandoned).
   */
  claimDue(limit: number, leaseMs: number, maxAttempts: number): Promise<ClaimedMail[]> {
    return this.db.query<ClaimedMail>(
      `UPDATE mail_outbox m SET status = 'sending', attempts = m.attempts + 1,
              lease_until = now() + $2 * interval '1 millisecond', updated_at = now()
       WHERE m.id IN (
         SELECT id FROM mail_outbox
         WHERE ((status = 'pending' AND next_attempt_at <= now()) OR (status = 'sending' AND lease_until < now()))
           AND attempts < $3
         ORDER BY next_attempt_at
         LIMIT $1
         FOR UPDATE SKIP LOCKED)
       RETURNING m.id, m.workspace_id AS "workspaceId", m.kind, m.recipients, m.subject, m.html, m.text,
                 m.attempts AS attempt, m.created_at AS "createdAt"`,
      [limit, leaseMs, maxAttempts],
    );
  }

  /**
   * Mails whose last try was lost with its sender and that have no try left: failed, with that
   * reason. A link's body goes with it (the person asks for a new link).
   */
  async failAbandoned(maxAttempts: number): Promise<{ id: string; kind: MailKind }[]> {
    return this.db.query(
      `UPDATE mail_outbox SET status = 'failed', lease_until = NULL, updated_at = now(),
              last_error = 'the sender stopped before recording the outcome of the last try (' || attempts || ' tries used)',
              html = CASE WHEN kind = ANY($2::text[]) THEN $3 ELSE html END,
              text = CASE WHEN kind = ANY($2::text[]) THEN $3 ELSE text END
       WHERE id IN (SELECT id FROM mail_outbox WHERE status = 'sending' AND lease_until < now() AND attempts >= $1
                    FOR UPDATE SKIP LOCKED)
       RETURNING id, kind`,
      [maxAttempts, SEALED_KINDS, REMOVED_BODY],
    );
  }

  /**
   * The server accepted it; a link's body is dropped in the same statement. False when the
   * lease was lost meanwhile (another sender owns the outcome, and drops the body with it).
   */
  async markSent(id: string, attempt: number, response: string, rejected: string[]): Promise<boolean> {
    const rows = await this.db.query(
      `UPDATE mail_outbox SET status = 'sent', sent_at = now(), lease_until = NULL, response = $3,
              rejected = CASE WHEN cardinality($4::text[]) = 0 THEN NULL ELSE $4::text[] END, updated_at = now(),
              html = CASE WHEN kind = ANY($5::text[]) THEN $6 ELSE html END,
              text = CASE WHEN kind = ANY($5::text[]) THEN $6 ELSE text END
       WHERE id = $1 AND status = 'sending' AND attempts = $2 RETURNING id`,
      [id, attempt, response.slice(0, 1000), rejected, SEALED_KINDS, REMOVED_BODY],
    );
    return rows.length > 0;
  }

  /**
   * A try failed: again after `delayMs` (database clock), the body kept (sealed) for that try;
   * or failed for good when `delayMs` is null, a link's body dropped in the same statement.
   */
  async markFailedTry(id: string, attempt: number, error: string, delayMs: number | null): Promise<boolean> {
    const rows = await this.db.query(
      `UPDATE mail_outbox SET
              status = CASE WHEN $4::bigint IS NULL THEN 'failed' ELSE 'pending' END,
              next_attempt_at = CASE WHEN $4::bigint IS NULL THEN next_attempt_at ELSE now() + $4::bigint * interval '1 millisecond' END,
              lease_until = NULL, last_error = $3, updated_at = now(),
              html = CASE WHEN $4::bigint IS NULL AND kind = ANY($5::text[]) THEN $6 ELSE html END,
              text = CASE WHEN $4::bigint IS NULL AND kind = ANY($5::text[]) THEN $6 ELSE text END
       WHERE id = $1 AND status = 'sending' AND attempts = $2 RETURNING id`,
      [id, attempt, error.slice(0, 1000), delayMs, SEALED_KINDS, REMOVED_BODY],
    );
    return rows.length > 0;
  }

  /**
   * When the next mail falls due, as ms from now on the database's clock (0: one is due now),
   * or null when none waits: the earliest retry of a pending mail and the earliest lease of a
   * mail being sent (its sender may have died). Two descents of the partial indexes
   * mail_outbox_due and mail_outbox_leased; the sender sleeps until then instead of polling.
   */
  async nextDueInMs(): Promise<number | null> {
    // (Not greatest(0, …) in SQL: greatest ignores a NULL, and "none waits" would read as "due now".)
    const rows = await this.db.query<{ ms: number | null }>(
      `SELECT (extract(epoch FROM least(
                (SELECT min(next_attempt_at) FROM mail_outbox WHERE status = 'pending'),
                (SELECT min(lease_until) FROM mail_outbox WHERE status = 'sending')) - now()) * 1000)::float8 AS ms`,
    );
    const ms = rows[0]?.ms ?? null;
    return ms === null ? null : Math.max(0, Math.ceil(ms));
  }

  /** Where one mail stands: for the settings answer ("the last digest was sent at …"). */
  async state(id: string): Promise<MailState | null> {
    const rows = await this.db.query<MailState>(
      `SELECT status, attempts, sent_at AS "sentAt", last_error AS "lastError" FROM mail_outbox WHERE id = $1`,
      [id],
    );
    return rows[0] ?? null;
  }

  /** Mails not yet accepted, per kind and state, for /metrics (two small partial indexes). */
  waiting(): Promise<{ kind: MailKind; status: 'pending' | 'sending'; n: number }[]> {
    return this.db.query(
      `SELECT kind, status, count(*)::int AS n FROM mail_outbox WHERE status IN ('pending', 'sending') GROUP BY kind, status`,
    );
  }
}
