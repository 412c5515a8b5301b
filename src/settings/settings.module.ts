import { Inject, MiddlewareConsumer, Module, NestModule, OnModuleInit, RequestMethod } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import cookieParser from 'cookie-parser';
import type { Express } from 'express';
import helmet from 'helmet';
import { AccountsModule } from '../accounts/accounts.module';
import { HERALD_CONFIG, HeraldConfig } from '../config/config';
import { DeadLetterModule } from '../dead-letter/dead-letter.module';
import { JobsModule } from '../jobs/jobs.module';
import { NotificationsModule } from '../notifications/notifications.module';
import { AuditModule } from '../audit/audit.module';
import { MediaModule } from '../media/media.module';
import { PeopleModule } from '../people/people.module';
import { PostingQueueModule } from '../posting-queue/posting-queue.module';
import { PostsModule } from '../posts/posts.module';
import { WorkspacesModule } from '../workspaces/workspaces.module';
import { AccountsPageController } from './accounts-page.controller';
import { AccountsPageService } from './accounts-page.service';
import { BlueskyConnectController } from './connect/bluesky-connect.controller';
import { ConnectPages } from './connect/connect-pages';
import { LinkedInConnectController } from './connect/linkedin-connect.controller';
import { MastodonConnectController } from './connect/mastodon-connect.controller';
import { FailedPostsController } from './failed-posts.controller';
import { CalendarController } from './compose/calendar.controller';
import { ComposeController } from './compose/compose.controller';
import { ComposeUploadsMiddleware } from './compose/compose-uploads';
import { ImportPageController } from './import/import-page.controller';
import { ImportUploadsMiddleware } from './import/import-uploads';
import { LoginController } from './login.controller';
import { PageExceptionFilter } from './page-exception.filter';
import { PageRenderer } from './page-renderer';
import { NotificationsPageController } from './notifications-page.controller';
import { PostsPageController } from './posts-page.controller';
import { ApprovalsPageController } from './approvals-page.controller';
import { ApprovalsModule } from '../approvals/approvals.module';
import { QueuePageController } from './queue-page.controller';
import { ActivityPageController } from './activity-page.controller';
import { EventsPageController } from './events-page.controller';
import { EventSubscriptionsModule } from '../event-subscriptions/event-subscriptions.module';
import { PeopleLinksController } from './people-links.controller';
import { RecipientConfirmController } from './recipient-confirm.controller';
import { ProfilePageController } from './profile-page.controller';
import { TeamPageController } from './team-page.controller';
import { ReviewModule } from '../review/review.module';
import { PostReviewController } from './review/post-review.controller';
import { ReviewExceptionFilter } from './review/review-exception.filter';
import { ReviewPageController } from './review/review-page.controller';
import { ReviewRateLimit } from './review/review-rate-limit';
import { isHttps } from './session/page-request';
import { PageSessionGuard } from './session/page-session.guard';
import { registerHelpers } from './settings-views';

/** hbs has no type declarations; what we use of it is described here. */
type Hbs = { create(): Parameters<typeof registerHelpers>[0] & { __express: (...args: unknown[]) => void } };

const PAGE_CONTROLLERS = [
  LoginController,
  AccountsPageController,
  FailedPostsController,
  PostsPageController,
  ApprovalsPageController,
  ComposeController,
  ImportPageController,
  CalendarController,
  QueuePageController,
  NotificationsPageController,
  LinkedInConnectController,
  BlueskyConnectController,
  MastodonConnectController,
  PeopleLinksController,
  RecipientConfirmController,
  TeamPageController,
  ProfilePageController,
  ActivityPageController,
  PostReviewController,
  // The client review page (/review/:token): outside /settings, no session, the same headers.
  ReviewPageController,
  EventsPageController,
];

