import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Uploaded images (POST /v1/media), kept in PostgreSQL so every Herald process sharing the
 * database can serve and publish them without shared disk. Posts reference them by id in
 * their `media` list; they go with their workspace.
 */
export class Media1764490000000 implements MigrationInterface {
  name = 'Media1764490000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE media (
        id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        workspace_id  uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        -- The type sniffed from the bytes at upload, never the client's Content-Type.
        mime_type     text NOT NULL CHECK (mime_type IN ('image/png', 'image/jpeg', 'image/webp', 'image/gif')),
        byte_size     integer NOT NULL CHECK (byte_size BETWEEN 1 AND 5242880),
        width         integer CHECK (width > 0),
        height        integer CHECK (height > 0),
        alt           text NOT NULL DEFAULT '' CHECK (length(alt) <= 2000),
        sha256        bytea NOT NULL CHECK (octet_length(sha256) = 32),
        -- Immutable once written (only alt changes), so workers may cache them by id.
        bytes         bytea NOT NULL,
        created_at    timestamptz NOT NULL DEFAULT now(),
        CHECK (octet_length(bytes) = byte_size)
      )`);
    // The image bytes are already compressed: storing them uncompressed saves the CPU of a
    // pointless pglz pass on every write and read (they still go out of line in TOAST).
    await q.query(`ALTER TABLE media ALTER COLUMN bytes SET STORAGE EXTERNAL`);
    await q.query(`CREATE INDEX media_workspace ON media (workspace_id, created_at DESC, id DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE media`);
  }
}
