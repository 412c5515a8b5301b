import fc from 'fast-check';
import { planReviewerAnswer, REVIEWER_ACTIONS, verdictWords } from './reviewer-decision';

describe("a reviewer's answer", () => {
  it('keeps an approval as a comment with its verdict, and approves only when client approval counts and the post waits', () => {
    const answer = { action: 'approve' as const, name: ' Ada ', comment: '' };
    expect(planReviewerAnswer(answer, true, true)).toEqual({
      ok: true,
      comment: { name: 'Ada', verdict: 'approved', body: '' },
      decision: 'approve',
    });
    expect(planReviewerAnswer(answer, false, true)).toMatchObject({ ok: true, decision: 'none', comment: { verdict: 'approved' } });
    expect(planReviewerAnswer(answer, true, false)).toMatchObject({ ok: true, decision: 'none' });
  });

  it('needs a comment to ask for changes, and sends the post back only when client approval counts', () => {
    expect(planReviewerAnswer({ action: 'request_changes', name: 'Ada', comment: '  ' }, true, true)).toMatchObject({
      ok: false,
      field: 'comment',
    });
    expect(planReviewerAnswer({ action: 'request_changes', name: 'Ada', comment: 'Shorter, please' }, true, true)).toEqual({
      ok: true,
      comment: { name: 'Ada', verdict: 'changes_requested', body: 'Shorter, please' },
      decision: 'reject',
    });
    expect(planReviewerAnswer({ action: 'request_changes', name: 'Ada', comment: 'Shorter' }, false, true)).toMatchObject({
      decision: 'none',
    });
  });

  it('takes a plain comment with no verdict and decides nothing; an empty one is refused', () => {
    expect(planReviewerAnswer({ action: 'comment', name: 'Ada', comment: 'Nice' }, true, true)).toMatchObject({
      ok: true,
      comment: { verdict: null },
      decision: 'none',
    });
    expect(planReviewerAnswer({ action: 'comment', name: 'Ada', comment: '' }, true, true)).toMatchObject({ ok: false, field: 'comment' });
  });

  it('needs a name of 1 to 80 characters (counted as code points: an emoji such as 😀 is one) and a comment of at most 2,000', () => {
    expect(planReviewerAnswer({ action: 'approve', name: '  ', comment: '' }, false, false)).toMatchObject({ ok: false, field: 'name' });
    expect(planReviewerAnswer({ action: 'approve', name: 'a'.repeat(81), comment: '' }, false, false)).toMatchObject({
      ok: false,
      field: 'name',
    });
    expect(planReviewerAnswer({ action: 'approve', name: '😀'.repeat(80), comment: '' }, false, false).ok).toBe(true);
    expect(planReviewerAnswer({ action: 'comment', name: 'Ada', comment: 'x'.repeat(2001) }, false, false)).toMatchObject({
      ok: false,
      field: 'comment',
    });
  });

  it('never decides anything unless client approval counts and the post waits (property)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...REVIEWER_ACTIONS),
        fc.string({ maxLength: 90 }),
        fc.string({ maxLength: 50 }),
        fc.boolean(),
        fc.boolean(),
        (action, name, comment, clientApproval, pending) => {
          const plan = planReviewerAnswer({ action, name, comment }, clientApproval, pending);
          if (!plan.ok) return;
          if (!(clientApproval && pending)) expect(plan.decision).toBe('none');
          if (plan.decision === 'reject') expect(plan.comment.body.length).toBeGreaterThan(0);
          expect(plan.comment.name).toBe(plan.comment.name.trim());
          expect([...plan.comment.name].length).toBeGreaterThanOrEqual(1);
        },
      ),
    );
  });

  it('reads verdicts as the team does', () => {
    expect([verdictWords('approved'), verdictWords('changes_requested'), verdictWords(null)]).toEqual([
      'approved',
      'changes requested',
      null,
    ]);
  });
});
