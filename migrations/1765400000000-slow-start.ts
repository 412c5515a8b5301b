import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * When an account's circuit last closed after being open or half-open: the account's slow start
 * (worker/slow-start.ts, docs/delivery.md) ramps its in-flight cap from 1 to its cap over
 * WORKER_SLOW_START_MS from this moment. Written only by account-state.repository.ts (the one
 * writer of the circuit columns), in the statement that closes the circuit. NULL for accounts
 * whose circuit never closed after an outage since this column exists: they get their full cap.
 * No CHECK: it keeps its value while the circuit opens again (the next close replaces it), and a
 * value in the past is every value it can have. Adding a nullable column without a default
 * rewrites nothing.
 */
export class SlowStart1765400000000 implements MigrationInterface {
  name = 'SlowStart1765400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE accounts ADD COLUMN circuit_closed_at timestamptz`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE accounts DROP COLUMN circuit_closed_at`);
  }
}
