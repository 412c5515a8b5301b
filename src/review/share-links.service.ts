import { Inject, Injectable } from '@nestjs/common';
import type { AuthContext } from '../access/auth-context';
import { AuditService } from '../audit/audit.service';
import { decodeCursor, DEFAULT_PAGE_SIZE, Page, toPage } from '../common/pagination';
import { invalidInput, notFound } from '../common/errors';
import { HERALD_CONFIG, HeraldConfig } from '../config/config';
import { PostsService } from '../posts/posts.service';
import { ShareLinksRepository } from './share-links.repository';
import {
  DEFAULT_EXPIRY_DAYS,
  hashShareToken,
  linkPostIds,
  looksLikeShareToken,
  newShareToken,
  reviewUrl,
  shareLinkExpiry,
  shareLinkStatus,
} from './share-link';
import type { NewShareLinkView, ShareLinkRow, ShareLinkView } from './review.types';

export function toShareLinkView(row: ShareLinkRow, now: Date): ShareLinkView {
  return {
    id: row.id,
    postIds: row.postIds,
    status: shareLinkStatus(row, now),
    createdBy: { kind: row.createdByKind, id: row.createdById, label: row.createdByLabel },
    createdAt: row.createdAt.toISOString(),
    expiresAt: row.expiresAt.toISOString(),
    revokedAt: row.revokedAt?.toISOString() ?? null,
  };
}

/** An active link as the review page needs it: which workspace, which posts. */
export interface OpenShareLink {
  id: string;
  workspaceId: string;
  postIds: string[];
  expiresAt: Date;
}

/**
 * Client review links: made by an owner or editor for one post or a set of posts, listed
 * without their tokens, revoked. The token is in the answer that makes the link, once.
 */
@Injectable()
export class ShareLinksService {
  constructor(
    private readonly links: ShareLinksRepository,
    private readonly audit: AuditService,
    private readonly posts: PostsService,
    @Inject(HERALD_CONFIG) private readonly config: HeraldConfig,
  ) {}

  async create(
    auth: AuthContext,
    postId: string,
    input: { postIds?: string[]; expiresInDays?: number },
    now = new Date(),
  ): Promise<NewShareLinkView> {
    const ids = linkPostIds(postId, input.postIds);
    if (!ids.ok) throw invalidInput(ids.message);
    // The post of the path answers 404 like any unknown path id; an unknown id in the body is a 400.
    await this.posts.get(auth.workspaceId, postId);
    const token = newShareToken();
    const row = await this.links.insert({
      workspaceId: auth.workspaceId,
      tokenHash: hashShareToken(token),
      createdByKind: auth.principal.kind,
      createdById: auth.principal.id,
      createdByLabel: auth.label,
      createdAt: now,
      expiresAt: shareLinkExpiry(now, input.expiresInDays ?? DEFAULT_EXPIRY_DAYS),
      postIds: ids.ids,
    });
    if (!row) throw invalidInput('postIds: unknown post (one of the ids is not a post of this workspace)');
    await this.audit.record(
      null,
      auth,
      ...row.postIds.map((id) => ({
        kind: 'post' as const,
        action: 'review_link_created',
        subjectId: id,
        summary: `Made a client review link for ${row.postIds.length === 1 ? 'this post' : `${row.postIds.length} posts`}, valid until ${row.expiresAt.toISOString()}`,
        after: { shareLinkId: row.id, expiresAt: row.expiresAt.toISOString() },
      })),
    );
    return { ...toShareLinkView(row, now), token, url: reviewUrl(this.config.publicUrl, token) };
  }

  async list(
    workspaceId: string,
    query: { postId?: string; limit?: number; cursor?: string },
    now = new Date(),
  ): Promise<Page<ShareLinkView>> {
    const limit = query.limit ?? DEFAULT_PAGE_SIZE;
    const rows = await this.links.list(workspaceId, query.postId?.toLowerCase() ?? null, decodeCursor(query.cursor), limit);
    return toPage(rows, limit, (r) => toShareLinkView(r, now));
  }

  async revoke(auth: AuthContext, id: string, now = new Date()): Promise<ShareLinkView> {
    const before = await this.links.find(auth.workspaceId, id);
    if (!before) throw notFound('share link', id);
    const row = (await this.links.revoke(auth.workspaceId, id, now)) ?? before;
    if (!before.revokedAt) {
      await this.audit.record(
        null,
        auth,
        ...row.postIds.map((postId) => ({
          kind: 'post' as const,
          action: 'review_link_revoked',
          subjectId: postId,
          summary: 'Revoked a client review link: it opens nothing any more',
          after: { shareLinkId: row.id },
        })),
      );
    }
    return toShareLinkView(row, now);
  }

  /**
   * The link a token opens, if it is active at `now`; null for an unknown, expired or revoked
   * token alike (the page says the same for each). A string that is not shaped like a token is
   * not looked up.
   */
  async open(token: string, now = new Date()): Promise<OpenShareLink | null> {
    if (!looksLikeShareToken(token)) return null;
    const row = await this.links.findByHash(hashShareToken(token));
    if (!row || shareLinkStatus(row, now) !== 'active') return null;
    return { id: row.id, workspaceId: row.workspaceId, postIds: row.postIds, expiresAt: row.expiresAt };
  }
}
