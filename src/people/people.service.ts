import { Inject, Injectable } from '@nestjs/common';
import type { AuthContext } from '../access/auth-context';
import { mayGrant, Role } from '../access/roles';
import { AuditService } from '../audit/audit.service';
import { conflict, forbidden, invalidInput, notFound } from '../common/errors';
import { decodeCursor, DEFAULT_PAGE_SIZE, Page, toPage } from '../common/pagination';
import { HERALD_CONFIG, HeraldConfig } from '../config/config';
import type { Sql } from '../database/db';
import { MailOutbox } from '../mail/mail-outbox.service';
import { ApiKeysService } from '../workspaces/api-keys.service';
import { WorkspacesService } from '../workspaces/workspaces.service';
import { emailProblem, mailsLinks, nameProblem, normalizeEmail, passwordProblem } from './credentials';
import {
  expiryFrom,
  hashLinkToken,
  INVITATION_TTL_MS,
  linkStatus,
  LinkStatus,
  looksLikeLinkToken,
  newLinkToken,
  RESET_TTL_MS,
  resetMailAllowed,
} from './link-tokens';
import { PasswordHasher } from './password-hasher';
import { EMAIL_TAKEN, PeopleRepository } from './people.repository';
import { invitationMail, resetMail } from './people-mail';
import {
  InvitationRow,
  InvitationView,
  NewInvitationView,
  personLabel,
  PersonRow,
  PersonView,
  toInvitationView,
  toPersonView,
} from './person.types';

/** What a one-use link is, for the page that opens it (never the token). */
export type LinkCheck<T> = { ok: true; value: T } | { ok: false; status: Exclude<LinkStatus, 'usable'> | 'unknown' };

/** An invitation as its page shows it. `firstPerson`: only the address is to be confirmed (`name` was chosen already). */
export interface InvitationForPage {
  email: string;
  role: Role;
  workspaceName: string;
  firstPerson: boolean;
  name: string | null;
}

const TAKEN =
  'This address already logs in to Herald (an address is one person on a Herald server). Log in with it, or use another address.';

function isUniqueViolation(err: unknown, constraint: string): boolean {
  const e = err as { code?: unknown; constraint?: unknown };
  return e?.code === '23505' && e.constraint === constraint;
}

/**
 * The people of a workspace: the first person, invitations, roles, removal, passwords and their
 * resets, and the checks of a login. Every change is in the audit trail, in its transaction;
 * mails are written to the outbox in the same transaction and sent by the mail sender.
 */
@Injectable()
export class PeopleService {
  constructor(
    @Inject(HERALD_CONFIG) private readonly config: HeraldConfig,
    private readonly people: PeopleRepository,
    private readonly hasher: PasswordHasher,
    private readonly audit: AuditService,
    private readonly outbox: MailOutbox,
    private readonly workspaces: WorkspacesService,
    private readonly keys: ApiKeysService,
  ) {}

  /** Mail reaches people only through an SMTP server; without one, links are handed over by hand. */
  get mailsLinks(): boolean {
    return mailsLinks(this.config);
  }

  async list(workspaceId: string, limit = DEFAULT_PAGE_SIZE, cursor?: string): Promise<Page<PersonView>> {
    return toPage(await this.people.list(workspaceId, decodeCursor(cursor), limit), limit, toPersonView);
  }

  async get(workspaceId: string, id: string): Promise<PersonView> {
    const person = await this.people.findActive(id);
    if (!person || person.workspaceId !== workspaceId) throw notFound('person', id);
    return toPersonView(person);
  }

  /** The workspace's active owners, with their addresses (approval mails). */
  async owners(workspaceId: string, q?: Sql): Promise<PersonView[]> {
    return (await this.people.activeOwners(workspaceId, q)).map(toPersonView);
  }

  /** A person of the workspace while they are in it, else null (removed or unknown). */
  async findActive(workspaceId: string, id: string, q?: Sql): Promise<PersonView | null> {
    const person = await this.people.findActive(id, q);
    return person && person.workspaceId === workspaceId ? toPersonView(person) : null;
  }

  /** Open invitations; those whose inviter may no longer grant their role say `revoked`, as their links answer. */
  async listInvitations(workspaceId: string, limit = DEFAULT_PAGE_SIZE, cursor?: string, now = new Date()): Promise<Page<InvitationView>> {
    const rows = await this.people.listOpenInvitations(workspaceId, decodeCursor(cursor), limit);
    // One look-up per inviter and role, however many invitations they made.
    const verdicts = new Map<string, Promise<boolean>>();
    const lost = new Set<string>();
    for (const r of rows) {
      const key = `${r.inviter?.kind}:${r.inviter?.id}:${r.role}`;
      if (!verdicts.has(key)) verdicts.set(key, this.inviterMayGrant(r));
      if (!(await verdicts.get(key))) lost.add(r.id);
    }
    return toPage(rows, limit, (r) => toInvitationView(r, now, lost.has(r.id)));
  }

