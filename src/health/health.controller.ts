import { Controller, Get } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { InjectDataSource } from '@nestjs/typeorm';
import { HealthCheck, HealthCheckService, HealthIndicatorService, TypeOrmHealthIndicator } from '@nestjs/terminus';
import { DataSource } from 'typeorm';
import { Public } from '../workspaces/auth';

@ApiTags('operations')
@Public()
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly db: TypeOrmHealthIndicator,
    private readonly indicators: HealthIndicatorService,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  /** The process is up and its event loop answers. */
  @Get('live')
  live() {
    return { status: 'ok' };
  }

  /** Ready to serve: PostgreSQL answers within 2 s and every migration is applied. */
  @Get('ready')
  @HealthCheck()
  ready() {
    return this.health.check([
      () => this.db.pingCheck('database', { timeout: 2000 }),
      async () => {
        const indicator = this.indicators.check('migrations');
        const pending = await this.dataSource.showMigrations();
        return pending ? indicator.down({ message: 'migrations are pending' }) : indicator.up();
      },
    ]);
  }
}
