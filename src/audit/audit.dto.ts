import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsUUID } from 'class-validator';
import { PageQuery } from '../common/pagination';
import { AUDIT_KINDS, AuditKind } from './audit.types';

export class ListAuditQuery extends PageQuery {
  @ApiPropertyOptional({ format: 'uuid', description: 'only what this person or API key did (its id)' })
  @IsOptional()
  @IsUUID('all')
  actorId?: string;

  @ApiPropertyOptional({ enum: AUDIT_KINDS, enumName: 'AuditKind', description: 'only changes to this kind of thing' })
  @IsOptional()
  @IsIn(AUDIT_KINDS)
  kind?: AuditKind;

  @ApiPropertyOptional({ format: 'uuid', description: 'only changes to this thing (an account, post, job, person, key… id)' })
  @IsOptional()
  @IsUUID('all')
  subjectId?: string;
}
