import { Injectable } from '@nestjs/common';
import type { AuthContext } from '../access/auth-context';
import { AuditService } from '../audit/audit.service';
import { decodeCursor, DEFAULT_PAGE_SIZE, Page, toPage } from '../common/pagination';
import { invalidInput, notFound } from '../common/errors';
import { PostsService } from '../posts/posts.service';
import { CommentsRepository } from './comments.repository';
import { MAX_COMMENT, verdictWords, type Verdict } from './reviewer-decision';
import { CommentView, toCommentView } from './review.types';

/** The start of a comment in the audit trail's sentence (never the whole text). */
const excerpt = (body: string) => ([...body].length > 80 ? `${[...body].slice(0, 79).join('')}…` : body);

/**
 * Comments on posts: by people and API keys (the API and the settings page) and by reviewers
 * through a review link (review.service.ts). Every comment is in the audit trail too.
 */
@Injectable()
export class CommentsService {
  constructor(
    private readonly comments: CommentsRepository,
    private readonly posts: PostsService,
    private readonly audit: AuditService,
  ) {}

  async add(auth: AuthContext, postId: string, body: string): Promise<CommentView> {
    const text = body.trim();
    if (text === '') throw invalidInput('body must not be empty (1 to 2000 characters)');
    if ([...text].length > MAX_COMMENT) throw invalidInput(`body is ${[...text].length} characters; at most ${MAX_COMMENT}`);
    const row = await this.comments.insert(null, {
      workspaceId: auth.workspaceId,
      postId,
      authorKind: auth.principal.kind,
      authorId: auth.principal.id,
      shareLinkId: null,
      authorName: auth.label,
      verdict: null,
      body: text,
    });
    if (!row) throw notFound('post', postId);
    await this.audit.record(null, auth, {
      kind: 'post',
      action: 'commented',
      subjectId: postId,
      summary: `Commented on a post: “${excerpt(text)}”`,
    });
    return toCommentView(row);
  }

  /** A reviewer's comment (checked by reviewer-decision.ts), through the link `shareLinkId`. */
  async addAsReviewer(
    workspaceId: string,
    postId: string,
    shareLinkId: string,
    comment: { name: string; verdict: Verdict | null; body: string },
  ): Promise<CommentView> {
    const row = await this.comments.insert(null, {
      workspaceId,
      postId,
      authorKind: 'reviewer',
      authorId: null,
      shareLinkId,
      authorName: comment.name,
      verdict: comment.verdict,
      body: comment.body,
    });
    if (!row) throw notFound('post', postId);
    const said = verdictWords(comment.verdict);
    await this.audit.recordAs(null, workspaceId, { kind: 'system', id: null, label: `reviewer “${comment.name}” through a review link` }, [
      {
        kind: 'post',
        action: 'reviewer_commented',
        subjectId: postId,
        summary: `A reviewer answered through a review link${said ? ` (${said})` : ''}${comment.body ? `: “${excerpt(comment.body)}”` : ''}`,
      },
    ]);
    return toCommentView(row);
  }

  /** A post's comments, oldest first; 404 for a post the workspace does not have. */
  async list(workspaceId: string, postId: string, limit = DEFAULT_PAGE_SIZE, cursor?: string): Promise<Page<CommentView>> {
    await this.posts.get(workspaceId, postId);
    const rows = await this.comments.list(workspaceId, postId, decodeCursor(cursor), limit);
    return toPage(rows, limit, toCommentView);
  }
}
