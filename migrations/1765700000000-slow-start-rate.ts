import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The slow start's rate ramp (worker/slow-start.ts slowStartBudget, docs/delivery.md): how many
 * jobs of the account a worker leased since its circuit last closed, counted while the ramp runs.
 * A round leases no more than the ramp's budget for the time since `circuit_closed_at` minus
 * this count, under the account's row lock, so every process paces the account from one count.
 * Written only by account-state.repository.ts: set to 0 in the statement that closes the circuit
 * (with `circuit_closed_at`), increased by the rounds that lease during the ramp. After the ramp
 * it is no longer read and keeps its last value until the next close.
 *
 * CHECK: a count, never negative. NOT NULL DEFAULT 0: an account that never ramped has leased
 * nothing in a ramp; with a constant default, adding the column rewrites no row.
 */
export class SlowStartRate1765700000000 implements MigrationInterface {
  name = 'SlowStartRate1765700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE accounts ADD COLUMN slow_start_leased integer NOT NULL DEFAULT 0
         CONSTRAINT accounts_slow_start_leased_check CHECK (slow_start_leased >= 0)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE accounts DROP COLUMN slow_start_leased`);
  }
}
