import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ParseIdPipe } from '../common/parse-id.pipe';
import { Auth, AuthContext } from '../workspaces/auth';
import { BulkRequeueDto, EditDeadJobDto, ListDlqQuery, RequeueDto } from './dead-letter.dto';
import { DeadLetterService } from './dead-letter.service';

const jobId = new ParseIdPipe('job');

@ApiTags('dead-letter queue')
@ApiBearerAuth()
@Controller('v1/dlq')
export class DeadLetterController {
  constructor(private readonly dlq: DeadLetterService) {}

  @Get()
  @ApiOperation({ summary: 'Dead jobs, newest first; filters: accountId, provider, errorClass, deadReason, from, to, q (text in the last error). Discarded jobs with ?status=discarded or ?includeDiscarded=true.' })
  list(@Auth() auth: AuthContext, @Query() query: ListDlqQuery) {
    return this.dlq.list(auth.workspaceId, query);
  }

  @Post('requeue')
  @HttpCode(200)
  @ApiOperation({ summary: 'Requeue many dead jobs, { ids } or { filter }, in one transaction. Answers the count and the jobs skipped (not dead, account not active).' })
  bulkRequeue(@Auth() auth: AuthContext, @Body() body: BulkRequeueDto) {
    return this.dlq.bulkRequeue(auth, body);
  }

  @Get(':jobId')
  @ApiOperation({ summary: 'A job with its payload as it would be sent, every attempt, why it was dead-lettered, and its audit trail.' })
  get(@Auth() auth: AuthContext, @Param('jobId', jobId) id: string) {
    return this.dlq.get(auth.workspaceId, id);
  }

  @Patch(':jobId')
  @ApiOperation({ summary: "Edit this dead job's payload (text, title, link, media, metadata), validated as POST /v1/posts for its platform." })
  edit(@Auth() auth: AuthContext, @Param('jobId', jobId) id: string, @Body() body: EditDeadJobDto) {
    return this.dlq.edit(auth, id, body);
  }

  @Post(':jobId/requeue')
  @HttpCode(200)
  @ApiOperation({ summary: 'Back into the queue with a fresh attempt budget; a new idempotency key if the payload was edited. 409 while its account needs re-auth or is disabled, unless { force: true }.' })
  requeue(@Auth() auth: AuthContext, @Param('jobId', jobId) id: string, @Body() body: RequeueDto) {
    return this.dlq.requeue(auth, id, body);
  }

  @Delete(':jobId')
  @HttpCode(200)
  @ApiOperation({ summary: 'Discard: the job is kept as discarded (with its history) and leaves the default list.' })
  discard(@Auth() auth: AuthContext, @Param('jobId', jobId) id: string) {
    return this.dlq.discard(auth, id);
  }
}
