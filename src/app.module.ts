import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { LoggerModule } from 'nestjs-pino';
import { ApiGuardModule } from './api-guard/api-guard.module';
import { CoreModule } from './common/core.module';
import { AllExceptionsFilter } from './common/http-exception.filter';
import { loggerParams } from './common/logging';
import type { HeraldConfig } from './config/config';
import { DatabaseModule } from './database/database.module';
import { HealthModule } from './health/health.module';
import { MetricsModule } from './metrics/metrics.module';
import { WorkspacesModule } from './workspaces/workspaces.module';
import { ScheduleModule } from '@nestjs/schedule';
import { AccountsModule } from './accounts/accounts.module';
import { DeadLetterModule } from './dead-letter/dead-letter.module';
import { EventSubscriptionsModule } from './event-subscriptions/event-subscriptions.module';
import { JobsModule } from './jobs/jobs.module';
import { ApprovalsModule } from './approvals/approvals.module';
import { PostsModule } from './posts/posts.module';
import { WorkerModule } from './worker/worker.module';
import { NotificationsModule } from './notifications/notifications.module';
import { SettingsModule } from './settings/settings.module';
import { AuditModule } from './audit/audit.module';
import { PeopleModule } from './people/people.module';
import { PostingQueueModule } from './posting-queue/posting-queue.module';
import { ReviewModule } from './review/review.module';
import { McpModule } from './mcp/mcp.module';

@Module({})
export class AppModule {
  static forRoot(config: HeraldConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        CoreModule.forRoot(config),
        LoggerModule.forRoot(loggerParams(config)),
        DatabaseModule,
        MetricsModule,
        HealthModule,
        ScheduleModule.forRoot(),
        WorkspacesModule,
        AuditModule,
        PeopleModule,
        // The global API-key guard (it needs workspaces' keys and people's login throttle).
        ApiGuardModule,
        AccountsModule,
        PostsModule,
        ApprovalsModule,
        PostingQueueModule,
        JobsModule,
        DeadLetterModule,
        EventSubscriptionsModule,
        WorkerModule,
        NotificationsModule,
        ReviewModule,
        SettingsModule,
        McpModule,
      ],
      providers: [{ provide: APP_FILTER, useClass: AllExceptionsFilter }],
    };
  }
}
