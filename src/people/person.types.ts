import type { Principal } from '../access/auth-context';
import type { Role } from '../access/roles';

/** A row of `people`. */
export interface PersonRow {
  id: string;
  workspaceId: string;
  email: string;
  name: string;
  role: Role;
  passwordHash: string;
  createdAt: Date;
  removedAt: Date | null;
}

/** A person as the API and the page show them (never the password hash). */
export interface PersonView {
  id: string;
  email: string;
  name: string;
  role: Role;
  createdAt: string;
}

export function toPersonView(p: PersonRow): PersonView {
  return { id: p.id, email: p.email, name: p.name, role: p.role, createdAt: p.createdAt.toISOString() };
}

/** How the audit trail and the page name a person. */
export function personLabel(p: Pick<PersonRow, 'name' | 'email'>): string {
  return `${p.name} <${p.email}>`;
}

/** A row of `invitations`. */
export interface InvitationRow {
  id: string;
  workspaceId: string;
  email: string;
  role: Role;
  /** The inviter's name as it was then, for people to read. */
  invitedBy: string;
  /** Who invited (null only on links closed before inviters were stored): their rights are checked at acceptance. */
  inviter: Principal | null;
  createdAt: Date;
  expiresAt: Date;
  acceptedAt: Date | null;
  revokedAt: Date | null;
  /**
   * A workspace's first person waiting for their address to be proven: the name and the password
   * hash the key holder chose wait here (the hash only while the link is open).
   */
  firstPerson: boolean;
  personName: string | null;
  passwordHash: string | null;
}

export interface InvitationView {
  id: string;
  email: string;
  role: Role;
  invitedBy: string;
  createdAt: string;
  expiresAt: string;
  /**
   * `pending` until used, revoked, or past its expiry; `revoked` too once its inviter may no
   * longer grant its role (removed, another role, a revoked key).
   */
  status: 'pending' | 'accepted' | 'revoked' | 'expired';
  /** The workspace's first person, waiting for their address to be confirmed by the link. */
  firstPerson: boolean;
}

/** `inviterLostRights`: its inviter may no longer grant its role, so its link is withdrawn. */
export function toInvitationView(i: InvitationRow, now: Date, inviterLostRights = false): InvitationView {
  const status = i.acceptedAt
    ? 'accepted'
    : i.revokedAt || inviterLostRights
      ? 'revoked'
      : now.getTime() >= i.expiresAt.getTime()
        ? 'expired'
        : 'pending';
  return {
    id: i.id,
    email: i.email,
    role: i.role,
    invitedBy: i.invitedBy,
    createdAt: i.createdAt.toISOString(),
    expiresAt: i.expiresAt.toISOString(),
    status,
    firstPerson: i.firstPerson,
  };
}

/**
 * A new invitation: the link is in the answer only when no mail server is configured (the owner
 * passes it on). Also the answer for a first person waiting for their address to be confirmed.
 */
export interface NewInvitationView {
  invitation: InvitationView;
  /** True when the link went out by mail (SMTP_URL is set). */
  mailed: boolean;
  /** The one-use link, when it was not mailed (no SMTP server): shown this once, stored only hashed. */
  link: string | null;
}
