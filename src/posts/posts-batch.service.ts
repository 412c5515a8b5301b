import { HttpException, Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import type { AuthContext } from '../access/auth-context';
import { canonicalHash } from '../common/canonical-json';
import { conflict, DomainError, ErrorCode, invalidInput } from '../common/errors';
import { toErrorBody } from '../common/http-exception.filter';
import { createValidationPipe } from '../common/validation';
import { IdempotencyRepository } from './idempotency.repository';
import type { BatchItemResult, BatchResult } from './posts-batch.dto';
import { CreatePostDto } from './posts.dto';
import { PostsService } from './posts.service';

/** The global pipe's rules (unknown fields refused, the same messages), run on one item at a time. */
const itemPipe = createValidationPipe();

export interface BatchAnswer {
  /** 201: every item was created; 207: at least one was refused (each result says which). */
  status: 201 | 207;
  body: BatchResult;
  replayed: boolean;
}

/**
 * POST /v1/posts/batch (docs/api.md "Bulk"): each item goes through PostsService.create, the
 * path of POST /v1/posts, so an item is checked, created, audited (and, where the workspace has
 * them, queued or held for approval) exactly as that one post would be. Valid items are created
 * even when others are refused: the answer lists every item's outcome, so the refused ones can
 * be fixed and sent again.
 *
 * The batch's Idempotency-Key: claimed for the whole batch first (same key and body → the stored
 * answer; another body → 422; still running → 409), and stored with the whole answer at the end.
 * Each item is created under a key derived from it (itemKey), in the statement that writes the
 * post: if the process dies half-way, the batch key is taken over later (IdempotencyRepository)
 * and the retry finds the items already created by their own keys and answers them again rather
 * than creating them twice.
 */
@Injectable()
export class PostsBatchService {
  constructor(
    private readonly posts: PostsService,
    private readonly idempotency: IdempotencyRepository,
  ) {}

  async create(auth: AuthContext, items: readonly unknown[], rawBody: unknown, idempotencyKey?: string): Promise<BatchAnswer> {
    if (idempotencyKey === undefined) return { ...(await this.createAll(auth, items, null)), replayed: false };
    if (idempotencyKey.length < 1 || idempotencyKey.length > 255) throw invalidInput('Idempotency-Key must be 1 to 255 characters');
    // The route is part of what is hashed: one key cannot stand for a single post and a batch.
    const requestHash = canonicalHash(['POST /v1/posts/batch', rawBody]);
    const workspaceId = auth.workspaceId;
    const begin = await this.idempotency.begin(workspaceId, idempotencyKey, requestHash);
    switch (begin.kind) {
      case 'replay':
        return { status: begin.status === 201 ? 201 : 207, body: begin.body as BatchResult, replayed: true };
      case 'mismatch':
        throw new DomainError(
          ErrorCode.IdempotencyMismatch,
          'this Idempotency-Key was already used with a different request body; use a new key for a different batch',
        );
      case 'in_flight':
        throw conflict('a request with this Idempotency-Key is still being processed; retry in a moment');
      case 'new':
        try {
          const answer = await this.createAll(auth, items, itemKeyPrefix(idempotencyKey, requestHash));
          // A batch that created nothing does not use its key up (as a refused POST /v1/posts):
          // the corrected batch may be sent with the same key.
          if (answer.body.created === 0) await this.idempotency.abandon(workspaceId, idempotencyKey);
          else await this.idempotency.complete(workspaceId, idempotencyKey, answer.status, answer.body);
          return { ...answer, replayed: false };
        } catch (err) {
          // Items already created keep their own keys: a retry with this key answers them again.
          await this.idempotency.abandon(workspaceId, idempotencyKey);
          throw err;
        }
    }
  }

  /** Every item in order, one at a time (each is one statement and one commit, as POST /v1/posts). */
  private async createAll(auth: AuthContext, items: readonly unknown[], keyPrefix: string | null): Promise<Omit<BatchAnswer, 'replayed'>> {
    const results: BatchItemResult[] = [];
    for (const [index, raw] of items.entries()) {
      results.push(await this.createOne(auth, index, raw, keyPrefix === null ? undefined : `${keyPrefix}${index}`));
    }
    const created = results.filter((r) => r.status === 201).length;
    return { status: created === results.length ? 201 : 207, body: { created, failed: results.length - created, results } };
  }

  private async createOne(auth: AuthContext, index: number, raw: unknown, key: string | undefined): Promise<BatchItemResult> {
    try {
      const dto = (await itemPipe.transform(raw, { type: 'body', metatype: CreatePostDto })) as CreatePostDto;
      const result = await this.posts.create(auth, dto, raw, key);
      return { index, status: result.status, post: result.body as BatchItemResult['post'] };
    } catch (err) {
      // A refusal of this item (the same error body POST /v1/posts gives); anything else is the batch's 500.
      const refused = err instanceof DomainError || (err instanceof HttpException && err.getStatus() < 500);
      if (!refused) throw err;
      const error = toErrorBody(err);
      if (error.statusCode >= 500) throw err;
      return { index, status: error.statusCode, error };
    }
  }
}

/**
 * The prefix of the batch's item keys (the item's index follows). It contains "‹" (U+2039), which
 * no Idempotency-Key header can: Node reads header values as Latin-1, so no client key is ever
 * one of these. It hashes the batch's key with the batch's body, so that after the 24 hours a key
 * is kept the same key with another body cannot meet the old items' keys. 5 + 43 + 2 characters
 * plus the index: well within the table's 255.
 */
export function itemKeyPrefix(batchKey: string, requestHash: Buffer): string {
  const digest = createHash('sha256').update(batchKey, 'utf8').update(requestHash).digest('base64url');
  return `batch‹${digest}›#`;
}
