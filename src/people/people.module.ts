import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { MailModule } from '../mail/mail.module';
import { WorkspacesModule } from '../workspaces/workspaces.module';
import { FirstPersonService } from './first-person.service';
import { LoginThrottleRepository } from './login-throttle.repository';
import { LoginThrottleService } from './login-throttle.service';
import { PasswordHasher } from './password-hasher';
import { PeopleController } from './people.controller';
import { PeopleRepository } from './people.repository';
import { PeopleService } from './people.service';
import { ResetRequests } from './reset-requests.service';
import { SessionsRepository } from './sessions.repository';
import { SessionsService } from './sessions.service';

/**
 * The people of a workspace (people, invitations, password_resets): who logs in to the page, with
 * which role; the page's sessions (page_sessions) and the slow-down of wrong keys and passwords
 * (login_throttle), which the API-key guard (src/gate) counts into too.
 */
@Module({
  imports: [AuditModule, MailModule, WorkspacesModule],
  controllers: [PeopleController],
  providers: [
    PeopleRepository,
    PasswordHasher,
    PeopleService,
    ResetRequests,
    FirstPersonService,
    LoginThrottleRepository,
    LoginThrottleService,
    SessionsRepository,
    SessionsService,
  ],
  exports: [PeopleService, ResetRequests, FirstPersonService, LoginThrottleService, SessionsService],
})
export class PeopleModule {}
