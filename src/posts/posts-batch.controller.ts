import { Body, Controller, Post, Req, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiHeader, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { API_KEY_SCHEME, ApiErrors, ApiV1Errors, BODY_ERRORS } from '../common/openapi';
import { Auth, AuthContext } from '../workspaces/auth';
import { BatchResultDto, CreatePostsBatchDto, MAX_BATCH_POSTS } from './posts-batch.dto';
import { PostsBatchService } from './posts-batch.service';

/** Body limit of this route (app.ts): 100 posts, each as large as POST /v1/posts usually sees (docs/api.md "Bulk"). */
export const BATCH_BODY_LIMIT_MB = 5;
export const BATCH_PATH = '/v1/posts/batch';

const REPLAYED = {
  'Idempotent-Replayed': {
    description: '`true` when this is the stored answer to an earlier request with the same Idempotency-Key',
    schema: { type: 'string', enum: ['true'] },
  },
};

@ApiTags('posts')
@ApiBearerAuth(API_KEY_SCHEME)
@ApiV1Errors()
@Controller('v1/posts')
export class PostsBatchController {
  constructor(private readonly batch: PostsBatchService) {}

  @Post('batch')
  @ApiOperation({
    operationId: 'createPostsBatch',
    summary: `Create 1–${MAX_BATCH_POSTS} posts in one request, one result per item`,
    description: `Each item is checked and created as POST /v1/posts would (the same rules and error messages; drafts, scheduled and queued posts). Valid items are created even when others are refused: the answer lists every item's outcome in order (\`{ index, status: 201, post }\` or \`{ index, status: 4xx, error }\`), so the refused ones can be fixed and sent again. The whole request is refused (400, nothing created) when \`posts\` is not an array of 1 to ${MAX_BATCH_POSTS} objects. The body may be up to ${BATCH_BODY_LIMIT_MB} MB.`,
  })
  @ApiHeader({
    name: 'Idempotency-Key',
    required: false,
    description:
      'One key for the whole batch, 1–255 characters, per workspace. Same key and same body (equal as JSON): the first answer again, items created once; another body: 422; while the first request is still running: 409.',
    schema: { type: 'string', minLength: 1, maxLength: 255, example: 'import-2026-12-01' },
  })
  @ApiBody({
    type: CreatePostsBatchDto,
    examples: {
      two: {
        summary: 'two posts, the second one a draft',
        value: {
          posts: [
            {
              text: 'Monday tip',
              targets: [{ accountId: '6f1c2a3e-8b7d-4c5e-9f01-23456789abcd' }],
              scheduledAt: '2026-12-07T09:00:00+01:00',
            },
            { text: 'An idea for later', targets: [{ accountId: '6f1c2a3e-8b7d-4c5e-9f01-23456789abcd' }], status: 'draft' },
          ],
        },
      },
    },
  })
  @ApiResponse({
    status: 201,
    description: 'Every item was created (or, replayed, the first answer to this key)',
    type: BatchResultDto,
    headers: REPLAYED,
  })
  @ApiResponse({
    status: 207,
    description:
      'At least one item was refused (its result has its 4xx and the error POST /v1/posts would give); every other item was created. Replayed the same way.',
    type: BatchResultDto,
    headers: REPLAYED,
  })
  @ApiErrors([...BODY_ERRORS, 409, 422], {
    400: `posts is missing, empty, longer than ${MAX_BATCH_POSTS} or not an array of objects (or the Idempotency-Key is malformed): nothing was created.`,
    409: 'A request with this Idempotency-Key is still being processed: retry in a moment.',
    413: `The request body is larger than the ${BATCH_BODY_LIMIT_MB} MB limit of this route.`,
  })
  async create(
    @Auth() auth: AuthContext,
    @Body() body: CreatePostsBatchDto,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<unknown> {
    // The raw items (as parsed JSON): each one's own idempotency hash, and its own validation.
    const raw = req.body as { posts: unknown[] };
    const answer = await this.batch.create(auth, raw.posts, req.body, req.get('idempotency-key'));
    res.status(answer.status);
    if (answer.replayed) res.setHeader('Idempotent-Replayed', 'true');
    return answer.body;
  }
}
