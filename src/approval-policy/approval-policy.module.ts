import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { EventsModule } from '../events/events.module';
import { MailModule } from '../mail/mail.module';
import { PeopleModule } from '../people/people.module';
import { WorkspacesModule } from '../workspaces/workspaces.module';
import { ApprovalPolicyRepository } from './approval-policy.repository';
import { ApprovalPolicyService } from './approval-policy.service';

/**
 * A workspace's approval setting and the record of every approval step (approval_settings,
 * approval_steps), with the approval mails. Below posts: the posts module asks it "does this need
 * approval?" wherever a post would be scheduled, and records the steps through it in its own
 * transactions. The routes and the decisions' orchestration are src/approvals (above posts).
 */
@Module({
  imports: [AuditModule, EventsModule, MailModule, PeopleModule, WorkspacesModule],
  providers: [ApprovalPolicyRepository, ApprovalPolicyService],
  exports: [ApprovalPolicyService],
})
export class ApprovalPolicyModule {}