  /**
   * Whether an invitation's inviter still may grant its role: a person still in the workspace, or
   * a key not revoked, whose role allows it now (roles.ts mayGrant). An invitation is only as good
   * as that: a removed owner's, a demoted owner's or a revoked key's links answer as withdrawn.
   * `q`: read in that transaction (acceptance holds the workspace's team lock, which removals and
   * role changes take too).
   */
  private async inviterMayGrant(invitation: InvitationRow, q?: Sql): Promise<boolean> {
    const inviter = invitation.inviter;
    if (!inviter) return false;
    const caller =
      inviter.kind === 'person'
        ? await this.people.findActive(inviter.id, q).then((p) => p && { workspaceId: p.workspaceId, role: p.role, bootstrap: false })
        : await this.keys.activeKey(inviter.id);
    return caller !== null && caller.workspaceId === invitation.workspaceId && mayGrant(caller, invitation.role);
  }

  async count(workspaceId: string): Promise<number> {
    return this.people.countActive(workspaceId);
  }

  private checked(input: { email?: string; name?: string; password?: string }): { email: string; name: string; password: string } {
    const email = normalizeEmail(input.email ?? '');
    const name = (input.name ?? '').trim();
    const password = input.password ?? '';
    const problem =
      (input.email !== undefined ? emailProblem(email) : null) ??
      (input.name !== undefined ? nameProblem(name) : null) ??
      (input.password !== undefined ? passwordProblem(password, email) : null);
    if (problem) throw invalidInput(problem);
    return { email, name, password };
  }

  private lockTeam(q: Sql, workspaceId: string): Promise<void> {
    return this.people.lockTeam(q, workspaceId);
  }

  /**
   * An owner invites an address with a role: a one-use link valid 7 days, mailed (and, without a
   * mail server, in the answer for the owner to pass on). Inviting the same address again
   * replaces the previous link.
   */
  async invite(auth: AuthContext, input: { email: string; role: Role }, now = new Date()): Promise<NewInvitationView> {
    const { email } = this.checked({ email: input.email });
    if (!mayGrant(auth, input.role)) throw forbidden(`only an owner may invite, and at most as ${auth.role}`);
    const token = newLinkToken();
    const url = `${this.config.publicUrl}/settings/invitation?token=${token}`;
    const workspace = await this.workspaces.find(auth.workspaceId);
    const row = await this.people.transaction(async (tx) => {
      await this.lockTeam(tx, auth.workspaceId);
      const existing = await this.people.findActiveByEmail(email, tx);
      if (existing?.workspaceId === auth.workspaceId) throw conflict(`${email} is already in this workspace`);
      await this.people.revokeOpenInvitation(tx, auth.workspaceId, email);
      const invitation = await this.people.insertInvitation(tx, {
        workspaceId: auth.workspaceId,
        email,
        role: input.role,
        tokenHash: hashLinkToken(token),
        invitedBy: auth.label,
        inviter: auth.principal,
        expiresAt: expiryFrom(now, INVITATION_TTL_MS),
      });
      const mail = invitationMail({
        workspaceName: workspace?.name ?? 'Herald',
        invitedBy: auth.label,
        role: input.role,
        link: url,
        days: INVITATION_TTL_MS / 86_400_000,
      });
      await this.outbox.enqueue(tx, { workspaceId: auth.workspaceId, kind: 'invitation', recipients: [email], ...mail });
      await this.audit.record(tx, auth, {
        kind: 'invitation',
        action: 'create',
        subjectId: invitation.id,
        summary: `Invited ${email} as ${input.role}`,
        after: { email, role: input.role, expiresAt: invitation.expiresAt.toISOString() },
      });
      return invitation;
    });
    return { invitation: toInvitationView(row, now), mailed: this.mailsLinks, link: this.mailsLinks ? null : url };
  }

