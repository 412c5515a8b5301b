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
  invitedBy: string;
  createdAt: Date;
  expiresAt: Date;
  acceptedAt: Date | null;
  revokedAt: Date | null;
}

export interface InvitationView {
  id: string;
  email: string;
  role: Role;
  invitedBy: string;
  createdAt: string;
  expiresAt: string;
  /** `pending` until used, revoked, or past its expiry. */
  status: 'pending' | 'accepted' | 'revoked' | 'expired';
}

export function toInvitationView(i: InvitationRow, now: Date): InvitationView {
  const status = i.acceptedAt ? 'accepted' : i.revokedAt ? 'revoked' : now.getTime() >= i.expiresAt.getTime() ? 'expired' : 'pending';
  return {
    id: i.id,
    email: i.email,
    role: i.role,
    invitedBy: i.invitedBy,
    createdAt: i.createdAt.toISOString(),
    expiresAt: i.expiresAt.toISOString(),
    status,
  };
}

/** A new invitation: the link is in the answer only when no mail server is configured (the owner passes it on). */
export interface NewInvitationView {
  invitation: InvitationView;
  /** True when the link went out by mail (SMTP_URL is set). */
  mailed: boolean;
  /** The one-use link, when it was not mailed (no SMTP server): shown this once, stored only hashed. */
  link: string | null;
}
