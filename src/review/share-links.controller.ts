import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiParam, ApiResponse, ApiTags } from '@nestjs/swagger';
import { API_KEY_SCHEME, ApiErrors, ApiPageResponse, ApiV1Errors, BODY_ERRORS } from '../common/openapi';
import { ParseIdPipe } from '../common/parse-id.pipe';
import { Auth, AuthContext } from '../workspaces/auth';
import { CreateShareLinkDto, ListShareLinksQuery } from './review.dto';
import { NewShareLinkDto, ShareLinkDto } from './review-view.dto';
import { ShareLinksService } from './share-links.service';

const postId = new ParseIdPipe('post');

@ApiTags('review links')
@ApiBearerAuth(API_KEY_SCHEME)
@ApiV1Errors()
@Controller('v1')
export class ShareLinksController {
  constructor(private readonly links: ShareLinksService) {}

  @Post('posts/:id/share-links')
  @ApiOperation({
    operationId: 'createShareLink',
    summary: 'Make a client review link for this post (and, with postIds, further posts)',
    description:
      'The link opens a read-only review page (PUBLIC_URL/review/<token>, no login) where someone without an account, giving their name, may approve, ask for changes or comment. The token (256 random bits) is in this answer only: Herald keeps its SHA-256. Valid for expiresInDays (1–30, default 7) unless revoked.',
  })
  @ApiParam({ name: 'id', format: 'uuid', description: 'the post id' })
  @ApiResponse({ status: 201, description: 'The link, with its token and URL (this once)', type: NewShareLinkDto })
  @ApiErrors([...BODY_ERRORS, 404], {
    400: 'The input is invalid (postIds with an unknown post, more than 20 posts, expiresInDays outside 1–30); nothing was made.',
  })
  create(@Auth() auth: AuthContext, @Param('id', postId) id: string, @Body() body: CreateShareLinkDto) {
    return this.links.create(auth, id, body);
  }

  @Get('share-links')
  @ApiOperation({ operationId: 'listShareLinks', summary: "The workspace's client review links, newest first (never their tokens)" })
  @ApiPageResponse(ShareLinkDto)
  @ApiErrors([400])
  list(@Auth() auth: AuthContext, @Query() query: ListShareLinksQuery) {
    return this.links.list(auth.workspaceId, query);
  }

  @Delete('share-links/:id')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'revokeShareLink',
    summary: 'Revoke a client review link: it opens nothing from now on (revoking twice is harmless)',
  })
  @ApiParam({ name: 'id', format: 'uuid', description: 'the share link id' })
  @ApiResponse({ status: 200, description: 'The link as it is now', type: ShareLinkDto })
  @ApiErrors([404])
  revoke(@Auth() auth: AuthContext, @Param('id', new ParseIdPipe('share link')) id: string) {
    return this.links.revoke(auth, id);
  }
}