  async revokeInvitation(auth: AuthContext, id: string, now = new Date()): Promise<void> {
    await this.people.transaction(async (tx) => {
      const invitation = await this.people.lockInvitation(tx, auth.workspaceId, id);
      if (!invitation) throw notFound('invitation', id);
      const status = toInvitationView(invitation, now).status;
      if (status === 'accepted') throw conflict('this invitation was accepted already: remove the person instead');
      if (status === 'revoked') return;
      await this.people.revokeInvitation(tx, id);
      await this.audit.record(tx, auth, {
        kind: 'invitation',
        action: 'revoke',
        subjectId: id,
        summary: `Withdrew the invitation of ${invitation.email}`,
        before: { status },
        after: { status: 'revoked' },
      });
    });
  }

  /**
   * The invitation behind a link, for the page that opens it. `firstPerson`: the workspace's first
   * person, whose name and password were chosen already; the page only confirms the address.
   */
  async invitationFor(token: string, now = new Date()): Promise<LinkCheck<InvitationForPage>> {
    if (!looksLikeLinkToken(token)) return { ok: false, status: 'unknown' };
    const invitation = await this.people.findInvitationByToken(hashLinkToken(token));
    if (!invitation) return { ok: false, status: 'unknown' };
    const status = linkStatus({ expiresAt: invitation.expiresAt, usedAt: invitation.acceptedAt, revokedAt: invitation.revokedAt }, now);
    if (status !== 'usable') return { ok: false, status };
    if (!(await this.inviterMayGrant(invitation))) return { ok: false, status: 'revoked' };
    const workspace = await this.workspaces.find(invitation.workspaceId);
    return {
      ok: true,
      value: {
        email: invitation.email,
        role: invitation.role,
        workspaceName: workspace?.name ?? 'Herald',
        firstPerson: invitation.firstPerson,
        name: invitation.personName,
      },
    };
  }

  /**
   * Opening the link and setting a name and password makes the person; the link is used up. A
   * first person's link only confirms the address: their name and password were chosen when they
   * were added (`input` is not read). Refused as withdrawn when the inviter may no longer grant
   * the role.
   */
  async acceptInvitation(token: string, input: { name: string; password: string }, now = new Date()): Promise<LinkCheck<AuthContext>> {
    if (!looksLikeLinkToken(token)) return { ok: false, status: 'unknown' };
    const peek = await this.people.findInvitationByToken(hashLinkToken(token));
    if (!peek) return { ok: false, status: 'unknown' };
    let chosen: { name: string; passwordHash: string } | null = null;
    if (!peek.firstPerson) {
      const { name, password } = this.checked({ name: input.name, password: input.password, email: peek.email });
      chosen = { name, passwordHash: await this.hasher.hash(password) };
    }
    try {
      return await this.people.transaction(async (tx) => {
        await this.lockTeam(tx, peek.workspaceId);
        const invitation = await this.people.lockInvitationByToken(tx, hashLinkToken(token));
        if (!invitation) return { ok: false, status: 'unknown' };
        const status = linkStatus({ expiresAt: invitation.expiresAt, usedAt: invitation.acceptedAt, revokedAt: invitation.revokedAt }, now);
        if (status !== 'usable') return { ok: false, status };
        if (!(await this.inviterMayGrant(invitation, tx))) return { ok: false, status: 'revoked' };
        // An open first-person link holds both (invitations_first_person, invitations_hash_while_open).
        const who =
          invitation.firstPerson && invitation.personName !== null && invitation.passwordHash !== null
            ? { name: invitation.personName, passwordHash: invitation.passwordHash }
            : chosen;
        if (who === null) return { ok: false, status: 'unknown' };
        const { name } = who;
        const person = await this.people.insert(tx, {
          workspaceId: invitation.workspaceId,
          email: invitation.email,
          name,
          role: invitation.role,
          passwordHash: who.passwordHash,
        });
        await this.people.acceptInvitation(tx, invitation.id, person.id);
        const auth = this.contextOf(person);
        await this.audit.record(tx, auth, {
          kind: 'person',
          action: 'join',
          subjectId: person.id,
          summary: invitation.firstPerson
            ? `${personLabel(person)} confirmed their address and joined as the workspace's first person (owner), added by ${invitation.invitedBy}`
            : `${personLabel(person)} accepted the invitation of ${invitation.invitedBy} and joined as ${person.role}`,
          after: { email: person.email, name, role: person.role },
        });
        return { ok: true, value: auth };
      });
    } catch (err) {
      if (isUniqueViolation(err, EMAIL_TAKEN)) throw conflict(TAKEN);
      throw err;
    }
  }

