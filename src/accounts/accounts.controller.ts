import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiNoContentResponse, ApiOperation, ApiParam, ApiResponse, ApiTags } from '@nestjs/swagger';
import { API_KEY_SCHEME, ApiErrors, ApiPageResponse, ApiV1Errors, BODY_ERRORS } from '../common/openapi';
import { PageQuery } from '../common/pagination';
import { ParseIdPipe } from '../common/parse-id.pipe';
import { Auth, AuthContext } from '../workspaces/auth';
import { AccountDto, AccountWithSecretDto, VerifyResultDto } from './account-view.dto';
import { CreateAccountDto, UpdateAccountDto } from './accounts.dto';
import { AccountsService } from './accounts.service';

const accountId = new ParseIdPipe('account');
const ID_PARAM = { name: 'id', format: 'uuid', description: 'the account id' } as const;

@ApiTags('accounts')
@ApiBearerAuth(API_KEY_SCHEME)
@ApiV1Errors()
@Controller('v1/accounts')
export class AccountsController {
  constructor(private readonly accounts: AccountsService) {}

  @Post()
  @ApiOperation({
    operationId: 'createAccount',
    summary: 'Connect an account',
    description:
      "Credentials are checked for shape and encrypted at rest; they are never shown again. A webhook account's signing secret is in this answer only. A Mastodon access token is checked with its instance (`verify_credentials`) before anything is saved: a refused token is a 400 and nothing is stored; the account's name (when none is given), handle and the instance's limits come from the instance.",
  })
  @ApiBody({
    type: CreateAccountDto,
    examples: {
      webhook: { value: { provider: 'webhook', name: 'Company blog', config: { url: 'https://blog.example.com/hooks/herald' } } },
      bluesky: {
        value: { provider: 'bluesky', name: 'Bluesky', config: { identifier: 'herald.bsky.social', appPassword: 'abcd-efgh-ijkl-mnop' } },
      },
      linkedin: {
        value: { provider: 'linkedin', name: 'LinkedIn page', config: { accessToken: 'AQV…', authorUrn: 'urn:li:organization:1234' } },
      },
      mastodon: {
        summary: 'Mastodon: the token is checked with the instance first; the name defaults to the display name',
        value: { provider: 'mastodon', config: { instanceUrl: 'https://mastodon.social', accessToken: 'mstdn-token…' } },
      },
    },
  })
  @ApiResponse({ status: 201, description: 'The account; webhooks: with `secret`, shown this once', type: AccountWithSecretDto })
  @ApiErrors(BODY_ERRORS)
  create(@Auth() auth: AuthContext, @Body() body: CreateAccountDto) {
    return this.accounts.create(auth, body);
  }

  @Get()
  @ApiOperation({ operationId: 'listAccounts', summary: 'List the accounts, newest first' })
  @ApiPageResponse(AccountDto)
  @ApiErrors([400])
  list(@Auth() auth: AuthContext, @Query() query: PageQuery) {
    return this.accounts.list(auth.workspaceId, query.limit, query.cursor);
  }

  @Get(':id')
  @ApiOperation({ operationId: 'getAccount', summary: 'An account: status, circuit breaker, last error' })
  @ApiParam(ID_PARAM)
  @ApiResponse({ status: 200, description: 'The account', type: AccountDto })
  @ApiErrors([404])
  get(@Auth() auth: AuthContext, @Param('id', accountId) id: string) {
    return this.accounts.get(auth.workspaceId, id);
  }

  @Patch(':id')
  @ApiOperation({
    operationId: 'updateAccount',
    summary: 'Rename, change settings or credentials, enable or disable, set the retry policy',
    description:
      'On an account that needs re-authentication or is disabled, new `config` (or the same credentials re-entered) or `{ "status": "active" }` makes it active, closes its circuit and resumes its paused jobs. `{ "status": "disabled" }` pauses its waiting jobs. A webhook whose `config.url` moves to another origin (scheme, host or port) keeps neither its stored headers (give them again in `config.headers`) nor its signing secret: a new one is made and shown in this answer, once.',
  })
  @ApiParam(ID_PARAM)
  @ApiResponse({
    status: 200,
    description: 'The account as it is now; `secret` only when a webhook moved to another origin got a new signing secret',
    type: AccountWithSecretDto,
  })
  @ApiErrors([...BODY_ERRORS, 404])
  update(@Auth() auth: AuthContext, @Param('id', accountId) id: string, @Body() body: UpdateAccountDto) {
    return this.accounts.update(auth, id, body);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ operationId: 'deleteAccount', summary: 'Remove the account; its jobs that have not started are cancelled' })
  @ApiParam(ID_PARAM)
  @ApiNoContentResponse({ description: 'Removed' })
  @ApiErrors([404])
  async remove(@Auth() auth: AuthContext, @Param('id', accountId) id: string): Promise<void> {
    await this.accounts.remove(auth, id);
  }

  @Post(':id/verify')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'verifyAccount',
    summary: 'Check the credentials against the platform now',
    description: "For a Mastodon account, the instance's limits are read again and kept with the account (its `config.limits`).",
  })
  @ApiParam(ID_PARAM)
  @ApiResponse({ status: 200, description: 'What the platform said (a refusal is `ok: false`, not an error)', type: VerifyResultDto })
  @ApiErrors([404])
  verify(@Auth() auth: AuthContext, @Param('id', accountId) id: string) {
    return this.accounts.verify(auth.workspaceId, id);
  }

  @Post(':id/rotate-secret')
  @HttpCode(200)
  @ApiOperation({ operationId: 'rotateAccountSecret', summary: 'New webhook signing secret, shown in this answer only' })
  @ApiParam(ID_PARAM)
  @ApiResponse({ status: 200, description: 'The account with its new `secret`', type: AccountWithSecretDto })
  @ApiErrors([400, 404], { 400: 'The account is not a webhook (only webhooks have a signing secret).' })
  rotateSecret(@Auth() auth: AuthContext, @Param('id', accountId) id: string) {
    return this.accounts.rotateSecret(auth, id);
  }
}
