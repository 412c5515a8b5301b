import type { Verdict } from './reviewer-decision';

export type CommentAuthorKind = 'person' | 'key' | 'reviewer';

export interface CommentRow {
  id: string;
  workspaceId: string;
  postId: string;
  authorKind: CommentAuthorKind;
  authorId: string | null;
  shareLinkId: string | null;
  authorName: string;
  verdict: Verdict | null;
  body: string;
  createdAt: Date;
  cursorMicros: string;
}

/** One comment as the API and the page show it. */
export interface CommentView {
  id: string;
  postId: string;
  author: { kind: CommentAuthorKind; id: string | null; name: string; shareLinkId: string | null };
  verdict: Verdict | null;
  body: string;
  createdAt: string;
}

export function toCommentView(row: CommentRow): CommentView {
  return {
    id: row.id,
    postId: row.postId,
    author: { kind: row.authorKind, id: row.authorId, name: row.authorName, shareLinkId: row.shareLinkId },
    verdict: row.verdict,
    body: row.body,
    createdAt: row.createdAt.toISOString(),
  };
}

export interface NewComment {
  workspaceId: string;
  postId: string;
  authorKind: CommentAuthorKind;
  authorId: string | null;
  shareLinkId: string | null;
  authorName: string;
  verdict: Verdict | null;
  body: string;
}

export interface ShareLinkRow {
  id: string;
  workspaceId: string;
  createdByKind: 'person' | 'key';
  createdById: string;
  createdByLabel: string;
  createdAt: Date;
  expiresAt: Date;
  revokedAt: Date | null;
  postIds: string[];
  cursorMicros: string;
}

/** A link as listed: never its token (only its hash is kept). */
export interface ShareLinkView {
  id: string;
  postIds: string[];
  status: 'active' | 'expired' | 'revoked';
  createdBy: { kind: 'person' | 'key'; id: string; label: string };
  createdAt: string;
  expiresAt: string;
  revokedAt: string | null;
}

/** The answer that makes a link: the view, and this once the token and the page's address. */
export type NewShareLinkView = ShareLinkView & { token: string; url: string };
