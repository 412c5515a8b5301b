import { Module } from '@nestjs/common';
import { AccountStateRepository } from './account-state.repository';
import { AccountStateService } from './account-state.service';

/** An account's delivery state (status, circuit breaker): its transition tables and their only writer. */
@Module({
  providers: [AccountStateRepository, AccountStateService],
  exports: [AccountStateService],
})
export class AccountStateModule {}
