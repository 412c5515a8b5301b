import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { AccountsModule } from '../accounts/accounts.module';
import { DigestController } from '../digest/digest.controller';
import { DigestRepository } from '../digest/digest.repository';
import { DigestService } from '../digest/digest.service';
import { JobsModule } from '../jobs/jobs.module';
import { MailModule } from '../mail/mail.module';
import { WorkspacesModule } from '../workspaces/workspaces.module';
import { AccountEventsRepository } from './account-events.repository';
import { AlertsService } from './alerts.service';
import { NotificationSettingsController } from './notification-settings.controller';
import { NotificationSettingsRepository } from './notification-settings.repository';
import { NotificationSettingsService } from './notification-settings.service';
import { NotificationsScheduler } from './notifications.scheduler';

/**
 * Mail to people: notification settings, the daily digest (src/digest), alerts from the outbox
 * of account events, and the schedule that runs them. Mail itself goes through MailModule.
 */
@Module({
  imports: [AuditModule, MailModule, AccountsModule, JobsModule, WorkspacesModule],
  controllers: [NotificationSettingsController, DigestController],
  providers: [
    NotificationSettingsRepository,
    NotificationSettingsService,
    DigestRepository,
    DigestService,
    AccountEventsRepository,
    AlertsService,
    NotificationsScheduler,
  ],
  exports: [NotificationSettingsService, NotificationsScheduler],
})
export class NotificationsModule {}
