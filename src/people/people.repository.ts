import { Injectable } from '@nestjs/common';
import type { Principal } from '../access/auth-context';
import type { Role } from '../access/roles';
import type { Keyset, Listed } from '../common/pagination';
import { Db, Sql, Tx } from '../database/db';
import type { InvitationRow, PersonRow } from './person.types';

const PERSON = `id, workspace_id AS "workspaceId", email, name, role, password_hash AS "passwordHash", created_at AS "createdAt",
  removed_at AS "removedAt"`;
const INVITATION = `id, workspace_id AS "workspaceId", email, role, invited_by AS "invitedBy",
  CASE WHEN inviter_id IS NULL THEN NULL ELSE json_build_object('kind', inviter_kind, 'id', inviter_id) END AS inviter,
  created_at AS "createdAt", expires_at AS "expiresAt", accepted_at AS "acceptedAt", revoked_at AS "revokedAt",
  first_person AS "firstPerson", person_name AS "personName", password_hash AS "passwordHash"`;

/** The unique index that keeps one active person per address (people_email). */
export const EMAIL_TAKEN = 'people_email';

export interface ResetRow {
  id: string;
  personId: string;
  createdAt: Date;
  expiresAt: Date;
  usedAt: Date | null;
  revokedAt: Date | null;
}

/** SQL of people, invitations and password_resets (this module's tables). */
@Injectable()
export class PeopleRepository {
  constructor(private readonly db: Db) {}

  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  /** Changes to a workspace's people and invitations take turns (the last-owner rule needs it). */
  async lockTeam(q: Sql, workspaceId: string): Promise<void> {
    await q.query(`SELECT pg_advisory_xact_lock(hashtext('herald.team'), hashtext($1))`, [workspaceId]);
  }

  // ---- people ----

  async insert(q: Sql, p: { workspaceId: string; email: string; name: string; role: Role; passwordHash: string }): Promise<PersonRow> {
    const rows = await q.query<PersonRow>(
      `INSERT INTO people (workspace_id, email, name, role, password_hash) VALUES ($1, $2, $3, $4, $5) RETURNING ${PERSON}`,
      [p.workspaceId, p.email, p.name, p.role, p.passwordHash],
    );
    return rows[0];
  }

  /**
   * Whether the server has had any person at all (removed ones count). Under lockPeopleTable, no
   * other transaction can add one before this one ends.
   */
  async anyPerson(q: Sql): Promise<boolean> {
    const rows = await q.query<{ any: boolean }>(`SELECT EXISTS (SELECT 1 FROM people) AS any`);
    return rows[0].any;
  }

  /**
   * Holds off every other write to people until the transaction ends: the very first person of a
   * server without mail is made at once, and "first" must hold server-wide, whichever workspace
   * or invitation adds a person at the same moment (a workspace's team lock covers one workspace
   * only). Taken only on that path, while a server has no person yet.
   */
  async lockPeopleTable(q: Sql): Promise<void> {
    await q.query(`LOCK TABLE people IN SHARE ROW EXCLUSIVE MODE`);
  }

  /** The active person with this address, on any workspace (an address is one login). */
  async findActiveByEmail(email: string, q: Sql = this.db): Promise<PersonRow | null> {
    const rows = await q.query<PersonRow>(`SELECT ${PERSON} FROM people WHERE email = $1 AND removed_at IS NULL`, [email]);
    return rows[0] ?? null;
  }

  async findActive(id: string, q: Sql = this.db): Promise<PersonRow | null> {
    const rows = await q.query<PersonRow>(`SELECT ${PERSON} FROM people WHERE id = $1 AND removed_at IS NULL`, [id]);
    return rows[0] ?? null;
  }

  /** An active person of this workspace, row-locked until the transaction ends. */
  async lockActive(q: Sql, workspaceId: string, id: string): Promise<PersonRow | null> {
    const rows = await q.query<PersonRow>(
      `SELECT ${PERSON} FROM people WHERE workspace_id = $1 AND id = $2 AND removed_at IS NULL FOR UPDATE`,
      [workspaceId, id],
    );
    return rows[0] ?? null;
  }

  /**
   * The workspace's active owners, locked: a change that could leave a workspace with people but
   * no owner among them checks this count while holding these rows.
   */
  async lockOwners(q: Sql, workspaceId: string): Promise<string[]> {
    const rows = await q.query<{ id: string }>(
      `SELECT id FROM people WHERE workspace_id = $1 AND role = 'owner' AND removed_at IS NULL ORDER BY id FOR UPDATE`,
      [workspaceId],
    );
    return rows.map((r) => r.id);
  }

