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

  @ApiPropertyOptional({ description: 'why it is down; for linkedinVersion (always up), the warning from 60 days before its sunset' })
  message?: string;

  @ApiPropertyOptional({ description: 'linkedinVersion: the LinkedIn-Version Herald sends (YYYYMM)' })
  version?: string;

  @ApiPropertyOptional({
    description: 'linkedinVersion: the day LinkedIn retires it (published, or the earliest its one-year rule allows)',
  })
  sunset?: string;
}

const CHECKS = {
  type: 'object',
  additionalProperties: { $ref: '#/components/schemas/Check' },
  description: 'one entry per check: database, migrations, linkedinVersion',
  example: {
    database: { status: 'up' },
    migrations: { status: 'up' },
    linkedinVersion: { status: 'up', version: '202608', sunset: '2027-08-01' },
  },
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