  /** An owner changes a person's role (or name). A workspace with people keeps an owner among them. */
  async update(auth: AuthContext, id: string, change: { role?: Role; name?: string }): Promise<PersonView> {
    if (change.role !== undefined && !mayGrant(auth, change.role)) throw forbidden('only an owner may change roles');
    const name = change.name !== undefined ? this.checked({ name: change.name }).name : undefined;
    return this.people.transaction(async (tx) => {
      await this.lockTeam(tx, auth.workspaceId);
      const person = await this.people.lockActive(tx, auth.workspaceId, id);
      if (!person) throw notFound('person', id);
      if (change.role !== undefined && change.role !== 'owner' && person.role === 'owner') {
        const owners = await this.people.lockOwners(tx, auth.workspaceId);
        if (owners.length <= 1) throw conflict(`${person.name} is the workspace's last owner: make someone else an owner first`);
      }
      const updated = await this.people.update(tx, id, { role: change.role, name });
      const before: Record<string, unknown> = {};
      const after: Record<string, unknown> = {};
      if (updated.role !== person.role) [before.role, after.role] = [person.role, updated.role];
      if (updated.name !== person.name) [before.name, after.name] = [person.name, updated.name];
      if (Object.keys(after).length > 0) {
        await this.audit.record(tx, auth, {
          kind: 'person',
          action: 'update',
          subjectId: id,
          summary:
            after.role !== undefined
              ? `Changed the role of ${personLabel(person)} from ${person.role} to ${updated.role}`
              : `Renamed ${personLabel(person)} to ${updated.name}`,
          before,
          after,
        });
      }
      return toPersonView(updated);
    });
  }

  /**
   * Removes a person: they cannot log in any more, and their open pages go to the login at their
   * next request (a session checks its person on every request). Kept for the audit trail.
   */
  async remove(auth: AuthContext, id: string): Promise<void> {
    await this.people.transaction(async (tx) => {
      await this.lockTeam(tx, auth.workspaceId);
      const person = await this.people.lockActive(tx, auth.workspaceId, id);
      if (!person) throw notFound('person', id);
      if (person.role === 'owner' && (await this.people.lockOwners(tx, auth.workspaceId)).length <= 1) {
        throw conflict(`${person.name} is the workspace's last owner: make someone else an owner first`);
      }
      await this.people.remove(tx, id);
      await this.audit.record(tx, auth, {
        kind: 'person',
        action: 'remove',
        subjectId: id,
        summary: `Removed ${personLabel(person)} (${person.role})`,
        before: { email: person.email, name: person.name, role: person.role },
      });
    });
  }

  /** An owner sends a person a password-reset link (mailed only: nobody else ever holds it). */
  async sendReset(auth: AuthContext, id: string, now = new Date()): Promise<{ mailed: boolean }> {
    await this.people.transaction(async (tx) => {
      const person = await this.people.lockActive(tx, auth.workspaceId, id);
      if (!person) throw notFound('person', id);
      await this.issueReset(tx, person, now);
      await this.audit.record(tx, auth, {
        kind: 'person',
        action: 'password_reset',
        subjectId: id,
        summary: `Sent ${personLabel(person)} a password-reset link`,
      });
    });
    return { mailed: this.mailsLinks };
  }

  /**
   * "Forgot your password?": a link to the address if it is a person's, at most one per
   * RESET_MAIL_EVERY_MS. The caller answers the same whatever happened here.
   */
  async requestReset(rawEmail: string, now = new Date()): Promise<void> {
    const email = normalizeEmail(rawEmail);
    if (emailProblem(email)) return;
    await this.people.transaction(async (tx) => {
      const person = await this.people.findActiveByEmail(email, tx);
      if (!person) return;
      const locked = await this.people.lockActive(tx, person.workspaceId, person.id);
      if (!locked || !resetMailAllowed(await this.people.lastResetAt(tx, person.id), now)) return;
      await this.issueReset(tx, locked, now);
      await this.audit.record(tx, this.contextOf(locked), {
        kind: 'person',
        action: 'password_reset',
        subjectId: locked.id,
        summary: `${personLabel(locked)} asked for a password-reset link`,
      });
    });
  }

  private async issueReset(tx: Sql, person: PersonRow, now: Date): Promise<void> {
    const token = newLinkToken();
    await this.people.insertReset(tx, person.id, hashLinkToken(token), expiryFrom(now, RESET_TTL_MS));
    const mail = resetMail({
      name: person.name,
      link: `${this.config.publicUrl}/settings/reset-password?token=${token}`,
      minutes: RESET_TTL_MS / 60_000,
    });
    await this.outbox.enqueue(tx, { workspaceId: person.workspaceId, kind: 'password_reset', recipients: [person.email], ...mail });
  }

