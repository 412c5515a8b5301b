/**
 * Roles and what they allow (pure). One workspace role per person and per API key:
 *
 * | role   | may                                                                                             |
 * |--------|-------------------------------------------------------------------------------------------------|
 * | owner  | everything in the workspace: people, API keys, notification recipients, accounts, posts, failed posts; approve or reject posts waiting for approval, the approval mode |
 * | editor | connect, reconnect, check, disable accounts; schedule, edit, cancel posts, submit them for approval; edit, requeue, discard failed posts |
 * | viewer | read everything the page and the API show, change nothing                                       |
 *
 * Which route needs what is route-permissions.ts, the one table both guards (API and page) read.
 */

export type Role = 'owner' | 'editor' | 'viewer';
export const ROLES: readonly Role[] = ['owner', 'editor', 'viewer'];

/**
 * What a route needs:
 * - `public`: nobody needs to be logged in (the page's login, invitation and reset forms);
 * - `read`: any role;
 * - `edit`: editor or owner (accounts, posts, failed posts, media);
 * - `own`: owner (people, API keys, notification recipients, removing accounts, the audit trail,
 *   approving or rejecting posts and the approval mode: under mode `everyone` an owner may not
 *   approve their own post, which the approvals service refuses with a 403 of its own);
 * - `instance`: the operator's bootstrap key only (creating workspaces).
 */
export type Permission = 'public' | 'read' | 'edit' | 'own' | 'instance';
export const PERMISSIONS: readonly Permission[] = ['public', 'read', 'edit', 'own', 'instance'];

/** Who is asking: a role in a workspace, and whether it is the operator's bootstrap key. */
export interface Caller {
  role: Role;
  bootstrap: boolean;
}

const RANK: Record<Role, number> = { viewer: 0, editor: 1, owner: 2 };

/** The rank used to compare keys: the bootstrap key is above every workspace owner. */
export function rank(c: Caller): number {
  return RANK[c.role] + (c.bootstrap ? 1 : 0);
}

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value);
}

/** May `caller` use a route that needs `permission`? */
export function allows(caller: Caller, permission: Permission): boolean {
  switch (permission) {
    case 'public':
    case 'read':
      return true;
    case 'edit':
      return caller.role === 'owner' || caller.role === 'editor';
    case 'own':
      return caller.role === 'owner';
    case 'instance':
      return caller.bootstrap;
  }
}

/** The lowest role a permission needs, in words, for 403 messages and the docs. */
export function whoMay(permission: Permission): string {
  switch (permission) {
    case 'public':
      return 'anyone';
    case 'read':
      return 'any role (viewer, editor, owner)';
    case 'edit':
      return 'an editor or an owner';
    case 'own':
      return 'an owner';
    case 'instance':
      return "the operator's bootstrap key (HERALD_API_KEY, or the key printed at the first start)";
  }
}

/**
 * May `caller` revoke `target`? Only owners revoke keys, no key revokes a key of a higher rank,
 * and nobody revokes the bootstrap key through the API: it is the operator's, replaced only by
 * changing HERALD_API_KEY (a workspace member must not be able to lock the operator out).
 */
export function mayRevokeKey(caller: Caller, target: Caller): { ok: true } | { ok: false; reason: string } {
  if (caller.role !== 'owner') return { ok: false, reason: 'only an owner may revoke API keys' };
  if (target.bootstrap) {
    return { ok: false, reason: "the operator's bootstrap key cannot be revoked through the API: change HERALD_API_KEY to replace it" };
  }
  if (rank(target) > rank(caller)) return { ok: false, reason: `a key of role ${target.role} outranks yours` };
  return { ok: true };
}

/** May `caller` give a key or a person `role`? Owners only, and never above their own rank. */
export function mayGrant(caller: Caller, role: Role): boolean {
  return caller.role === 'owner' && RANK[role] <= RANK[caller.role];
}
