import { Body, Controller, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiParam, ApiResponse, ApiTags } from '@nestjs/swagger';
import { API_KEY_SCHEME, ApiErrors, ApiV1Errors, BODY_ERRORS } from '../common/openapi';
import { ParseIdPipe } from '../common/parse-id.pipe';
import { PostDto } from '../posts/post-view.dto';
import { Auth, AuthContext } from '../workspaces/auth';
import { ApprovalHistoryDto, ApprovalSettingsDto, RejectPostDto } from './approvals.dto';
import { ApprovalsService } from './approvals.service';

const postId = new ParseIdPipe('post');
const ID_PARAM = { name: 'id', format: 'uuid', description: 'the post id' } as const;

@ApiTags('approvals')
@ApiBearerAuth(API_KEY_SCHEME)
@ApiV1Errors()
@Controller('v1/settings/approvals')
export class ApprovalSettingsController {
  constructor(private readonly approvals: ApprovalsService) {}

  @Get()
  @ApiOperation({
    operationId: 'getApprovalSettings',
    summary: 'Who must approve posts before they are published (mode), and whether client review links count.',
  })
  @ApiOkResponse({ type: ApprovalSettingsDto })
  get(@Auth() auth: AuthContext) {
    return this.approvals.settings(auth.workspaceId);
  }

  @Put()
  @ApiOperation({
    operationId: 'updateApprovalSettings',
    summary: 'Set the approval mode and client approval (owners). Posts already waiting keep waiting; the change is in the audit trail.',
  })
  @ApiOkResponse({ type: ApprovalSettingsDto })
  @ApiErrors(BODY_ERRORS, { 400: 'A field is missing or invalid (the message names it); nothing was saved.' })
  update(@Auth() auth: AuthContext, @Body() body: ApprovalSettingsDto) {
    return this.approvals.updateSettings(auth, { mode: body.mode, clientApproval: body.clientApproval });
  }
}

@ApiTags('approvals')
@ApiBearerAuth(API_KEY_SCHEME)
@ApiV1Errors()
@Controller('v1/posts')
export class PostApprovalsController {
  constructor(private readonly approvals: ApprovalsService) {}

  @Post(':id/submit')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'submitPost',
    summary: 'Submit a draft for approval: it becomes pending_approval and the owners are told by mail',
    description:
      'Only where approval is required of the caller (the workspace\'s mode): otherwise 409 says so, and the draft is scheduled as usual (PATCH with status "scheduled"). The draft is checked as scheduling would check it (accounts, platform limits). A draft has no time: approved, it goes out at once.',
  })
  @ApiParam(ID_PARAM)
  @ApiResponse({ status: 200, description: 'The post, pending_approval', type: PostDto })
  @ApiErrors([404, 409], {
    400: 'The draft would not pass the platform checks (the message names the target).',
    409: 'The post is not a draft, or approval is not required (the message says which).',
  })
  submit(@Auth() auth: AuthContext, @Param('id', postId) id: string) {
    return this.approvals.submit(auth, id);
  }

  @Post(':id/approve')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'approvePost',
    summary: 'Approve a post waiting for approval (owners): its jobs are written in the statement that ends the wait',
    description:
      'Approved after its time, it goes out at once (scheduledAt becomes the approval time); approved after its deadline (publishBy), it expires instead: status expired, nothing published. Under mode `everyone`, the author may not approve their own post (403). The author is told by mail.',
  })
  @ApiParam(ID_PARAM)
  @ApiResponse({ status: 200, description: 'The post, scheduled (with its jobs) or expired', type: PostDto })
  @ApiErrors([403, 404, 409], {
    403: "Only owners approve; under mode `everyone` not the post's author (the message says which).",
    409: 'The post is not waiting for approval (the message says what it is).',
  })
  approve(@Auth() auth: AuthContext, @Param('id', postId) id: string) {
    return this.approvals.approve(auth.workspaceId, id, auth);
  }

  @Post(':id/reject')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'rejectPost',
    summary: 'Send a post waiting for approval back to its author as a draft, with a comment (owners)',
    description:
      'The draft loses the time it asked for (a draft has none); the comment is in the approval history, on the page beside the draft, and in the mail to the author.',
  })
  @ApiParam(ID_PARAM)
  @ApiResponse({ status: 200, description: 'The post, a draft again', type: PostDto })
  @ApiErrors([...BODY_ERRORS, 403, 404, 409], {
    400: 'comment is missing, empty or over 2,000 characters; nothing was changed.',
    403: "Only owners reject; under mode `everyone` not the post's author.",
    409: 'The post is not waiting for approval.',
  })
  reject(@Auth() auth: AuthContext, @Param('id', postId) id: string, @Body() body: RejectPostDto) {
    return this.approvals.reject(auth.workspaceId, id, auth, body.comment);
  }

  @Get(':id/approvals')
  @ApiOperation({
    operationId: 'listPostApprovals',
    summary:
      "A post's approval history: every step (submitted, resubmitted, approved, rejected, expired), who, the comment, when; oldest first",
  })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ type: ApprovalHistoryDto })
  @ApiErrors([404])
  async history(@Auth() auth: AuthContext, @Param('id', postId) id: string) {
    return { data: await this.approvals.history(auth.workspaceId, id) };
  }
}
