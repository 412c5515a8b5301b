import { Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiParam, ApiResponse, ApiTags } from '@nestjs/swagger';
import { API_KEY_SCHEME, ApiErrors, ApiV1Errors } from '../common/openapi';
import { ParseIdPipe } from '../common/parse-id.pipe';
import { Auth, AuthContext } from '../workspaces/auth';
import { JobWithAttemptsDto } from './job-view.dto';
import { JobsService } from './jobs.service';

const jobId = new ParseIdPipe('job');
const ID_PARAM = { name: 'id', format: 'uuid', description: 'the job id' } as const;

@ApiTags('jobs')
@ApiBearerAuth(API_KEY_SCHEME)
@ApiV1Errors()
@Controller('v1/jobs')
export class JobsController {
  constructor(private readonly jobs: JobsService) {}

  @Get(':id')
  @ApiOperation({ operationId: 'getJob', summary: 'A publish job with every attempt' })
  @ApiParam(ID_PARAM)
  @ApiResponse({ status: 200, description: 'The job and its attempts, oldest first', type: JobWithAttemptsDto })
  @ApiErrors([404])
  get(@Auth() auth: AuthContext, @Param('id', jobId) id: string) {
    return this.jobs.get(auth.workspaceId, id);
  }

  @Post(':id/retry')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'retryJob',
    summary: 'Retry now',
    description: 'A job waiting for its next attempt becomes due now; a dead job gets a fresh attempt budget (its history stays).',
  })
  @ApiParam(ID_PARAM)
  @ApiResponse({ status: 200, description: 'The job as it is now', type: JobWithAttemptsDto })
  @ApiErrors([404, 409], {
    409: 'The job cannot be retried now (an attempt is in flight, or it is published, paused, cancelled or discarded); the message says which.',
  })
  retry(@Auth() auth: AuthContext, @Param('id', jobId) id: string) {
    return this.jobs.retry(auth.workspaceId, id);
  }
}
