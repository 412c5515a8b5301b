import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsBoolean, IsInt, IsOptional, IsString, Max, MaxLength, Min, ValidateNested } from 'class-validator';

export const MAX_RECIPIENTS = 20;

/** PUT body, `digest` part. Absent fields keep their saved value. */
export class DigestSettingsDto {
  @ApiPropertyOptional({ description: 'Send the daily digest. Needs at least one recipient.' })
  @IsOptional()
  @IsBoolean({ message: 'digest.enabled must be true or false' })
  enabled?: boolean;

  @ApiPropertyOptional({
    type: [String],
    format: 'email',
    maxItems: MAX_RECIPIENTS,
    example: ['team@example.com'],
    description: 'Who gets the digest and the alerts (at most 20 addresses, each once).',
  })
  @IsOptional()
  @IsArray({ message: 'digest.recipients must be a list of email addresses' })
  @ArrayMaxSize(MAX_RECIPIENTS, { message: `digest.recipients lists at most ${MAX_RECIPIENTS} addresses` })
  @IsString({ each: true, message: 'digest.recipients must be a list of email addresses' })
  @MaxLength(254, { each: true, message: 'digest.recipients: an address is at most 254 characters' })
  recipients?: string[];

  @ApiPropertyOptional({ minimum: 0, maximum: 23, example: 8, description: 'Local hour (in `timezone`) the digest goes out at.' })
  @IsOptional()
  @IsInt({ message: 'digest.hour must be a whole number from 0 to 23' })
  @Min(0, { message: 'digest.hour must be a whole number from 0 to 23' })
  @Max(23, { message: 'digest.hour must be a whole number from 0 to 23' })
  hour?: number;

  @ApiPropertyOptional({ example: 'Europe/Paris', description: 'IANA time zone name.' })
  @IsOptional()
  @IsString({ message: 'digest.timezone must be an IANA time zone name such as Europe/Paris' })
  @MaxLength(64, { message: 'digest.timezone must be an IANA time zone name such as Europe/Paris' })
  timezone?: string;

  @ApiPropertyOptional({ description: 'Send a digest even on a day with nothing to report (default false).' })
  @IsOptional()
  @IsBoolean({ message: 'digest.sendWhenEmpty must be true or false' })
  sendWhenEmpty?: boolean;
}

export class AlertSettingsDto {
  @ApiPropertyOptional({ description: 'Send alerts at once to the digest recipients (default true), whether the digest is on or not.' })
  @IsOptional()
  @IsBoolean({ message: 'alerts.enabled must be true or false' })
  enabled?: boolean;
}

/** PUT /v1/settings/notifications. */
export class UpdateNotificationSettingsDto {
  @ApiPropertyOptional({ type: DigestSettingsDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => DigestSettingsDto)
  digest?: DigestSettingsDto;

  @ApiPropertyOptional({ type: AlertSettingsDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => AlertSettingsDto)
  alerts?: AlertSettingsDto;
}

// ---- answers ----

export class DigestSettingsView {
  @ApiProperty()
  enabled!: boolean;
  @ApiProperty({ type: [String], format: 'email' })
  recipients!: string[];
  @ApiProperty({ minimum: 0, maximum: 23 })
  hour!: number;
  @ApiProperty({ example: 'Europe/Paris' })
  timezone!: string;
  @ApiProperty()
  sendWhenEmpty!: boolean;
}

export class AlertSettingsView {
  @ApiProperty()
  enabled!: boolean;
}

export class RecipientStatusView {
  @ApiProperty({ format: 'email' })
  address!: string;
  @ApiProperty({
    enum: ['confirmed', 'pending', 'waiting'],
    description:
      'confirmed: gets digests and alerts. pending: a confirmation link was mailed and nothing goes to the address until it is used. waiting: no link is out (the daily limit of confirmation mails was reached, the link expired, or the address was re-added within a day of its last link): nothing goes to it.',
  })
  status!: 'confirmed' | 'pending' | 'waiting';
  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'When the last confirmation mail was written' })
  confirmationSentAt!: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'Until when the mailed link works (pending only)' })
  linkExpiresAt!: string | null;
}

