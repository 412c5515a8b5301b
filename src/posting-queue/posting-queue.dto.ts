import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsIn, IsObject, IsString, Matches, MaxLength, ValidateNested } from 'class-validator';
import { MAX_SLOTS, WEEKDAYS, type QueueSlot, type Weekday } from './queue-slots';

const TIME_MESSAGE = 'time must be a time HH:MM from 00:00 to 23:59';

@ApiSchema({ name: 'QueueSlot' })
export class QueueSlotDto implements QueueSlot {
  @ApiProperty({ enum: WEEKDAYS, enumName: 'Weekday', example: 'mon' })
  @IsIn(WEEKDAYS, { message: `day must be one of ${WEEKDAYS.join(', ')}` })
  @IsString({ message: `day must be one of ${WEEKDAYS.join(', ')}` })
  day!: Weekday;

  @ApiProperty({ pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$', example: '09:00', description: 'HH:MM in the schedule’s time zone' })
  @Matches(/^([01]\d|2[0-3]):[0-5]\d$/, { message: TIME_MESSAGE })
  @IsString({ message: TIME_MESSAGE })
  time!: string;
}

/** PUT /v1/settings/queue and PUT /v1/accounts/{id}/queue: the whole schedule (it replaces the one before). */
@ApiSchema({ name: 'QueueSettingsInput' })
export class QueueSettingsDto {
  @ApiProperty({ example: 'Europe/Berlin', description: 'IANA time zone name the slots are in', maxLength: 64 })
  @MaxLength(64, { message: 'timezone must be an IANA time zone name such as Europe/Berlin' })
  @IsString({ message: 'timezone must be an IANA time zone name such as Europe/Berlin' })
  timezone!: string;

  @ApiProperty({
    type: [QueueSlotDto],
    maxItems: MAX_SLOTS,
    description: `weekly slots, each (day, time) at most once; at most ${MAX_SLOTS}. An empty list turns the queue off`,
    example: [
      { day: 'mon', time: '09:00' },
      { day: 'wed', time: '12:30' },
    ],
  })
  @ValidateNested({ each: true })
  @IsObject({ each: true, message: 'each slot must be an object { day, time }' })
  @Type(() => QueueSlotDto)
  @ArrayMaxSize(MAX_SLOTS, { message: `slots: at most ${MAX_SLOTS} slots a week` })
  @IsArray({ message: 'slots must be a list of { day, time }' })
  slots!: QueueSlotDto[];
}

@ApiSchema({ name: 'QueueSettings' })
export class QueueSettingsView {
  @ApiProperty({ example: 'Europe/Berlin' })
  timezone!: string;

  @ApiProperty({ type: [QueueSlotDto], description: 'in week order: Monday first, then by time' })
  slots!: QueueSlotDto[];
}

@ApiSchema({ name: 'AccountQueueSettings' })
export class AccountQueueView extends QueueSettingsView {
  @ApiProperty({
    enum: ['account', 'workspace'],
    description: "`account`: the account's own slots, which replace the workspace's for it; `workspace`: it follows the workspace's",
  })
  source!: 'account' | 'workspace';
}

/** The slot a queued post took, as the post view shows it (`queueSlot`). */
@ApiSchema({ name: 'QueueSlotTaken' })
export class QueueSlotView {
  @ApiProperty({ format: 'date-time', description: 'the instant: the post’s scheduledAt' })
  at!: string;

  @ApiProperty({ example: 'Europe/Berlin', description: 'the zone of the schedule the slot belongs to' })
  timezone!: string;

  @ApiProperty({ enum: WEEKDAYS, enumName: 'Weekday' })
  day!: Weekday;

  @ApiProperty({ example: '09:00', description: 'the slot’s time as scheduled' })
  time!: string;

  @ApiProperty({
    example: '09:00',
    description:
      'the wall-clock time it happens at: `time`, or the first time that exists after it on a day the clocks skip `time` (02:30 → 03:00)',
  })
  localTime!: string;

  @ApiProperty({ description: 'true when `time` does not exist on that day and the post goes at `localTime` instead' })
  moved!: boolean;
}
