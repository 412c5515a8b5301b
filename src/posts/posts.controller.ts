import { Body, Controller, Delete, Get, Headers, HttpCode, Param, Patch, Post, Query, Req, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiHeader, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { ParseIdPipe } from '../common/parse-id.pipe';
import { Auth, AuthContext } from '../workspaces/auth';
import { CreatePostDto, ListPostsQuery, UpdatePostDto } from './posts.dto';
import { PostsService } from './posts.service';

const postId = new ParseIdPipe('post');

@ApiTags('posts')
@ApiBearerAuth()
@Controller('v1/posts')
export class PostsController {
  constructor(private readonly posts: PostsService) {}

  @Post()
  @ApiOperation({ summary: 'Schedule a post to 1–20 accounts. Answers 201 once the post and its jobs are committed.' })
  @ApiHeader({ name: 'Idempotency-Key', required: false, description: '1–255 characters; replays the first answer for 24 h' })
  async create(
    @Auth() auth: AuthContext,
    @Body() body: CreatePostDto,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
    @Headers('idempotency-key') idempotencyKey?: string,
  ): Promise<unknown> {
    const result = await this.posts.create(auth.workspaceId, body, req.body, idempotencyKey);
    res.status(result.status);
    if (result.replayed) res.setHeader('Idempotent-Replayed', 'true');
    return result.body;
  }

  @Get()
  list(@Auth() auth: AuthContext, @Query() query: ListPostsQuery) {
    return this.posts.list(auth.workspaceId, query);
  }

  @Get(':id')
  get(@Auth() auth: AuthContext, @Param('id', postId) id: string) {
    return this.posts.get(auth.workspaceId, id);
  }

  @Patch(':id')
  @ApiOperation({ summary: 'Edit or reschedule, while none of its jobs has started (409 after).' })
  update(@Auth() auth: AuthContext, @Param('id', postId) id: string, @Body() body: UpdatePostDto) {
    return this.posts.update(auth.workspaceId, id, body);
  }

  @Delete(':id')
  @HttpCode(200)
  @ApiOperation({ summary: 'Cancel the post\'s waiting jobs; attempts in flight finish. Answers the post.' })
  cancel(@Auth() auth: AuthContext, @Param('id', postId) id: string) {
    return this.posts.cancel(auth.workspaceId, id);
  }
}
