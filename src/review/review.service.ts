import { Injectable } from '@nestjs/common';
import { ApprovalsService } from '../approvals/approvals.service';
import { DomainError, ErrorCode } from '../common/errors';
import type { PostView } from '../posts/post.types';
import { PostsService } from '../posts/posts.service';
import { CommentsService } from './comments.service';
import { planReviewerAnswer, type ReviewerAnswer } from './reviewer-decision';
import type { CommentView } from './review.types';
import { OpenShareLink, ShareLinksService } from './share-links.service';

/** What a review page shows: the link's posts, in its order (a post deleted since is left out). */
export interface ReviewSet {
  link: OpenShareLink;
  posts: PostView[];
}

export type ReviewAnswerOutcome =
  /** The token opens nothing (unknown, expired, revoked), or the post is not one of the link's. */
  | { kind: 'gone' }
  | { kind: 'invalid'; field: 'name' | 'comment' | 'action'; message: string }
  | {
      kind: 'recorded';
      comment: CommentView;
      /** What the answer did to the post: nothing (advice for the team), approved it, or sent it back. */
      decided: 'none' | 'approved' | 'rejected';
      /** Why a decision the reviewer asked for was not taken (the post changed meanwhile); null otherwise. */
      notTaken: string | null;
    };

/**
 * The review page's side of a link: which posts a token shows, and a reviewer's answer. The
 * token is the only proof: every call opens the link again (it may have been revoked a second
 * ago), and a post outside the link's set is treated exactly like an unknown token.
 */
@Injectable()
export class ReviewService {
  constructor(
    private readonly links: ShareLinksService,
    private readonly posts: PostsService,
    private readonly comments: CommentsService,
    private readonly approvals: ApprovalsService,
  ) {}

  /** Whether a reviewer's decision counts in the link's workspace (its approval settings' clientApproval). */
  async clientApproval(link: OpenShareLink): Promise<boolean> {
    return (await this.approvals.settings(link.workspaceId)).clientApproval;
  }

  async open(token: string, now = new Date()): Promise<ReviewSet | null> {
    const link = await this.links.open(token, now);
    if (!link) return null;
    const posts: PostView[] = [];
    for (const id of link.postIds) {
      const post = await this.posts.get(link.workspaceId, id).catch(() => null);
      if (post) posts.push(post);
    }
    return posts.length === 0 ? null : { link, posts };
  }

  /**
   * The comments a review page shows under one of its posts: the answers given through this same
   * link, never the team's own comments nor other links' reviewers (the page shows nothing else
   * of the workspace).
   */
  async commentsOn(link: OpenShareLink, postId: string): Promise<CommentView[]> {
    if (!link.postIds.includes(postId)) return [];
    return (await this.comments.list(link.workspaceId, postId, 200)).data.filter((c) => c.author.shareLinkId === link.id);
  }

  async answer(token: string, postId: string, answer: ReviewerAnswer, now = new Date()): Promise<ReviewAnswerOutcome> {
    const link = await this.links.open(token, now);
    if (!link || !link.postIds.includes(postId.toLowerCase())) return { kind: 'gone' };
    const post = await this.posts.get(link.workspaceId, postId.toLowerCase()).catch(() => null);
    if (!post) return { kind: 'gone' };
    const plan = planReviewerAnswer(answer, await this.clientApproval(link), post.status === 'pending_approval');
    if (!plan.ok) return { kind: 'invalid', field: plan.field, message: plan.message };
    // The decision first, through the approvals (which record it in their own trail and mail the
    // author); then the answer as a comment, whatever became of the decision, so the team always
    // reads it beside the post. A decision refused because the post changed since the page was
    // loaded (someone decided first, it was edited back to draft) leaves the comment as advice.
    const by = { kind: 'reviewer' as const, name: plan.comment.name, shareLinkId: link.id };
    let decided: 'none' | 'approved' | 'rejected' = 'none';
    let notTaken: string | null = null;
    try {
      if (plan.decision === 'approve') {
        await this.approvals.approve(link.workspaceId, post.id, by);
        decided = 'approved';
      } else if (plan.decision === 'reject') {
        await this.approvals.reject(link.workspaceId, post.id, by, plan.comment.body);
        decided = 'rejected';
      }
    } catch (err) {
      if (!(err instanceof DomainError) || (err.code !== ErrorCode.Conflict && err.code !== ErrorCode.Forbidden)) throw err;
      notTaken = err.message;
    }
    const comment = await this.comments.addAsReviewer(link.workspaceId, post.id, link.id, plan.comment);
    return { kind: 'recorded', comment, decided, notTaken };
  }
}