export class HeldAlertsView {
  @ApiProperty({ format: 'uuid' })
  accountId!: string;
  @ApiProperty({ type: String, nullable: true })
  accountName!: string | null;
  @ApiProperty({ enum: ['account', 'workspace'], description: 'Which daily limit held them back' })
  reached!: 'account' | 'workspace';
  @ApiProperty({ description: 'Alerts not mailed in the last 24 hours' })
  count!: number;
  @ApiProperty({ format: 'date-time' })
  lastAt!: string;
}

export class AlertLimitsView {
  @ApiProperty({ description: 'Alerts mailed per account in any 24 hours' })
  perAccountPerDay!: number;
  @ApiProperty({ description: 'Alerts mailed per workspace in any 24 hours' })
  perWorkspacePerDay!: number;
  @ApiProperty({
    type: [HeldAlertsView],
    description: 'Alerts held back by a limit in the last 24 hours (the digest still lists the failures)',
  })
  heldLastDay!: HeldAlertsView[];
}

export class MailStateView {
  @ApiProperty({ enum: ['pending', 'sending', 'sent', 'failed'], description: 'sent: the mail server accepted it' })
  status!: 'pending' | 'sending' | 'sent' | 'failed';
  @ApiProperty()
  attempts!: number;
  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  sentAt!: string | null;
  @ApiProperty({ type: String, nullable: true })
  lastError!: string | null;
}

export class LastDigestView {
  @ApiProperty({ example: '2026-12-01', description: 'The local day it was for' })
  localDate!: string;
  @ApiProperty({ format: 'date-time' })
  windowStart!: string;
  @ApiProperty({ format: 'date-time' })
  windowEnd!: string;
  @ApiProperty({ enum: ['queued', 'empty'], description: 'empty: nothing to report, so nothing was sent (sendWhenEmpty off)' })
  outcome!: 'queued' | 'empty';
  @ApiProperty({ type: MailStateView, nullable: true })
  mail!: MailStateView | null;
}

export class NotificationSettingsView {
  @ApiProperty({ type: DigestSettingsView })
  digest!: DigestSettingsView;
  @ApiProperty({ type: AlertSettingsView })
  alerts!: AlertSettingsView;
  @ApiProperty({
    type: [RecipientStatusView],
    description: 'Where each recipient stands: only confirmed addresses get mail (each confirms through a mailed link)',
  })
  recipientStatus!: RecipientStatusView[];
  @ApiProperty({ type: AlertLimitsView })
  alertLimits!: AlertLimitsView;
  @ApiProperty({
    enum: ['smtp', 'outbox'],
    description: 'smtp: SMTP_URL is set; outbox: mails are written as .eml files under HERALD_DATA_DIR/outbox/',
  })
  delivery!: 'smtp' | 'outbox';
  @ApiProperty({ type: LastDigestView, nullable: true })
  lastDigest!: LastDigestView | null;
}

export class DigestWindowView {
  @ApiProperty({ format: 'date-time' })
  start!: string;
  @ApiProperty({ format: 'date-time' })
  end!: string;
}

export class DigestCountsView {
  @ApiProperty({ description: 'Jobs that died in the window and are still dead' })
  deadJobs!: number;
  @ApiProperty()
  failedAttempts!: number;
  @ApiProperty()
  published!: number;
  @ApiProperty()
  accountsNeedingAttention!: number;
  @ApiProperty()
  circuitsOpened!: number;
}

export class DigestPreviewView {
  @ApiProperty({ example: 'Herald: 3 posts failed in the last 24 hours' })
  subject!: string;
  @ApiProperty({ description: 'The HTML part' })
  html!: string;
  @ApiProperty({ description: 'The plain-text part' })
  text!: string;
  @ApiProperty({ description: 'Nothing to report in the window' })
  empty!: boolean;
  @ApiProperty({ description: 'A digest made now would be sent: the digest is on, and it has something to say or sendWhenEmpty is on' })
  wouldSend!: boolean;
  @ApiProperty({ type: [String], format: 'email' })
  recipients!: string[];
  @ApiProperty({ type: DigestWindowView })
  window!: DigestWindowView;
  @ApiProperty({ type: DigestCountsView })
  counts!: DigestCountsView;
}
