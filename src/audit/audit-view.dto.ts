import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { AUDIT_KINDS, ActorKind, AuditActor, AuditEventView, AuditKind } from './audit.types';

const ACTOR_KINDS: readonly ActorKind[] = ['person', 'key', 'system'];

@ApiSchema({ name: 'AuditActor' })
export class AuditActorDto implements AuditActor {
  @ApiProperty({ enum: ACTOR_KINDS, enumName: 'AuditActorKind', description: 'a person (the page), an API key, or Herald itself' })
  kind!: ActorKind;

  @ApiProperty({ type: String, format: 'uuid', nullable: true, description: "the person's or the key's id" })
  id!: string | null;

  @ApiProperty({ description: 'its name as it was then', example: 'Ada Lovelace <ada@example.com>' })
  label!: string;
}

@ApiSchema({ name: 'AuditEvent' })
export class AuditEventDto implements AuditEventView {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ format: 'date-time' })
  at!: string;

  @ApiProperty({ type: AuditActorDto })
  actor!: AuditActorDto;

  @ApiProperty({ enum: AUDIT_KINDS, enumName: 'AuditKind' })
  kind!: AuditKind;

  @ApiProperty({ example: 'update', description: 'what was done: create, update, remove, requeue, …' })
  action!: string;

  @ApiProperty({ type: String, format: 'uuid', nullable: true, description: 'the id of the thing changed' })
  subjectId!: string | null;

  @ApiProperty({ example: 'Disabled the account “Company blog”' })
  summary!: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    description: 'the fields that changed, as they were (secrets never appear: only "(secret)")',
  })
  before!: Record<string, unknown> | null;

  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true, description: 'the same fields afterwards' })
  after!: Record<string, unknown> | null;
}