  /** The workspace's active owners (the approval mails go to them). */
  activeOwners(workspaceId: string, q: Sql = this.db): Promise<PersonRow[]> {
    return q.query<PersonRow>(
      `SELECT ${PERSON} FROM people WHERE workspace_id = $1 AND role = 'owner' AND removed_at IS NULL ORDER BY id`,
      [workspaceId],
    );
  }

  async countActive(workspaceId: string, q: Sql = this.db): Promise<number> {
    const rows = await q.query<{ n: number }>(`SELECT count(*)::int AS n FROM people WHERE workspace_id = $1 AND removed_at IS NULL`, [
      workspaceId,
    ]);
    return rows[0].n;
  }

  list(workspaceId: string, after: Keyset | null, limit: number): Promise<Listed<PersonRow>[]> {
    return this.db.query<Listed<PersonRow>>(
      `SELECT ${PERSON}, (extract(epoch FROM created_at) * 1000000)::bigint::text AS "cursorMicros" FROM people
       WHERE workspace_id = $1 AND removed_at IS NULL
         AND ($2::bigint IS NULL OR (created_at, id) < ('epoch'::timestamptz + $2::bigint * interval '1 microsecond', $3::uuid))
       ORDER BY created_at DESC, id DESC LIMIT $4`,
      [workspaceId, after?.micros ?? null, after?.id ?? null, limit + 1],
    );
  }

  async update(q: Sql, id: string, change: { name?: string; role?: Role; passwordHash?: string }): Promise<PersonRow> {
    const rows = await q.query<PersonRow>(
      `UPDATE people SET name = coalesce($2, name), role = coalesce($3, role), password_hash = coalesce($4, password_hash), updated_at = now()
       WHERE id = $1 RETURNING ${PERSON}`,
      [id, change.name ?? null, change.role ?? null, change.passwordHash ?? null],
    );
    return rows[0];
  }

  async remove(q: Sql, id: string): Promise<void> {
    await q.query(`UPDATE people SET removed_at = now(), updated_at = now() WHERE id = $1 AND removed_at IS NULL`, [id]);
    await this.revokeOpenResets(q, id);
  }

  /** Retires a person's reset links not yet used (removed, or their password changed). */
  async revokeOpenResets(q: Sql, personId: string): Promise<void> {
    await q.query(`UPDATE password_resets SET revoked_at = now() WHERE person_id = $1 AND used_at IS NULL AND revoked_at IS NULL`, [
      personId,
    ]);
  }

  // ---- invitations ----

  // Every statement that closes a link (accepted or revoked) drops a first person's password
  // hash with it: the hash waits only while the link is open (invitations_hash_while_open).

  /** Retires the open invitation of this address in this workspace, if any (inviting again replaces it). */
  async revokeOpenInvitation(q: Sql, workspaceId: string, email: string): Promise<void> {
    await q.query(
      `UPDATE invitations SET revoked_at = now(), password_hash = NULL
       WHERE workspace_id = $1 AND email = $2 AND accepted_at IS NULL AND revoked_at IS NULL`,
      [workspaceId, email],
    );
  }

  /** Retires the workspace's open first-person links (a new first person replaces them); their addresses. */
  async revokeOpenFirstPersons(q: Sql, workspaceId: string): Promise<string[]> {
    const rows = await q.query<{ email: string }>(
      `UPDATE invitations SET revoked_at = now(), password_hash = NULL
       WHERE workspace_id = $1 AND first_person AND accepted_at IS NULL AND revoked_at IS NULL RETURNING email`,
      [workspaceId],
    );
    return rows.map((r) => r.email);
  }

  /** `firstPerson`: the name and password hash the key holder chose, for a first person's confirmation link. */
  async insertInvitation(
    q: Sql,
    i: {
      workspaceId: string;
      email: string;
      role: Role;
      tokenHash: Buffer;
      invitedBy: string;
      inviter: Principal;
      expiresAt: Date;
      firstPerson?: { name: string; passwordHash: string };
    },
  ): Promise<InvitationRow> {
    const rows = await q.query<InvitationRow>(
      `INSERT INTO invitations (workspace_id, email, role, token_hash, invited_by, inviter_kind, inviter_id, expires_at,
                                first_person, person_name, password_hash)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING ${INVITATION}`,
      [
        i.workspaceId,
        i.email,
        i.role,
        i.tokenHash,
        i.invitedBy.slice(0, 300),
        i.inviter.kind,
        i.inviter.id,
        i.expiresAt,
        i.firstPerson !== undefined,
        i.firstPerson?.name ?? null,
        i.firstPerson?.passwordHash ?? null,
      ],
    );
    return rows[0];
  }

