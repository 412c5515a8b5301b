import { Injectable } from '@nestjs/common';
import type { AuthContext } from '../access/auth-context';
import { ApprovalMode, needsApproval } from '../approval-policy/approval-policy';
import { ApprovalDecisionView, ApprovalPolicyService } from '../approval-policy/approval-policy.service';
import { PostApprovals, PostDecider } from '../posts/post-approvals.service';
import type { PostView } from '../posts/post.types';
import type { ListPostsQuery } from '../posts/posts.dto';
import { PostsService } from '../posts/posts.service';

export type { ApprovalDecisionView } from '../approval-policy/approval-policy.service';

/** A reviewer of a client review link: no account, the name they gave, the link they came through. */
export interface ReviewerDecider {
  kind: 'reviewer';
  name: string;
  shareLinkId: string;
}

/** Who approves or rejects: a member of the workspace (person or API key) or a reviewer. */
export type Decider = AuthContext | ReviewerDecider;

function isReviewer(by: Decider): by is ReviewerDecider {
  return (by as ReviewerDecider).kind === 'reviewer';
}

function toPostDecider(by: Decider): PostDecider {
  return isReviewer(by) ? { kind: 'reviewer', name: by.name, shareLinkId: by.shareLinkId } : { kind: 'member', auth: by };
}

/**
 * Approvals (docs/api.md "Approvals"): the workspace's setting, submitting a draft, and the
 * decisions, for the API, the settings page, client review links and MCP alike. The post's side
 * of each step runs in the posts module (PostApprovals, under the post's locks); the setting and
 * the record of steps in approval-policy.
 *
 * A reviewer's decision counts only when the workspace's `clientApproval` is on: otherwise
 * approve and reject answer 403 with a message the review page can show as it is.
 */
@Injectable()
export class ApprovalsService {
  constructor(
    private readonly policy: ApprovalPolicyService,
    private readonly postApprovals: PostApprovals,
    private readonly posts: PostsService,
  ) {}

  settings(workspaceId: string): Promise<{ mode: ApprovalMode; clientApproval: boolean }> {
    return this.policy.settings(workspaceId);
  }

  updateSettings(
    auth: AuthContext,
    next: { mode: ApprovalMode; clientApproval: boolean },
  ): Promise<{ mode: ApprovalMode; clientApproval: boolean }> {
    return this.policy.updateSettings(auth, next);
  }

  /** Would a post made (or edited) by `auth` need approval now? (the composer says "Submit for approval") */
  async requiredOf(auth: AuthContext): Promise<boolean> {
    return needsApproval((await this.policy.settings(auth.workspaceId)).mode, auth.role);
  }

  submit(auth: AuthContext, postId: string): Promise<PostView> {
    return this.postApprovals.submit(auth, postId);
  }

  approve(workspaceId: string, postId: string, by: Decider): Promise<PostView> {
    return this.postApprovals.approve(workspaceId, postId, toPostDecider(by));
  }

  reject(workspaceId: string, postId: string, by: Decider, comment: string): Promise<PostView> {
    return this.postApprovals.reject(workspaceId, postId, toPostDecider(by), comment);
  }

  /** GET /v1/posts/{id}/approvals: every step, oldest first (404 for an unknown post). */
  async history(workspaceId: string, postId: string): Promise<ApprovalDecisionView[]> {
    await this.posts.get(workspaceId, postId);
    return this.policy.history(workspaceId, postId);
  }

  /** The posts waiting for approval, oldest first (the settings page's list), at most `limit`. */
  async waiting(workspaceId: string, limit = 100): Promise<PostView[]> {
    const query: ListPostsQuery = { status: 'pending_approval', limit };
    const page = await this.posts.list(workspaceId, query);
    return [...page.data].reverse();
  }

  /** Each post's latest approval step (the page shows a rejected draft's comment). */
  latest(workspaceId: string, postIds: string[]): Promise<Map<string, ApprovalDecisionView>> {
    return this.policy.latest(workspaceId, postIds);
  }
}
