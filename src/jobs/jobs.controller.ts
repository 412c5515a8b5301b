import { Controller, Get, Param } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiParam, ApiResponse, ApiTags } from '@nestjs/swagger';
import { API_KEY_SCHEME, ApiErrors, ApiV1Errors } from '../common/openapi';
import { ParseIdPipe } from '../common/parse-id.pipe';
import { Auth, AuthContext } from '../workspaces/auth';
import { JobWithAttemptsDto } from './job-view.dto';
import { JobsService } from './jobs.service';

export const jobId = new ParseIdPipe('job');
export const JOB_ID_PARAM = { name: 'id', format: 'uuid', description: 'the job id' } as const;

@ApiTags('jobs')
@ApiBearerAuth(API_KEY_SCHEME)
@ApiV1Errors()
/** GET /v1/jobs/:id; POST /v1/jobs/:id/retry is the dead-letter module's (JobRetryController): it keeps the audit trail. */
@Controller('v1/jobs')
export class JobsController {
  constructor(private readonly jobs: JobsService) {}

  @Get(':id')
  @ApiOperation({ operationId: 'getJob', summary: 'A publish job with every attempt' })
  @ApiParam(JOB_ID_PARAM)
  @ApiResponse({ status: 200, description: 'The job and its attempts, oldest first', type: JobWithAttemptsDto })
  @ApiErrors([404])
  get(@Auth() auth: AuthContext, @Param('id', jobId) id: string) {
    return this.jobs.get(auth.workspaceId, id);
  }
}
