import fc from 'fast-check';
import { allows, Caller, mayGrant, mayRevokeKey, Permission, PERMISSIONS, rank, ROLES, whoMay } from './roles';

const callers: Caller[] = [...ROLES.map((role) => ({ role, bootstrap: false })), { role: 'owner', bootstrap: true }];
const arbCaller = fc.constantFrom(...callers);

describe('roles', () => {
  it('follows the table: owner everything, editor edits, viewer reads, the bootstrap key alone creates workspaces', () => {
    const table = Object.fromEntries(
      callers.map((c) => [`${c.role}${c.bootstrap ? '+bootstrap' : ''}`, PERMISSIONS.filter((p) => allows(c, p))]),
    );
    expect(table).toEqual({
      owner: ['public', 'read', 'edit', 'own'],
      editor: ['public', 'read', 'edit'],
      viewer: ['public', 'read'],
      'owner+bootstrap': ['public', 'read', 'edit', 'own', 'instance'],
    });
  });

  it('never lets a lower rank do what a higher one may not', () => {
    fc.assert(
      fc.property(arbCaller, arbCaller, fc.constantFrom<Permission>(...PERMISSIONS), (a, b, p) => {
        if (rank(a) <= rank(b) && allows(a, p)) return allows(b, p);
        return true;
      }),
    );
  });

  it('lets only owners revoke keys, never one of a higher rank, and never the bootstrap key', () => {
    const owner = { role: 'owner', bootstrap: false } as const;
    const bootstrap = { role: 'owner', bootstrap: true } as const;
    expect(mayRevokeKey(owner, { role: 'viewer', bootstrap: false })).toEqual({ ok: true });
    expect(mayRevokeKey(owner, owner)).toEqual({ ok: true });
    expect(mayRevokeKey(owner, bootstrap)).toEqual({ ok: false, reason: expect.stringContaining('HERALD_API_KEY') });
    expect(mayRevokeKey(bootstrap, bootstrap).ok).toBe(false);
    expect(mayRevokeKey({ role: 'editor', bootstrap: false }, { role: 'viewer', bootstrap: false })).toEqual({
      ok: false,
      reason: 'only an owner may revoke API keys',
    });
    fc.assert(
      fc.property(arbCaller, arbCaller, (a, target) => {
        const d = mayRevokeKey(a, target);
        return !d.ok || (a.role === 'owner' && !target.bootstrap && rank(target) <= rank(a));
      }),
    );
  });

  it('lets only owners grant roles', () => {
    for (const c of callers) for (const r of ROLES) expect(mayGrant(c, r)).toBe(c.role === 'owner');
  });

  it('says who may, in words, for every permission', () => {
    for (const p of PERMISSIONS) expect(whoMay(p).length).toBeGreaterThan(3);
    expect(whoMay('edit')).toBe('an editor or an owner');
  });
});
