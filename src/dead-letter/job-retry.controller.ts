import { Controller, HttpCode, Param, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiParam, ApiResponse, ApiTags } from '@nestjs/swagger';
import { API_KEY_SCHEME, ApiErrors, ApiV1Errors } from '../common/openapi';
import { JOB_ID_PARAM, jobId } from '../jobs/jobs.controller';
import { JobWithAttemptsDto } from '../jobs/job-view.dto';
import { Auth, AuthContext } from '../workspaces/auth';
import { DeadLetterService } from './dead-letter.service';

/**
 * POST /v1/jobs/:id/retry, served by the dead-letter module: retrying a dead job is a requeue,
 * and records it in the audit trail (src/audit) like a requeue.
 */
@ApiTags('jobs')
@ApiBearerAuth(API_KEY_SCHEME)
@ApiV1Errors()
@Controller('v1/jobs')
export class JobRetryController {
  constructor(private readonly dlq: DeadLetterService) {}

  @Post(':id/retry')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'retryJob',
    summary: 'Retry now',
    description:
      'A job waiting for its next attempt becomes due now; a dead job gets a fresh attempt budget (its history stays), recorded in its audit trail (GET /v1/dlq/{jobId}) as a requeue.',
  })
  @ApiParam(JOB_ID_PARAM)
  @ApiResponse({ status: 200, description: 'The job as it is now', type: JobWithAttemptsDto })
  @ApiErrors([404, 409], {
    409: 'The job cannot be retried now (an attempt is in flight, or it is published, paused, cancelled or discarded); the message says which.',
  })
  retry(@Auth() auth: AuthContext, @Param('id', jobId) id: string) {
    return this.dlq.retry(auth, id);
  }
}
