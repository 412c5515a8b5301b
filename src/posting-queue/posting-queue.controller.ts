import { Body, Controller, Delete, Get, Param, Put } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { API_KEY_SCHEME, ApiErrors, ApiV1Errors, BODY_ERRORS } from '../common/openapi';
import { ParseIdPipe } from '../common/parse-id.pipe';
import { Auth, AuthContext } from '../workspaces/auth';
import { AccountQueueView, QueueSettingsDto, QueueSettingsView } from './posting-queue.dto';
import { PostingQueueService } from './posting-queue.service';

const accountId = new ParseIdPipe('account');
const ID_PARAM = { name: 'id', format: 'uuid', description: 'the account id' } as const;
const BAD_SCHEDULE = {
  400: 'The schedule is invalid (the message names the field: timezone, slots.3.day, slots.3.time, a repeated slot, more than 100); nothing was saved.',
};

@ApiTags('posting queue')
@ApiBearerAuth(API_KEY_SCHEME)
@ApiV1Errors()
@Controller('v1')
export class PostingQueueController {
  constructor(private readonly queue: PostingQueueService) {}

  @Get('settings/queue')
  @ApiOperation({
    operationId: 'getQueueSettings',
    summary: "The workspace's posting queue: weekly slots in a time zone that posts sent with `queue: true` take",
    description:
      'A workspace that never saved one has no slots (`{ "timezone": "UTC", "slots": [] }`): queueing answers 409 until it does.',
  })
  @ApiOkResponse({ type: QueueSettingsView })
  getWorkspace(@Auth() auth: AuthContext): Promise<QueueSettingsView> {
    return this.queue.getWorkspace(auth.workspaceId);
  }

  @Put('settings/queue')
  @ApiOperation({
    operationId: 'updateQueueSettings',
    summary: "Replace the workspace's posting queue (time zone and every slot)",
    description:
      'Slots already taken by queued posts stay taken (those posts keep their time); the new slots apply to posts queued from now on. Accounts with their own slots are not affected.',
  })
  @ApiOkResponse({ type: QueueSettingsView })
  @ApiErrors(BODY_ERRORS, BAD_SCHEDULE)
  putWorkspace(@Auth() auth: AuthContext, @Body() body: QueueSettingsDto): Promise<QueueSettingsView> {
    return this.queue.putWorkspace(auth, body);
  }

  @Get('accounts/:id/queue')
  @ApiOperation({ operationId: 'getAccountQueue', summary: 'The slots an account follows: its own (`source: account`) or the workspace’s' })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ type: AccountQueueView })
  @ApiErrors([404])
  getAccount(@Auth() auth: AuthContext, @Param('id', accountId) id: string): Promise<AccountQueueView> {
    return this.queue.getAccount(auth.workspaceId, id);
  }

  @Put('accounts/:id/queue')
  @ApiOperation({
    operationId: 'updateAccountQueue',
    summary: "Give an account its own slots, which replace the workspace's for it",
  })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ type: AccountQueueView })
  @ApiErrors([...BODY_ERRORS, 404], BAD_SCHEDULE)
  putAccount(@Auth() auth: AuthContext, @Param('id', accountId) id: string, @Body() body: QueueSettingsDto): Promise<AccountQueueView> {
    return this.queue.putAccount(auth, id, body);
  }

  @Delete('accounts/:id/queue')
  @ApiOperation({
    operationId: 'deleteAccountQueue',
    summary: "Remove an account's own slots: it follows the workspace's again (answers what it follows now)",
  })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ type: AccountQueueView })
  @ApiErrors([404])
  removeAccount(@Auth() auth: AuthContext, @Param('id', accountId) id: string): Promise<AccountQueueView> {
    return this.queue.removeAccount(auth, id);
  }
}
