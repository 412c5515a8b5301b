import { setUp } from '../../support/global-setup';
import { ensurePgBouncer, ENV_PGBOUNCER } from './pgbouncer';

/**
 * The main suite's global setup (a PostgreSQL server, the template database, dist/), without the
 * browser (no fault test drives one), and with PgBouncer for the pooler scenario: first, before a
 * database or a build, installed through apt-get when missing and run as root, else the run stops
 * at once with the one command to run (./pgbouncer.ts).
 */
export default async function globalSetup(): Promise<void> {
  process.env[ENV_PGBOUNCER] = ensurePgBouncer((line) => process.stderr.write(`\n${line}\n`));
  await setUp({ browser: false });
}
