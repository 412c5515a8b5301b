import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Req, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiHeader, ApiOperation, ApiParam, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { API_KEY_SCHEME, ApiErrors, ApiPageResponse, ApiV1Errors, BODY_ERRORS } from '../common/openapi';
import { ParseIdPipe } from '../common/parse-id.pipe';
import { Auth, AuthContext } from '../workspaces/auth';
import { PostDto } from './post-view.dto';
import { CreatePostDto, ListPostsQuery, UpdatePostDto } from './posts.dto';
import { PostsService } from './posts.service';

const postId = new ParseIdPipe('post');
const ID_PARAM = { name: 'id', format: 'uuid', description: 'the post id' } as const;

@ApiTags('posts')
@ApiBearerAuth(API_KEY_SCHEME)
@ApiV1Errors()
@Controller('v1/posts')
export class PostsController {
  constructor(private readonly posts: PostsService) {}

  @Post()
  @ApiOperation({
    operationId: 'createPost',
    summary: 'Schedule a post to 1–20 accounts',
    description:
      'The post and one publish job per target are committed before the answer. Platform limits are checked here for each target with its own text. Where the workspace asks for approval of the caller’s posts (GET /v1/settings/approvals), the answer is still 201, with status `pending_approval` and no jobs: the post waits for an owner (POST /v1/posts/{id}/approve). With an `Idempotency-Key`, the same key and the same body answer the first 201 again (with `Idempotent-Replayed: true`) for at least 24 hours.',
  })
  @ApiHeader({
    name: 'Idempotency-Key',
    required: false,
    description:
      '1–255 characters of your choice, per workspace. Same key and same body (equal as JSON): the first answer again; another body: 422; while the first request is still running: 409. A request that fails validation does not use the key up.',
    schema: { type: 'string', minLength: 1, maxLength: 255, example: 'launch-2026-12-01' },
  })
  @ApiBody({
    type: CreatePostDto,
    examples: {
      now: {
        summary: 'publish now',
        value: {
          text: 'Herald 1.0 is out!',
          link: 'https://example.com/blog/herald-1-0',
          targets: [{ accountId: '6f1c2a3e-8b7d-4c5e-9f01-23456789abcd' }],
        },
      },
      scheduled: {
        summary: 'scheduled, with a deadline and a per-account text',
        value: {
          text: 'Our December release notes',
          targets: [
            { accountId: '6f1c2a3e-8b7d-4c5e-9f01-23456789abcd' },
            { accountId: '0d9e8f7a-6b5c-4d3e-8f2a-1b0c9d8e7f6a', text: 'December release notes, short version' },
          ],
          scheduledAt: '2026-12-01T09:00:00+01:00',
          publishBy: '2026-12-01T18:00:00+01:00',
        },
      },
    },
  })
  @ApiResponse({
    status: 201,
    description: 'The post with its jobs (or, replayed, the first answer to this Idempotency-Key)',
    type: PostDto,
    headers: {
      'Idempotent-Replayed': {
        description: '`true` when this is the stored answer to an earlier request with the same Idempotency-Key',
        schema: { type: 'string', enum: ['true'] },
      },
    },
  })
  @ApiErrors([...BODY_ERRORS, 409, 422], {
    400: 'The input is invalid (the message names the field or target, e.g. "targets.1 (bluesky): text is 301 graphemes, the limit is 300"); nothing was created and the Idempotency-Key is not used up.',
    409: 'A request with this Idempotency-Key is still being processed: retry in a moment.',
  })
  async create(
    @Auth() auth: AuthContext,
    @Body() body: CreatePostDto,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<unknown> {
    // Read here rather than with @Headers(): that decorator would document the header a
    // second time, as required.
    const result = await this.posts.create(auth, body, req.body, req.get('idempotency-key'));
    res.status(result.status);
    if (result.replayed) res.setHeader('Idempotent-Replayed', 'true');
    return result.body;
  }

  @Get()
  @ApiOperation({
    operationId: 'listPosts',
    summary: 'List posts, newest first; filter by status and by scheduledAt (from inclusive, to exclusive)',
  })
  @ApiPageResponse(PostDto)
  @ApiErrors([400])
  list(@Auth() auth: AuthContext, @Query() query: ListPostsQuery) {
    return this.posts.list(auth.workspaceId, query);
  }

  @Get(':id')
  @ApiOperation({ operationId: 'getPost', summary: 'A post with its jobs; its status is derived from them' })
  @ApiParam(ID_PARAM)
  @ApiResponse({ status: 200, description: 'The post', type: PostDto })
  @ApiErrors([404])
  get(@Auth() auth: AuthContext, @Param('id', postId) id: string) {
    return this.posts.get(auth.workspaceId, id);
  }

  @Patch(':id')
  @ApiOperation({
    operationId: 'updatePost',
    summary: 'Edit or reschedule a post while none of its jobs has started',
    description: 'Absent fields are kept; `null` clears title, link, publishBy or metadata.',
  })
  @ApiParam(ID_PARAM)
  @ApiResponse({ status: 200, description: 'The post as it is now', type: PostDto })
  @ApiErrors([...BODY_ERRORS, 404, 409], { 409: 'A job of this post has started (or finished): it can no longer be edited.' })
  update(@Auth() auth: AuthContext, @Param('id', postId) id: string, @Body() body: UpdatePostDto) {
    return this.posts.update(auth, id, body);
  }

  @Delete(':id')
  @HttpCode(200)
  @ApiOperation({ operationId: 'cancelPost', summary: "Cancel the post's waiting jobs; attempts in flight finish" })
  @ApiParam(ID_PARAM)
  @ApiResponse({ status: 200, description: 'The post as it is now', type: PostDto })
  @ApiErrors([404])
  cancel(@Auth() auth: AuthContext, @Param('id', postId) id: string) {
    return this.posts.cancel(auth, id);
  }
}
