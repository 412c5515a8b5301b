import { Injectable } from '@nestjs/common';
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
  | { kind: 'recorded'; comment: CommentView; decided: 'none' | 'approved' | 'rejected' };

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
  ) {}

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

  /** A post's comments as the review page shows them (the link's own post only). */
  async commentsOn(link: OpenShareLink, postId: string): Promise<CommentView[]> {
    if (!link.postIds.includes(postId)) return [];
    return (await this.comments.list(link.workspaceId, postId, 200)).data;
  }

  async answer(token: string, postId: string, answer: ReviewerAnswer, now = new Date()): Promise<ReviewAnswerOutcome> {
    const link = await this.links.open(token, now);
    if (!link || !link.postIds.includes(postId.toLowerCase())) return { kind: 'gone' };
    const post = await this.posts.get(link.workspaceId, postId.toLowerCase()).catch(() => null);
    if (!post) return { kind: 'gone' };
    const plan = planReviewerAnswer(answer, false, (post.status as string) === 'pending_approval');
    if (!plan.ok) return { kind: 'invalid', field: plan.field, message: plan.message };
    const comment = await this.comments.addAsReviewer(link.workspaceId, post.id, link.id, plan.comment);
    return { kind: 'recorded', comment, decided: 'none' };
  }
}
