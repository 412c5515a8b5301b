import { Module } from '@nestjs/common';
import { AccountsModule } from '../accounts/accounts.module';
import { ApprovalsModule } from '../approvals/approvals.module';
import { DeadLetterModule } from '../dead-letter/dead-letter.module';
import { PostsModule } from '../posts/posts.module';
import { CalendarWeekService } from './calendar-week';
import { McpController } from './mcp.controller';
import { McpTools } from './mcp-tools';

/** The MCP server at /mcp (docs/mcp.md): tools over the same services the REST controllers call. */
@Module({
  imports: [AccountsModule, ApprovalsModule, PostsModule, DeadLetterModule],
  controllers: [McpController],
  providers: [McpTools, CalendarWeekService],
})
export class McpModule {}
