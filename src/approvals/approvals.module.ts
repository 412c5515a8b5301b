import { Module } from '@nestjs/common';
import { ApprovalPolicyModule } from '../approval-policy/approval-policy.module';
import { PostsModule } from '../posts/posts.module';
import { ApprovalSettingsController, PostApprovalsController } from './approvals.controller';
import { ApprovalsService } from './approvals.service';

/**
 * Approvals: GET/PUT /v1/settings/approvals, POST /v1/posts/{id}/submit|approve|reject and
 * GET /v1/posts/{id}/approvals, and ApprovalsService for the page, client review links and MCP.
 */
@Module({
  imports: [ApprovalPolicyModule, PostsModule],
  controllers: [ApprovalSettingsController, PostApprovalsController],
  providers: [ApprovalsService],
  exports: [ApprovalsService],
})
export class ApprovalsModule {}
