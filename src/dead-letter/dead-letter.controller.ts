import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiParam, ApiResponse, ApiTags } from '@nestjs/swagger';
import { API_KEY_SCHEME, ApiErrors, ApiPageResponse, ApiV1Errors, BODY_ERRORS } from '../common/openapi';
import { ParseIdPipe } from '../common/parse-id.pipe';
import { Auth, AuthContext } from '../workspaces/auth';
import { BulkRequeueDto, EditDeadJobDto, ListDlqQuery, RequeueDto } from './dead-letter.dto';
import { DeadLetterService } from './dead-letter.service';
import { BulkRequeueResultDto, DlqDetailDto, DlqEntryDto } from './dlq-view.dto';

const jobId = new ParseIdPipe('job');
const JOB_PARAM = { name: 'jobId', format: 'uuid', description: "the dead job's id" } as const;
const NOT_DEAD = 'The job is not dead (any more); the message says what it is now.';

@ApiTags('dead-letter queue')
@ApiBearerAuth(API_KEY_SCHEME)
@ApiV1Errors()
@Controller('v1/dlq')
export class DeadLetterController {
  constructor(private readonly dlq: DeadLetterService) {}

  @Get()
  @ApiOperation({
    operationId: 'listDeadJobs',
    summary: 'Dead jobs, newest death first',
    description:
      'Filters: accountId, provider, errorClass, deadReason, from / to (when it died), q (text in the last error). Discarded jobs only with `status=discarded` or `includeDiscarded=true`.',
  })
  @ApiPageResponse(DlqEntryDto)
  @ApiErrors([400])
  list(@Auth() auth: AuthContext, @Query() query: ListDlqQuery) {
    return this.dlq.list(auth.workspaceId, query);
  }

  @Post('requeue')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'requeueDeadJobs',
    summary: 'Requeue many dead jobs in one transaction: `{ ids }` or `{ filter }`',
    description:
      'Jobs that are not dead, or whose account is not active (without `force`) or deleted, are skipped and listed with the reason; the others are requeued. By filter, at most 10,000 jobs per call (`more: true` says to call again).',
  })
  @ApiResponse({ status: 200, description: 'What was requeued and what was skipped', type: BulkRequeueResultDto })
  @ApiErrors(BODY_ERRORS, { 400: 'Invalid input, or an id that is not a job of this workspace; nothing was requeued.' })
  bulkRequeue(@Auth() auth: AuthContext, @Body() body: BulkRequeueDto) {
    return this.dlq.bulkRequeue(auth, body);
  }

  @Get(':jobId')
  @ApiOperation({
    operationId: 'getDeadJob',
    summary: 'A job with its payload as it would be sent, every attempt, why it died, and its audit trail',
  })
  @ApiParam(JOB_PARAM)
  @ApiResponse({
    status: 200,
    description: "The job (any job of the workspace, so a requeued job's page stays readable)",
    type: DlqDetailDto,
  })
  @ApiErrors([404])
  get(@Auth() auth: AuthContext, @Param('jobId', jobId) id: string) {
    return this.dlq.get(auth.workspaceId, id);
  }

  @Patch(':jobId')
  @ApiOperation({
    operationId: 'editDeadJob',
    summary: "Edit this dead job's payload",
    description:
      "Validated as POST /v1/posts for the job's platform; `null` clears title, link or metadata. Only this job changes, not the post's other jobs. Every edit is in the audit trail.",
  })
  @ApiParam(JOB_PARAM)
  @ApiResponse({ status: 200, description: 'The job as it is now', type: DlqDetailDto })
  @ApiErrors([...BODY_ERRORS, 404, 409], { 409: NOT_DEAD })
  edit(@Auth() auth: AuthContext, @Param('jobId', jobId) id: string, @Body() body: EditDeadJobDto) {
    return this.dlq.edit(auth, id, body);
  }

  @Post(':jobId/requeue')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'requeueDeadJob',
    summary: 'Back into the queue with a fresh attempt budget',
    description:
      'The job keeps its idempotency key unless its payload was edited. While its account needs re-authentication or is disabled the answer is 409, unless `force: true` (the job then waits as paused until the account is fixed).',
  })
  @ApiParam(JOB_PARAM)
  @ApiResponse({ status: 200, description: 'The job as it is now', type: DlqDetailDto })
  @ApiErrors([...BODY_ERRORS, 404, 409], {
    409: `${NOT_DEAD} Or its account is not active (the message says what to fix), or was deleted.`,
  })
  requeue(@Auth() auth: AuthContext, @Param('jobId', jobId) id: string, @Body() body: RequeueDto) {
    return this.dlq.requeue(auth, id, body);
  }

  @Delete(':jobId')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'discardDeadJob',
    summary: 'Discard a dead job',
    description:
      'The job is kept as discarded, with its history and dead reason, and leaves the default list. Discarding a discarded job changes nothing.',
  })
  @ApiParam(JOB_PARAM)
  @ApiResponse({ status: 200, description: 'The job as it is now', type: DlqDetailDto })
  @ApiErrors([404, 409], { 409: NOT_DEAD })
  discard(@Auth() auth: AuthContext, @Param('jobId', jobId) id: string) {
    return this.dlq.discard(auth, id);
  }
}
