import { Controller, Get, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth, AuthContext } from '../access/auth-context';
import { API_KEY_SCHEME, ApiErrors, ApiPageResponse, ApiV1Errors } from '../common/openapi';
import { AuditEventDto } from './audit-view.dto';
import { ListAuditQuery } from './audit.dto';
import { AuditService } from './audit.service';

@ApiTags('audit')
@ApiBearerAuth(API_KEY_SCHEME)
@ApiV1Errors()
@Controller('v1/audit')
export class AuditController {
  constructor(private readonly audit: AuditService) {}

  @Get()
  @ApiOperation({
    operationId: 'listAuditEvents',
    summary: 'The audit trail: every change, who made it (person or API key) and what changed; newest first',
  })
  @ApiPageResponse(AuditEventDto)
  @ApiErrors([400])
  list(@Auth() auth: AuthContext, @Query() query: ListAuditQuery) {
    return this.audit.list(
      auth.workspaceId,
      { actorId: query.actorId?.toLowerCase(), kind: query.kind, subjectId: query.subjectId?.toLowerCase() },
      query.limit,
      query.cursor,
    );
  }
}
