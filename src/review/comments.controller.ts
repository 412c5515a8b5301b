import { Body, Controller, Get, Param, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiParam, ApiResponse, ApiTags } from '@nestjs/swagger';
import { API_KEY_SCHEME, ApiErrors, ApiPageResponse, ApiV1Errors, BODY_ERRORS } from '../common/openapi';
import { PageQuery } from '../common/pagination';
import { ParseIdPipe } from '../common/parse-id.pipe';
import { Auth, AuthContext } from '../workspaces/auth';
import { CommentsService } from './comments.service';
import { CreateCommentDto } from './review.dto';
import { CommentDto } from './review-view.dto';

const postId = new ParseIdPipe('post');
const ID_PARAM = { name: 'id', format: 'uuid', description: 'the post id' } as const;

@ApiTags('comments')
@ApiBearerAuth(API_KEY_SCHEME)
@ApiV1Errors()
@Controller('v1/posts/:id/comments')
export class CommentsController {
  constructor(private readonly comments: CommentsService) {}

  @Post()
  @ApiOperation({
    operationId: 'createComment',
    summary: 'Comment on a post',
    description: 'The comment is signed with the caller (the person, or the API key) and recorded in the audit trail.',
  })
  @ApiParam(ID_PARAM)
  @ApiResponse({ status: 201, description: 'The comment', type: CommentDto })
  @ApiErrors([...BODY_ERRORS, 404], { 400: 'body is missing, empty or longer than 2000 characters; nothing was saved.' })
  create(@Auth() auth: AuthContext, @Param('id', postId) id: string, @Body() body: CreateCommentDto) {
    return this.comments.add(auth, id, body.body);
  }

  @Get()
  @ApiOperation({
    operationId: 'listComments',
    summary: "A post's comments, oldest first: people's, API keys' and reviewers' (with their verdict)",
  })
  @ApiParam(ID_PARAM)
  @ApiPageResponse(CommentDto)
  @ApiErrors([404])
  list(@Auth() auth: AuthContext, @Param('id', postId) id: string, @Query() query: PageQuery) {
    return this.comments.list(auth.workspaceId, id, query.limit, query.cursor);
  }
}
