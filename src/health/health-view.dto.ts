import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { ErrorBodyDto } from '../common/openapi';

/** The answers of /health/* as OpenAPI schemas. */

@ApiSchema({ name: 'Live' })
export class LiveDto {
  @ApiProperty({ enum: ['ok'] })
  status!: 'ok';
}

@ApiSchema({ name: 'Check' })
export class CheckDto {
  @ApiProperty({ enum: ['up', 'down'] })
  status!: 'up' | 'down';

  @ApiPropertyOptional({ description: 'why it is down' })
  message?: string;
}

const CHECKS = {
  type: 'object',
  additionalProperties: { $ref: '#/components/schemas/Check' },
  description: 'one entry per check: database, migrations',
  example: { database: { status: 'up' }, migrations: { status: 'up' } },
} as const;

@ApiSchema({ name: 'Ready' })
export class ReadyDto {
  @ApiProperty({ enum: ['ok'] })
  status!: 'ok';

  @ApiProperty(CHECKS)
  info!: Record<string, CheckDto>;

  @ApiProperty({ ...CHECKS, example: {} })
  error!: Record<string, CheckDto>;

  @ApiProperty(CHECKS)
  details!: Record<string, CheckDto>;
}

@ApiSchema({ name: 'NotReady' })
export class NotReadyDto extends ErrorBodyDto {
  @ApiProperty({ ...CHECKS, example: { database: { status: 'up' }, migrations: { status: 'down', message: 'migrations are pending' } } })
  details!: Record<string, CheckDto>;
}