  async resetFor(token: string, now = new Date()): Promise<LinkCheck<{ email: string }>> {
    if (!looksLikeLinkToken(token)) return { ok: false, status: 'unknown' };
    const reset = await this.people.findResetByToken(hashLinkToken(token));
    if (!reset) return { ok: false, status: 'unknown' };
    const status = linkStatus(reset, now);
    if (status !== 'usable') return { ok: false, status };
    const person = await this.people.findActive(reset.personId);
    return person ? { ok: true, value: { email: person.email } } : { ok: false, status: 'revoked' };
  }

  /** The new password from a reset link; the caller ends the person's other sessions. */
  async completeReset(token: string, password: string, now = new Date()): Promise<LinkCheck<AuthContext>> {
    if (!looksLikeLinkToken(token)) return { ok: false, status: 'unknown' };
    const peek = await this.people.findResetByToken(hashLinkToken(token));
    const person = peek ? await this.people.findActive(peek.personId) : null;
    if (!peek || !person) return { ok: false, status: peek ? 'revoked' : 'unknown' };
    this.checked({ email: person.email, password });
    const passwordHash = await this.hasher.hash(password);
    return this.people.transaction(async (tx) => {
      const reset = await this.people.lockResetByToken(tx, hashLinkToken(token));
      if (!reset) return { ok: false, status: 'unknown' };
      const status = linkStatus(reset, now);
      if (status !== 'usable') return { ok: false, status };
      const locked = await this.people.lockActive(tx, person.workspaceId, person.id);
      if (!locked) return { ok: false, status: 'revoked' };
      await this.people.useReset(tx, reset.id);
      await this.people.update(tx, locked.id, { passwordHash });
      const auth = this.contextOf(locked);
      await this.audit.record(tx, auth, {
        kind: 'person',
        action: 'password_change',
        subjectId: locked.id,
        summary: `${personLabel(locked)} set a new password with a reset link`,
      });
      return { ok: true, value: auth };
    });
  }

  /**
   * Is `current` this person's password? The caller counts wrong answers (SessionsService, under
   * the login throttle) before it calls setOwnPassword.
   */
  async verifyOwnPassword(auth: AuthContext, current: string): Promise<boolean> {
    if (auth.principal.kind !== 'person') return false;
    const person = await this.people.findActive(auth.principal.id);
    if (!person || current.length === 0 || current.length > 4 * 256) return false;
    return this.hasher.verify(person.passwordHash, current);
  }

  /**
   * A person's new password, once the current one was checked (verifyOwnPassword). Reset links
   * sent before stop working: they were for the password that is gone.
   */
  async setOwnPassword(auth: AuthContext, next: string): Promise<void> {
    if (auth.principal.kind !== 'person') throw invalidInput('only a person has a password: this session was opened with an API key');
    const person = await this.people.findActive(auth.principal.id);
    if (!person) throw notFound('person', auth.principal.id);
    this.checked({ email: person.email, password: next });
    const passwordHash = await this.hasher.hash(next);
    await this.people.transaction(async (tx) => {
      await this.people.update(tx, person.id, { passwordHash });
      await this.people.revokeOpenResets(tx, person.id);
      await this.audit.record(tx, auth, {
        kind: 'person',
        action: 'password_change',
        subjectId: person.id,
        summary: `${personLabel(person)} changed their password`,
      });
    });
  }

  /**
   * The context of a login with an address and a password, or null. A wrong password and an
   * unknown address cost the same (a decoy verification) and give the same null.
   */
  async verifyLogin(rawEmail: string, password: string): Promise<AuthContext | null> {
    const email = normalizeEmail(rawEmail);
    if (password.length === 0 || password.length > 4 * 256) return null;
    const person = emailProblem(email) ? null : await this.people.findActiveByEmail(email);
    if (!person) return this.hasher.verifyDecoy(password).then(() => null);
    if (!(await this.hasher.verify(person.passwordHash, password))) return null;
    if (this.hasher.needsRehash(person.passwordHash)) {
      // Parameters were raised since this hash was made: keep the password, stronger.
      const passwordHash = await this.hasher.hash(password);
      await this.people.transaction((tx) => this.people.update(tx, person.id, { passwordHash }));
    }
    return this.contextOf(person);
  }

  /** The context of a person while they are in the workspace, else null (removed). */
  async activePerson(id: string): Promise<AuthContext | null> {
    const person = await this.people.findActive(id);
    return person ? this.contextOf(person) : null;
  }

  private contextOf(p: PersonRow): AuthContext {
    return { workspaceId: p.workspaceId, role: p.role, bootstrap: false, principal: { kind: 'person', id: p.id }, label: personLabel(p) };
  }
}