/**
 * The settings page at /settings: server-rendered HTML (Handlebars views, NestJS MVC) with one
 * small script for progressive touches; every core action is a plain form. It keeps the session
 * cookie, the CSRF checks and the page's guard (the sessions themselves are src/people's), and
 * calls the other modules' services for everything else (the connect flows are
 * src/accounts/connect/'s, the platforms' sides of them src/connectors/'s).
 */
@Module({
  imports: [
    WorkspacesModule,
    AuditModule,
    PeopleModule,
    AccountsModule,
    JobsModule,
    PostsModule,
    ApprovalsModule,
    PostingQueueModule,
    MediaModule,
    DeadLetterModule,
    EventSubscriptionsModule,
    NotificationsModule,
    ReviewModule,
  ],
  controllers: PAGE_CONTROLLERS,
  providers: [
    PageSessionGuard,
    PageRenderer,
    PageExceptionFilter,
    AccountsPageService,
    ConnectPages,
    ReviewExceptionFilter,
    ReviewRateLimit,
  ],
})
export class SettingsModule implements NestModule, OnModuleInit {
  constructor(
    @Inject(HERALD_CONFIG) private readonly config: HeraldConfig,
    private readonly adapterHost: HttpAdapterHost,
    private readonly pages: PageRenderer,
  ) {}

  onModuleInit(): void {
    const app = this.adapterHost.httpAdapter.getInstance<Express>();
    // Handlebars is loaded at the first page rendered, not at startup: a process that serves the
    // API or runs the worker never renders one (docs/benchmarks.md, "Peak RSS").
    let render: ((...args: unknown[]) => void) | null = null;
    app.engine('hbs', (...args: unknown[]) => {
      if (render === null) {
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        const engine = (require('hbs') as Hbs).create();
        registerHelpers(engine, this.pages.dir);
        render = engine.__express;
      }
      render(...args);
    });
    app.set('view engine', 'hbs');
    app.set('views', `${this.pages.dir}/views`);
    // Templates are read once, not on every render (Express caches views only when NODE_ENV is production).
    app.set('view cache', true);
  }

  configure(consumer: MiddlewareConsumer): void {
    const https = isHttps(this.config);
    const linkedin = new URL(this.config.linkedin.oauthBaseUrl).origin;
    consumer
      .apply(
        cookieParser(),
        helmet({
          contentSecurityPolicy: {
            useDefaults: false,
            directives: {
              defaultSrc: ["'none'"],
              // One script file of ours; no inline script, no eval, nothing from elsewhere.
              scriptSrc: ["'self'"],
              styleSrc: ["'self'"],
              imgSrc: ["'self'", 'data:'],
              connectSrc: ["'self'"],
              // The LinkedIn connect form redirects to LinkedIn's authorization page, and a
              // form's redirects are held to form-action too.
              formAction: ["'self'", linkedin],
              frameAncestors: ["'none'"],
              baseUri: ["'none'"],
              ...(https ? { upgradeInsecureRequests: [] } : {}),
            },
          },
          strictTransportSecurity: https ? { maxAge: 31_536_000 } : false,
          // The LinkedIn callback's URL carries a one-use code: no page sends its URL anywhere.
          referrerPolicy: { policy: 'no-referrer' },
          xFrameOptions: { action: 'deny' },
        }),
      )
      .forRoutes(...PAGE_CONTROLLERS);
    // The composer's form is multipart (it carries an image): read before the session guard, which
    // needs its CSRF field, and after the cookies. Other forms stay urlencoded (the app's own parser).
    consumer
      .apply(ComposeUploadsMiddleware)
      .forRoutes({ path: 'settings/compose', method: RequestMethod.POST }, { path: 'settings/posts/:id/edit', method: RequestMethod.POST });
    // The CSV import's forms: the file, then the file again (base64) with "Create N posts".
    consumer
      .apply(ImportUploadsMiddleware)
      .forRoutes({ path: 'settings/import', method: RequestMethod.POST }, { path: 'settings/import/confirm', method: RequestMethod.POST });
  }
}