  /** The invitation of a link's token, locked (null: no such token). */
  async lockInvitationByToken(q: Sql, tokenHash: Buffer): Promise<InvitationRow | null> {
    const rows = await q.query<InvitationRow>(`SELECT ${INVITATION} FROM invitations WHERE token_hash = $1 FOR UPDATE`, [tokenHash]);
    return rows[0] ?? null;
  }

  async findInvitationByToken(tokenHash: Buffer): Promise<InvitationRow | null> {
    const rows = await this.db.query<InvitationRow>(`SELECT ${INVITATION} FROM invitations WHERE token_hash = $1`, [tokenHash]);
    return rows[0] ?? null;
  }

  async lockInvitation(q: Sql, workspaceId: string, id: string): Promise<InvitationRow | null> {
    const rows = await q.query<InvitationRow>(`SELECT ${INVITATION} FROM invitations WHERE workspace_id = $1 AND id = $2 FOR UPDATE`, [
      workspaceId,
      id,
    ]);
    return rows[0] ?? null;
  }

  async acceptInvitation(q: Sql, id: string, personId: string): Promise<void> {
    await q.query(`UPDATE invitations SET accepted_at = now(), person_id = $2, password_hash = NULL WHERE id = $1`, [id, personId]);
  }

  async revokeInvitation(q: Sql, id: string): Promise<void> {
    await q.query(
      `UPDATE invitations SET revoked_at = now(), password_hash = NULL WHERE id = $1 AND accepted_at IS NULL AND revoked_at IS NULL`,
      [id],
    );
  }

  /** Open invitations (not used, not revoked; expired ones too, marked so), newest first. */
  listOpenInvitations(workspaceId: string, after: Keyset | null, limit: number): Promise<Listed<InvitationRow>[]> {
    return this.db.query<Listed<InvitationRow>>(
      `SELECT ${INVITATION}, (extract(epoch FROM created_at) * 1000000)::bigint::text AS "cursorMicros" FROM invitations
       WHERE workspace_id = $1 AND accepted_at IS NULL AND revoked_at IS NULL
         AND ($2::bigint IS NULL OR (created_at, id) < ('epoch'::timestamptz + $2::bigint * interval '1 microsecond', $3::uuid))
       ORDER BY created_at DESC, id DESC LIMIT $4`,
      [workspaceId, after?.micros ?? null, after?.id ?? null, limit + 1],
    );
  }

  // ---- password resets ----

  async lastResetAt(q: Sql, personId: string): Promise<Date | null> {
    const rows = await q.query<{ at: Date | null }>(`SELECT max(created_at) AS at FROM password_resets WHERE person_id = $1`, [personId]);
    return rows[0]?.at ?? null;
  }

  /** A new reset link; older unused ones are retired (only the newest mailed link works). */
  async insertReset(q: Sql, personId: string, tokenHash: Buffer, expiresAt: Date): Promise<void> {
    await this.revokeOpenResets(q, personId);
    await q.query(`INSERT INTO password_resets (person_id, token_hash, expires_at) VALUES ($1, $2, $3)`, [personId, tokenHash, expiresAt]);
  }

  async lockResetByToken(q: Sql, tokenHash: Buffer): Promise<ResetRow | null> {
    const rows = await q.query<ResetRow>(
      `SELECT id, person_id AS "personId", created_at AS "createdAt", expires_at AS "expiresAt", used_at AS "usedAt", revoked_at AS "revokedAt"
       FROM password_resets WHERE token_hash = $1 FOR UPDATE`,
      [tokenHash],
    );
    return rows[0] ?? null;
  }

  async findResetByToken(tokenHash: Buffer): Promise<ResetRow | null> {
    const rows = await this.db.query<ResetRow>(
      `SELECT id, person_id AS "personId", created_at AS "createdAt", expires_at AS "expiresAt", used_at AS "usedAt", revoked_at AS "revokedAt"
       FROM password_resets WHERE token_hash = $1`,
      [tokenHash],
    );
    return rows[0] ?? null;
  }

  async useReset(q: Sql, id: string): Promise<void> {
    await q.query(`UPDATE password_resets SET used_at = now() WHERE id = $1`, [id]);
  }
}
