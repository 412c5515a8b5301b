import { Injectable } from '@nestjs/common';
import type { AuthContext } from '../access/auth-context';
import { deadlinePassed, DecidingActor, mayDecide } from '../approval-policy/approval-policy';
import { ApprovalPolicyService, stepActorOf, StepActor } from '../approval-policy/approval-policy.service';
import { ApprovalState, approvalTransition } from '../approval-policy/approval-transitions';
import { AuditService } from '../audit/audit.service';
import type { AuditActor, NewAuditEntry } from '../audit/audit.types';
import { conflict, forbidden, invalidInput, notFound } from '../common/errors';
import type { Sql } from '../database/db';
import { JobLifecycle } from '../queue/job-lifecycle.service';
import type { PostRow, PostView } from './post.types';
import { PostsRepository } from './posts.repository';
import { PostsService } from './posts.service';
import { approvalStateOf } from './approval-state';

export { approvalStateOf } from './approval-state';

/** Who decides: a member of the workspace (person or key, with a role), or a reviewer of a client review link. */
export type PostDecider = { kind: 'member'; auth: AuthContext } | { kind: 'reviewer'; name: string; shareLinkId: string };

/** A rejection's comment: 1 to 2,000 characters. */
export const COMMENT_MAX = 2000;

/**
 * The post's side of approvals: submit, approve, reject, each under the post's locks (its jobs,
 * then its row: the order of every change of a post), as the approval table
 * (approval-policy/approval-transitions.ts) says. Approve writes the jobs in the statement that
 * ends the wait (PostsService.writeJobs, as scheduling a draft does); two approvals at once wait
 * for each other on the row lock, and the second finds the post scheduled (409): jobs are written
 * once. Each step, its audit entry and its mail commit with the post's change.
 */
@Injectable()
export class PostApprovals {
  constructor(
    private readonly posts: PostsRepository,
    private readonly service: PostsService,
    private readonly lifecycle: JobLifecycle,
    private readonly policy: ApprovalPolicyService,
    private readonly audit: AuditService,
  ) {}

  /** POST /v1/posts/{id}/submit: a draft waits for approval (409 when approval is not required of this caller). */
  async submit(auth: AuthContext, id: string): Promise<PostView> {
    await this.posts.transaction(async (m) => {
      const { post, state } = await this.lock(m, auth.workspaceId, id);
      const outcome = approvalTransition(state, 'submit', { approvalRequired: await this.policy.required(auth, m), deadlinePassed: false });
      if (!outcome.ok) throw conflict(outcome.reason);
      // Owners are asked to approve only what could be scheduled: checked as scheduling checks it.
      await this.service.checkSchedulable(post);
      await this.posts.update(m, { ...post, approval: 'pending' });
      await this.policy.hold(m, auth, { postId: id, text: post.text, step: 'submitted' });
    });
    return this.service.get(auth.workspaceId, id);
  }

  /**
   * POST /v1/posts/{id}/approve: its jobs written (due at once when its time has passed), or, when
   * its deadline has passed, the post expires (nothing is published).
   */
  async approve(workspaceId: string, id: string, by: PostDecider, now = new Date()): Promise<PostView> {
    let wake: Date | null = null;
    await this.posts.transaction(async (m) => {
      const { post, state } = await this.lock(m, workspaceId, id);
      const author = await this.decidable(m, workspaceId, id, by);
      const outcome = approvalTransition(state, 'approve', { approvalRequired: true, deadlinePassed: deadlinePassed(post.publishBy, now) });
      if (!outcome.ok) throw conflict(outcome.reason);
      const actor = stepActorOfDecider(by);
      if (outcome.to === 'expired') {
        await this.posts.update(m, { ...post, approval: 'expired' });
        await this.policy.recordStep(m, { workspaceId, postId: id, step: 'expired', comment: null, actor });
        await this.record(m, workspaceId, by, {
          kind: 'post',
          action: 'expire',
          subjectId: id,
          summary: `Approved the post “${short(post.text)}” after its deadline (${post.publishBy?.toISOString()}): it expired, nothing was published`,
        });
        await this.policy.mailAuthor(m, { workspaceId, author, decision: 'expired', by: actor, text: post.text, comment: null });
        return;
      }
      // Approved after the time it asked for (or it asked for none): it goes out now.
      const asked = post.scheduledAt ?? now;
      const scheduledAt = asked.getTime() < now.getTime() ? now : asked;
      ({ wake } = await this.service.writeJobs(m, post, scheduledAt, post.publishBy, now));
      await this.policy.recordStep(m, { workspaceId, postId: id, step: 'approved', comment: null, actor });
      await this.record(m, workspaceId, by, {
        kind: 'post',
        action: 'approve',
        subjectId: id,
        summary: `Approved the post “${short(post.text)}”: scheduled for ${scheduledAt.toISOString()}`,
        before: { status: 'pending_approval' },
        after: { status: 'scheduled', scheduledAt: scheduledAt.toISOString() },
      });
      await this.policy.mailAuthor(m, { workspaceId, author, decision: 'approved', by: actor, text: post.text, comment: null });
    });
    if (wake !== null) this.service.jobsAdded(wake);
    return this.service.get(workspaceId, id);
  }

