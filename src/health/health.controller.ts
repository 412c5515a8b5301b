import { Controller, Get } from '@nestjs/common';
import { ApiExtraModels, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { HealthCheck, HealthCheckService, HealthIndicatorService } from '@nestjs/terminus';
import { Public } from '../workspaces/auth';
import { CheckDto, LiveDto, NotReadyDto, ReadyDto } from './health-view.dto';
import { ReadinessService } from './readiness.service';

@ApiTags('operations')
@ApiExtraModels(CheckDto)
@Public()
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
    private readonly readiness: ReadinessService,
  ) {}

  /** The process is up and its event loop answers. */
  @Get('live')
  @ApiOperation({ operationId: 'live', summary: 'Liveness: the process answers (no API key)' })
  @ApiResponse({ status: 200, description: 'Alive', type: LiveDto })
  live() {
    return { status: 'ok' };
  }

  /**
   * Ready to serve: PostgreSQL answers within 2 s and every migration is applied. 503 while the
   * database is away (restart, network cut); 200 again as soon as it answers. `linkedinVersion`
   * is always up: its `message` warns from 60 days before the configured version's sunset.
   */
  @Get('ready')
  @ApiOperation({ operationId: 'ready', summary: 'Readiness: PostgreSQL answers and every migration is applied (no API key)' })
  @ApiResponse({ status: 200, description: 'Ready', type: ReadyDto })
  @ApiResponse({ status: 503, description: 'Not ready; `details` says which check failed', type: NotReadyDto })
  @HealthCheck({ swaggerDocumentation: false })
  ready() {
    return this.health.check([
      async () => {
        const indicator = this.indicators.check('database');
        const problem = await this.readiness.database();
        return problem === null ? indicator.up() : indicator.down({ message: problem });
      },
      async () => {
        const indicator = this.indicators.check('migrations');
        const problem = await this.readiness.migrations();
        return problem === null ? indicator.up() : indicator.down({ message: problem });
      },
      // Never down: a LinkedIn version near or past its sunset stops LinkedIn posts, not Herald.
      () => {
        const { version, sunset, warning } = this.readiness.linkedInVersion(new Date());
        return this.indicators.check('linkedinVersion').up({ version, sunset, ...(warning ? { message: warning } : {}) });
      },
    ]);
  }
}
