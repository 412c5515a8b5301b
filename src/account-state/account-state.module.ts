import { Module } from '@nestjs/common';
import { AccountRowRepository } from './account-row.repository';
import { AccountStateRepository } from './account-state.repository';
import { AccountStateService } from './account-state.service';

/** The accounts table's one writer: an account's delivery state (status, circuit breaker) by its transition tables, and the rest of its row. */
@Module({
  providers: [AccountStateRepository, AccountRowRepository, AccountStateService],
  exports: [AccountStateService],
})
export class AccountStateModule {}
