/**
 * What a reviewer's answer on a review page does (pure). A reviewer (someone without an account,
 * through a link) may approve, ask for changes (with a comment) or only comment. Their answer is
 * always kept as a comment with its verdict, so the team reads it beside the post; it also
 * approves or sends the post back through the approvals only when the workspace lets a client's
 * decision count (`clientApproval`) and the post is waiting for approval.
 */

export const REVIEWER_ACTIONS = ['approve', 'request_changes', 'comment'] as const;
export type ReviewerAction = (typeof REVIEWER_ACTIONS)[number];

export type Verdict = 'approved' | 'changes_requested';

export const MAX_REVIEWER_NAME = 80;
export const MAX_COMMENT = 2000;

export interface ReviewerAnswer {
  action: ReviewerAction;
  name: string;
  comment: string;
}

export type ReviewerPlan =
  | { ok: false; field: 'name' | 'comment' | 'action'; message: string }
  | {
      ok: true;
      /** The comment to keep: its verdict (null for a plain comment) and its text (trimmed). */
      comment: { name: string; verdict: Verdict | null; body: string };
      /** What to ask the approvals for: nothing, an approval, or a rejection with the comment. */
      decision: 'none' | 'approve' | 'reject';
    };

export function isReviewerAction(value: unknown): value is ReviewerAction {
  return typeof value === 'string' && (REVIEWER_ACTIONS as readonly string[]).includes(value);
}

/** Characters as a person counts them (code points), so an emoji is one. */
const length = (s: string) => [...s].length;

/**
 * Checks a reviewer's answer and says what it does. `clientApproval`: the workspace lets a
 * client's decision count; `pendingApproval`: the post waits for one.
 */
export function planReviewerAnswer(answer: ReviewerAnswer, clientApproval: boolean, pendingApproval: boolean): ReviewerPlan {
  const name = answer.name.trim();
  const body = answer.comment.trim();
  if (name === '') return { ok: false, field: 'name', message: 'Your name is needed (1 to 80 characters): the team sees who answered.' };
  if (length(name) > MAX_REVIEWER_NAME)
    return { ok: false, field: 'name', message: `Your name is ${length(name)} characters; at most ${MAX_REVIEWER_NAME}.` };
  if (length(body) > MAX_COMMENT)
    return { ok: false, field: 'comment', message: `The comment is ${length(body)} characters; at most ${MAX_COMMENT}.` };
  const counts = clientApproval && pendingApproval;
  switch (answer.action) {
    case 'approve':
      return { ok: true, comment: { name, verdict: 'approved', body }, decision: counts ? 'approve' : 'none' };
    case 'request_changes':
      if (body === '') return { ok: false, field: 'comment', message: 'Say what should change: a comment is needed to ask for changes.' };
      return { ok: true, comment: { name, verdict: 'changes_requested', body }, decision: counts ? 'reject' : 'none' };
    case 'comment':
      if (body === '') return { ok: false, field: 'comment', message: 'The comment is empty.' };
      return { ok: true, comment: { name, verdict: null, body }, decision: 'none' };
  }
}

/** How a verdict reads for the team ("approved", "changes requested"). */
export function verdictWords(verdict: Verdict | null): string | null {
  return verdict === 'approved' ? 'approved' : verdict === 'changes_requested' ? 'changes requested' : null;
}
