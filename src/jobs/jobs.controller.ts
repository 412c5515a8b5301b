import { Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ParseIdPipe } from '../common/parse-id.pipe';
import { Auth, AuthContext } from '../workspaces/auth';
import { JobsService } from './jobs.service';

const jobId = new ParseIdPipe('job');

@ApiTags('jobs')
@ApiBearerAuth()
@Controller('v1/jobs')
export class JobsController {
  constructor(private readonly jobs: JobsService) {}

  @Get(':id')
  @ApiOperation({ summary: 'A publish job with every attempt.' })
  get(@Auth() auth: AuthContext, @Param('id', jobId) id: string) {
    return this.jobs.get(auth.workspaceId, id);
  }

  @Post(':id/retry')
  @HttpCode(200)
  @ApiOperation({ summary: 'Retry now (a dead job gets a fresh attempt budget). 409 while an attempt is in flight.' })
  retry(@Auth() auth: AuthContext, @Param('id', jobId) id: string) {
    return this.jobs.retry(auth.workspaceId, id);
  }
}
