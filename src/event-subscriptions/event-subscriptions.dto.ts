import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayNotEmpty,
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsIn,
  IsObject,
  IsOptional,
  IsString,
  MaxLength,
} from 'class-validator';
import type { EventEndpointView } from '../accounts/event-endpoints.service';
import { ERROR_CLASSES, EVENT_TYPES, EventType, JOB_STATUSES } from '../vocabulary/vocabulary';
import type { EventDeliveryView } from './event-subscriptions.service';

// Decorators run bottom-up and the pipe stops at the first failure: type checks sit last.

const EVENTS_DESCRIPTION = `the events this endpoint receives, one or more of: ${EVENT_TYPES.join(', ')} (docs/events.md)`;

@ApiSchema({ name: 'CreateEventSubscription' })
export class CreateEventSubscriptionDto {
  @ApiProperty({
    example: 'https://hooks.example.com/herald',
    description: "https (http only where private addresses are allowed); checked like a webhook account's URL",
  })
  @MaxLength(2048)
  @IsString()
  url!: string;

  @ApiProperty({ enum: EVENT_TYPES, isArray: true, description: EVENTS_DESCRIPTION, example: ['post.published', 'post.failed'] })
  @IsIn(EVENT_TYPES, { each: true })
  @ArrayUnique()
  @ArrayMaxSize(EVENT_TYPES.length)
  @ArrayNotEmpty()
  @IsArray()
  events!: EventType[];

  @ApiPropertyOptional({ maxLength: 500, example: 'Slack relay' })
  @IsOptional()
  @MaxLength(500)
  @IsString()
  description?: string;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string' },
    description: 'custom headers sent with every delivery (write-only: only their names are shown again)',
    example: { Authorization: 'Bearer …' },
  })
  @IsOptional()
  @IsObject()
  headers?: Record<string, string>;
}

@ApiSchema({ name: 'UpdateEventSubscription' })
export class UpdateEventSubscriptionDto {
  @ApiPropertyOptional({
    description: 'a new address; on another origin the stored headers are dropped (give them again) and a new secret is shown once',
  })
  @IsOptional()
  @MaxLength(2048)
  @IsString()
  url?: string;

  @ApiPropertyOptional({ enum: EVENT_TYPES, isArray: true, description: EVENTS_DESCRIPTION })
  @IsOptional()
  @IsIn(EVENT_TYPES, { each: true })
  @ArrayUnique()
  @ArrayMaxSize(EVENT_TYPES.length)
  @ArrayNotEmpty()
  @IsArray()
  events?: EventType[];

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 500 })
  @IsOptional()
  @MaxLength(500)
  @IsString()
  description?: string | null;

  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' }, description: 'with url only; write-only' })
  @IsOptional()
  @IsObject()
  headers?: Record<string, string>;

  @ApiPropertyOptional({
    description: 'true: nothing is sent (deliveries wait, paused); false: active again, circuit closed, waiting deliveries resume',
  })
  @IsOptional()
  @IsBoolean()
  paused?: boolean;
}

@ApiSchema({ name: 'EventSubscriptionCircuit' })
class CircuitDto {
  @ApiProperty({ enum: ['closed', 'open', 'half_open'] })
  state!: 'closed' | 'open' | 'half_open';

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  openUntil!: string | null;

  @ApiProperty()
  consecutiveFailures!: number;
}

@ApiSchema({ name: 'EventSubscription' })
export class EventSubscriptionDto implements EventEndpointView {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty()
  url!: string;

  @ApiProperty({ enum: EVENT_TYPES, isArray: true })
  events!: EventType[];

  @ApiProperty({ type: String, nullable: true })
  description!: string | null;

  @ApiProperty({ type: [String], description: 'names of the custom headers (values are never shown)' })
  headerNames!: string[];

  @ApiProperty({
    enum: ['active', 'needs_reauth', 'disabled'],
    description:
      '`active`; `needs_reauth` (the endpoint answered 401/403: fix it, then `paused: false`); `disabled` (paused, by a person or after 50 failures in a row)',
  })
  status!: EventEndpointView['status'];

  @ApiProperty({ type: String, nullable: true })
  statusReason!: string | null;

  @ApiProperty()
  paused!: boolean;

  @ApiProperty({ type: CircuitDto })
  circuit!: CircuitDto;

  @ApiProperty({ type: String, nullable: true })
  lastError!: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  lastSuccessAt!: string | null;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;
}

@ApiSchema({ name: 'EventSubscriptionWithSecret' })
export class EventSubscriptionWithSecretDto extends EventSubscriptionDto {
  @ApiPropertyOptional({ description: 'the signing secret (`whsec_…`), in this answer only', example: 'whsec_…' })
  secret?: string;
}

@ApiSchema({ name: 'EventDelivery' })
export class EventDeliveryDto implements EventDeliveryView {
  @ApiProperty({ format: 'uuid', description: 'the delivery (a job: GET /v1/jobs/{id} shows its attempts)' })
  id!: string;

  @ApiProperty({ format: 'uuid', description: "the event's id, the `webhook-id` header of every attempt" })
  eventId!: string;

  @ApiProperty({ enum: EVENT_TYPES })
  eventType!: string;

  @ApiProperty({
    enum: JOB_STATUSES,
    description: '`succeeded`; `scheduled` (waiting for its time or its next attempt); `dead` (failed: send it again); …',
  })
  status!: EventDeliveryView['status'];

  @ApiProperty()
  attempts!: number;

  @ApiProperty({ type: Number, nullable: true, description: "the last attempt's HTTP status" })
  httpStatus!: number | null;

  @ApiProperty({ type: String, nullable: true })
  networkError!: string | null;

  @ApiProperty({ enum: ERROR_CLASSES, nullable: true })
  errorClass!: EventDeliveryView['errorClass'];

  @ApiProperty({ type: String, nullable: true })
  lastError!: string | null;

  @ApiProperty({ type: String, nullable: true })
  deadReason!: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'when a waiting delivery is due' })
  nextAttemptAt!: string | null;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;

  @ApiProperty({ format: 'date-time', description: 'when it last changed (its last attempt, or when it was written)' })
  updatedAt!: string;
}
