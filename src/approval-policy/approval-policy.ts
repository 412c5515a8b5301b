import type { Principal } from '../access/auth-context';
import type { Role } from '../access/roles';

/**
 * Who needs approval, and who may give it (pure; docs/api.md "Approvals").
 *
 * - `off` (the default): nobody needs approval.
 * - `editors`: posts made by editors (people or API keys of role editor) need an owner's approval.
 * - `everyone`: every post needs the approval of an owner other than its author.
 *
 * `clientApproval`: whether a decision made through a client review link (a reviewer without an
 * account, who gave a name) counts.
 */
export const APPROVAL_MODES = ['off', 'editors', 'everyone'] as const;
export type ApprovalMode = (typeof APPROVAL_MODES)[number];

export interface ApprovalSettings {
  mode: ApprovalMode;
  clientApproval: boolean;
}

export const DEFAULT_APPROVAL_SETTINGS: ApprovalSettings = { mode: 'off', clientApproval: false };

/** Does a post made (or edited) by a caller of `role` need approval under `mode`? */
export function needsApproval(mode: ApprovalMode, role: Role): boolean {
  switch (mode) {
    case 'off':
      return false;
    case 'editors':
      return role === 'editor';
    case 'everyone':
      // A viewer makes no posts; counted for completeness (a post by anyone needs approval).
      return true;
  }
}

/** Who decides: a person or an API key (with a role), or a reviewer of a client review link. */
export type DecidingActor = { kind: 'person' | 'key'; id: string; role: Role } | { kind: 'reviewer'; id: string };

/**
 * May `by` approve or reject a post whose author is `author`, under `settings`? The reason is a
 * sentence for a 403 (the caller may show it as it is).
 */
export function mayDecide(
  settings: ApprovalSettings,
  by: DecidingActor,
  author: Principal | null,
): { ok: true } | { ok: false; reason: string } {
  if (by.kind === 'reviewer') {
    if (!settings.clientApproval) {
      return { ok: false, reason: "client approval is off in this workspace: a reviewer's decision does not count (an owner decides)" };
    }
    return { ok: true };
  }
  if (by.role !== 'owner')
    return { ok: false, reason: `only an owner may approve or reject a post (you are ${by.role === 'editor' ? 'an editor' : 'a viewer'})` };
  if (settings.mode === 'everyone' && author !== null && author.kind === by.kind && author.id === by.id) {
    return {
      ok: false,
      reason: 'the approval mode is "everyone": a post needs the approval of an owner other than its author, and you are its author',
    };
  }
  return { ok: true };
}

/** Has a post's deadline passed at `now`? (no deadline: never) */
export function deadlinePassed(publishBy: Date | null, now: Date): boolean {
  return publishBy !== null && publishBy.getTime() <= now.getTime();
}
