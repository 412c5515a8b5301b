import fc from 'fast-check';
import type { Role } from '../access/roles';
import { APPROVAL_MODES, deadlinePassed, mayDecide, needsApproval } from './approval-policy';
import { sql } from '../database/statement';
import { ApprovalRequiredRead } from './approval-policy.service';
import { APPROVAL_OPERATIONS, APPROVAL_STATES, APPROVAL_TRANSITIONS, approvalTransition } from './approval-transitions';

const ROLES: Role[] = ['owner', 'editor', 'viewer'];

describe('needsApproval', () => {
  it('decides the same from the mode a carrying statement read (ApprovalRequiredRead), no row being the default, off', () => {
    for (const role of ROLES) {
      for (const mode of [...APPROVAL_MODES, null]) {
        const told: boolean[] = [];
        const read = new ApprovalRequiredRead(sql`(SELECT 1)`, role, (required) => told.push(required));
        expect(read.required).toBeNull();
        read.take(mode);
        expect(read.required).toBe(needsApproval(mode ?? 'off', role));
        expect(told).toEqual([read.required]);
      }
    }
  });

  it('asks nothing under off, editors only under editors, everyone under everyone', () => {
    expect(ROLES.map((r) => needsApproval('off', r))).toEqual([false, false, false]);
    expect(ROLES.map((r) => needsApproval('editors', r))).toEqual([false, true, false]);
    expect(ROLES.map((r) => needsApproval('everyone', r))).toEqual([true, true, true]);
  });
});

describe('mayDecide', () => {
  const owner = { kind: 'key' as const, id: 'k1', role: 'owner' as const };
  const reviewer = { kind: 'reviewer' as const, id: 'link-1' };

  it('lets owners decide, not editors or viewers, with a reason that names the role', () => {
    expect(mayDecide({ mode: 'editors', clientApproval: false }, owner, { kind: 'key', id: 'k2' })).toEqual({ ok: true });
    expect(mayDecide({ mode: 'editors', clientApproval: false }, { ...owner, role: 'editor' }, null)).toEqual({
      ok: false,
      reason: 'only an owner may approve or reject a post (you are an editor)',
    });
  });

  it('refuses the author under everyone (an owner other than the author), not under editors', () => {
    const author = { kind: 'key' as const, id: 'k1' };
    expect(mayDecide({ mode: 'everyone', clientApproval: false }, owner, author)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/other than its author/),
    });
    expect(mayDecide({ mode: 'editors', clientApproval: false }, owner, author)).toEqual({ ok: true });
    // The same id of another kind (a person and a key) is not the same author.
    expect(mayDecide({ mode: 'everyone', clientApproval: false }, owner, { kind: 'person', id: 'k1' })).toEqual({ ok: true });
  });

  it("counts a reviewer's decision only with client approval on, whatever the mode", () => {
    fc.assert(
      fc.property(fc.constantFrom(...APPROVAL_MODES), fc.boolean(), (mode, clientApproval) => {
        expect(mayDecide({ mode, clientApproval }, reviewer, null).ok).toBe(clientApproval);
      }),
    );
  });
});

describe('deadlinePassed', () => {
  it('is true from the deadline on, never without one', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4_000_000_000_000 }), fc.integer({ min: -1_000_000, max: 1_000_000 }), (deadline, offset) => {
        expect(deadlinePassed(new Date(deadline), new Date(deadline + offset))).toBe(offset >= 0);
        expect(deadlinePassed(null, new Date(deadline + offset))).toBe(false);
      }),
    );
  });
});

describe('the approval table', () => {
  it('answers exactly once for every state, operation and facts (property)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...APPROVAL_STATES),
        fc.constantFrom(...APPROVAL_OPERATIONS),
        fc.boolean(),
        fc.boolean(),
        (from, op, approvalRequired, passed) => {
          const outcome = approvalTransition(from, op, { approvalRequired, deadlinePassed: passed });
          if (outcome.ok) expect(outcome.why.length).toBeGreaterThan(0);
          else expect(outcome.reason.length).toBeGreaterThan(0);
        },
      ),
    );
  });

  it('never writes jobs for a post that needs approval, and keeps expired terminal but for deletion', () => {
    expect(approvalTransition('draft', 'schedule', { approvalRequired: true, deadlinePassed: false })).toMatchObject({
      ok: true,
      to: 'pending_approval',
    });
    expect(approvalTransition('scheduled', 'edit', { approvalRequired: true, deadlinePassed: false })).toMatchObject({
      ok: true,
      to: 'pending_approval',
    });
    const fromExpired = APPROVAL_TRANSITIONS.filter((r) => r.from === 'expired' && r.refused === undefined);
    expect(fromExpired.map((r) => [r.op, r.to])).toEqual([['cancel', 'deleted']]);
  });

  it('approves into scheduled, or expired once the deadline has passed', () => {
    expect(approvalTransition('pending_approval', 'approve', { approvalRequired: false, deadlinePassed: false })).toMatchObject({
      to: 'scheduled',
    });
    expect(approvalTransition('pending_approval', 'approve', { approvalRequired: false, deadlinePassed: true })).toMatchObject({
      to: 'expired',
    });
    expect(approvalTransition('pending_approval', 'reject', { approvalRequired: false, deadlinePassed: true })).toMatchObject({
      to: 'draft',
    });
  });
});