  /** POST /v1/posts/{id}/reject: back to its author as a draft (its time dropped), with the comment. */
  async reject(workspaceId: string, id: string, by: PostDecider, comment: string): Promise<PostView> {
    const text = typeof comment === 'string' ? comment.trim() : '';
    if (text.length === 0) throw invalidInput('comment: say why the post is sent back (1 to 2,000 characters)');
    if (text.length > COMMENT_MAX) throw invalidInput(`comment: at most ${COMMENT_MAX} characters (it has ${text.length})`);
    await this.posts.transaction(async (m) => {
      const { post, state } = await this.lock(m, workspaceId, id);
      const author = await this.decidable(m, workspaceId, id, by);
      const outcome = approvalTransition(state, 'reject', { approvalRequired: true, deadlinePassed: false });
      if (!outcome.ok) throw conflict(outcome.reason);
      const actor = stepActorOfDecider(by);
      await this.posts.update(m, { ...post, approval: null, scheduledAt: null, publishBy: null });
      await this.policy.recordStep(m, { workspaceId, postId: id, step: 'rejected', comment: text, actor });
      await this.record(m, workspaceId, by, {
        kind: 'post',
        action: 'reject',
        subjectId: id,
        summary: `Sent the post “${short(post.text)}” back to its author: ${short(text)}`,
        before: { status: 'pending_approval' },
        after: { status: 'draft', comment: text },
      });
      await this.policy.mailAuthor(m, { workspaceId, author, decision: 'rejected', by: actor, text: post.text, comment: text });
    });
    return this.service.get(workspaceId, id);
  }

  /** The post's jobs, then its row, locked (the order of every change of a post), and its approval state. */
  private async lock(m: Sql, workspaceId: string, id: string): Promise<{ post: PostRow; state: Exclude<ApprovalState, 'deleted'> }> {
    const jobs = await this.lifecycle.lockPostJobs(m, workspaceId, id);
    const post = await this.posts.find(workspaceId, id, m, true);
    if (!post) throw notFound('post', id);
    return { post, state: approvalStateOf(post, jobs) };
  }

  /** 403 unless `by` may decide on this post (approval-policy.ts mayDecide); the post's author. */
  private async decidable(m: Sql, workspaceId: string, id: string, by: PostDecider) {
    const author = await this.policy.author(m, workspaceId, id);
    const may = mayDecide(await this.policy.settings(workspaceId, m), decidingActorOf(by), author);
    if (!may.ok) throw forbidden(may.reason);
    return author;
  }

  private record(m: Sql, workspaceId: string, by: PostDecider, entry: NewAuditEntry): Promise<void> {
    return by.kind === 'member'
      ? this.audit.record(m, by.auth, entry)
      : this.audit.recordAs(m, workspaceId, reviewerAuditActor(by), [entry]);
  }
}

function decidingActorOf(by: PostDecider): DecidingActor {
  return by.kind === 'member'
    ? { kind: by.auth.principal.kind, id: by.auth.principal.id, role: by.auth.role }
    : { kind: 'reviewer', id: by.shareLinkId };
}

function stepActorOfDecider(by: PostDecider): StepActor {
  return by.kind === 'member' ? stepActorOf(by.auth) : { kind: 'reviewer', id: by.shareLinkId, label: by.name };
}

/** A reviewer has no account: the audit trail names them as they gave their name, through the review link. */
function reviewerAuditActor(by: { name: string; shareLinkId: string }): AuditActor {
  return { kind: 'system', id: null, label: `reviewer “${by.name}” (client review link ${by.shareLinkId})` };
}

function short(text: string): string {
  const chars = [...text.replace(/\s+/g, ' ').trim()];
  return chars.length > 60 ? `${chars.slice(0, 60).join('')}…` : chars.join('');
}
