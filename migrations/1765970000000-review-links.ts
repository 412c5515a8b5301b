import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Comments on posts and client review links (src/review owns all three tables).
 *
 * - share_links: a link that opens a read-only review page for one post or a set of posts, for
 *   someone without an account. Only the SHA-256 of its token is kept (the token is 256 random
 *   bits, shown once in the answer that made it): a copy of the database opens nothing, and a
 *   fast hash is right for a random token (nothing to guess from). It expires (1 to 30 days
 *   after it was made) and can be revoked; it is never deleted but with its workspace, so a
 *   reviewer's comment keeps its link.
 * - share_link_posts: the posts a link shows, in the order given. A post deleted (with its
 *   workspace) leaves the link's set.
 * - post_comments: comments by people and API keys (author_id: the person's or key's id, no
 *   foreign key, as in the audit trail: people are removed and keys revoked, their words stay)
 *   and by reviewers through a link (author_id NULL, share_link_id and the name they gave). A
 *   reviewer's approval or request for changes is kept as a comment with its verdict, whether or
 *   not the workspace lets a client's decision count (src/review/reviewer-decision.ts).
 */
export class ReviewLinks1765970000000 implements MigrationInterface {
  name = 'ReviewLinks1765970000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE share_links (
        id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        workspace_id      uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        -- SHA-256 of the token: 32 bytes, never the token itself.
        token_hash        bytea NOT NULL UNIQUE CHECK (length(token_hash) = 32),
        created_by_kind   text NOT NULL CHECK (created_by_kind IN ('person', 'key')),
        created_by_id     uuid NOT NULL,
        created_by_label  text NOT NULL CHECK (length(created_by_label) BETWEEN 1 AND 400),
        created_at        timestamptz NOT NULL DEFAULT now(),
        expires_at        timestamptz NOT NULL,
        revoked_at        timestamptz,
        -- 1 to 30 days (the API's expiresInDays), with a minute's slack for the clock of the caller.
        CHECK (expires_at > created_at AND expires_at <= created_at + interval '30 days 1 minute'),
        CHECK (revoked_at IS NULL OR revoked_at >= created_at)
      )`);
    await q.query(`CREATE INDEX share_links_workspace ON share_links (workspace_id, created_at DESC, id DESC)`);

    await q.query(`
      CREATE TABLE share_link_posts (
        share_link_id  uuid NOT NULL REFERENCES share_links(id) ON DELETE CASCADE,
        post_id        uuid NOT NULL REFERENCES posts(id) ON DELETE CASCADE,
        -- The order the posts were given in (the page shows them so); at most 20 posts a link.
        position       smallint NOT NULL CHECK (position BETWEEN 0 AND 19),
        PRIMARY KEY (share_link_id, post_id),
        UNIQUE (share_link_id, position)
      )`);
    await q.query(`CREATE INDEX share_link_posts_post ON share_link_posts (post_id)`);

    await q.query(`
      CREATE TABLE post_comments (
        id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        workspace_id   uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        post_id        uuid NOT NULL REFERENCES posts(id) ON DELETE CASCADE,
        author_kind    text NOT NULL CHECK (author_kind IN ('person', 'key', 'reviewer')),
        author_id      uuid,
        share_link_id  uuid REFERENCES share_links(id) ON DELETE CASCADE,
        -- A person's or key's label as it was then, or the name a reviewer gave (1 to 80 characters).
        author_name    text NOT NULL CHECK (length(author_name) BETWEEN 1 AND 400),
        verdict        text CHECK (verdict IN ('approved', 'changes_requested')),
        -- Up to 2,000 characters; empty only for an approval given without a word.
        body           text NOT NULL CHECK (length(body) <= 2000),
        created_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
        -- A person or key has an id and no link; a reviewer has a link and no id.
        CHECK ((author_kind = 'reviewer') = (author_id IS NULL)),
        CHECK ((author_kind = 'reviewer') = (share_link_id IS NOT NULL)),
        CHECK (author_kind <> 'reviewer' OR length(author_name) <= 80),
        -- Only reviewers' comments carry a verdict (the team decides through the approvals).
        CHECK (verdict IS NULL OR author_kind = 'reviewer'),
        -- (IS NOT DISTINCT FROM: a NULL verdict must not let an empty body through, as a bare = would.)
        CHECK (length(body) >= 1 OR verdict IS NOT DISTINCT FROM 'approved')
      )`);
    await q.query(`CREATE INDEX post_comments_post ON post_comments (post_id, created_at, id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE post_comments`);
    await q.query(`DROP TABLE share_link_posts`);
    await q.query(`DROP TABLE share_links`);
  }
}
