import { Module } from '@nestjs/common';
import { AccountsModule } from '../accounts/accounts.module';
import { JobsModule } from '../jobs/jobs.module';
import { MailModule } from '../mail/mail.module';
import { WorkspacesModule } from '../workspaces/workspaces.module';
import { DigestRepository } from './digest.repository';
import { DigestService } from './digest.service';

/**
 * The daily digest: which local day is due, the exactly-once claim, what it reports. Its settings
 * and its schedule are the notifications module's, which calls DigestService.
 */
@Module({
  imports: [AccountsModule, JobsModule, MailModule, WorkspacesModule],
  providers: [DigestRepository, DigestService],
  exports: [DigestService],
})
export class DigestModule {}
