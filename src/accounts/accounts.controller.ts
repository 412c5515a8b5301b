import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { PageQuery } from '../common/pagination';
import { ParseIdPipe } from '../common/parse-id.pipe';
import { Auth, AuthContext } from '../workspaces/auth';
import { CreateAccountDto, UpdateAccountDto } from './accounts.dto';
import { AccountsService } from './accounts.service';

const accountId = new ParseIdPipe('account');

@ApiTags('accounts')
@ApiBearerAuth()
@Controller('v1/accounts')
export class AccountsController {
  constructor(private readonly accounts: AccountsService) {}

  @Post()
  @ApiOperation({ summary: 'Connect an account. A webhook account\'s signing secret is in this answer only.' })
  create(@Auth() auth: AuthContext, @Body() body: CreateAccountDto) {
    return this.accounts.create(auth.workspaceId, body);
  }

  @Get()
  list(@Auth() auth: AuthContext, @Query() query: PageQuery) {
    return this.accounts.list(auth.workspaceId, query.limit, query.cursor);
  }

  @Get(':id')
  get(@Auth() auth: AuthContext, @Param('id', accountId) id: string) {
    return this.accounts.get(auth.workspaceId, id);
  }

  @Patch(':id')
  @ApiOperation({ summary: 'Rename, change settings or credentials, enable/disable, set the retry policy.' })
  update(@Auth() auth: AuthContext, @Param('id', accountId) id: string, @Body() body: UpdateAccountDto) {
    return this.accounts.update(auth.workspaceId, id, body);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Remove the account; its jobs that have not started are cancelled.' })
  async remove(@Auth() auth: AuthContext, @Param('id', accountId) id: string): Promise<void> {
    await this.accounts.remove(auth.workspaceId, id);
  }

  @Post(':id/verify')
  @HttpCode(200)
  @ApiOperation({ summary: 'Check the credentials against the platform now.' })
  verify(@Auth() auth: AuthContext, @Param('id', accountId) id: string) {
    return this.accounts.verify(auth.workspaceId, id);
  }

  @Post(':id/rotate-secret')
  @HttpCode(200)
  @ApiOperation({ summary: 'New webhook signing secret, shown in this answer only.' })
  rotateSecret(@Auth() auth: AuthContext, @Param('id', accountId) id: string) {
    return this.accounts.rotateSecret(auth.workspaceId, id);
  }
}
