import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { AccountsModule } from '../accounts/accounts.module';
import { DigestModule } from '../digest/digest.module';
import { JobsModule } from '../jobs/jobs.module';
import { MailModule } from '../mail/mail.module';
import { WorkspacesModule } from '../workspaces/workspaces.module';
import { AccountEventsRepository } from './account-events.repository';
import { AlertsService } from './alerts.service';
import { DigestPreviewController } from './digest-preview.controller';
import { NotificationSettingsController } from './notification-settings.controller';
import { NotificationSettingsRepository } from './notification-settings.repository';
import { NotificationSettingsService } from './notification-settings.service';
import { NotificationsScheduler } from './notifications.scheduler';
import { NotificationRecipientsRepository } from './notification-recipients.repository';
import { RecipientsService } from './recipients.service';

/**
 * Mail to people: notification settings, the schedule of the daily digest (src/digest, its own module), alerts from the outbox
 * of account events, and the schedule that runs them. Mail itself goes through MailModule.
 */
@Module({
  imports: [AuditModule, MailModule, AccountsModule, JobsModule, WorkspacesModule, DigestModule],
  controllers: [NotificationSettingsController, DigestPreviewController],
  providers: [
    NotificationSettingsRepository,
    NotificationSettingsService,
    AccountEventsRepository,
    AlertsService,
    NotificationsScheduler,
    NotificationRecipientsRepository,
    RecipientsService,
  ],
  exports: [NotificationSettingsService, NotificationsScheduler, RecipientsService],
})
export class NotificationsModule {}
