import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { MailModule } from '../mail/mail.module';
import { WorkspacesModule } from '../workspaces/workspaces.module';
import { FirstPersonService } from './first-person.service';
import { PasswordHasher } from './password-hasher';
import { PeopleController } from './people.controller';
import { PeopleRepository } from './people.repository';
import { PeopleService } from './people.service';
import { ResetRequests } from './reset-requests.service';

/** The people of a workspace (people, invitations, password_resets): who logs in to the page, with which role. */
@Module({
  imports: [AuditModule, MailModule, WorkspacesModule],
  controllers: [PeopleController],
  providers: [PeopleRepository, PasswordHasher, PeopleService, ResetRequests, FirstPersonService],
  exports: [PeopleService, ResetRequests, FirstPersonService],
})
export class PeopleModule {}
