import { DebianProgram, ensureDebianProgram } from '../../support/debian-package';

/**
 * The pooler of the fault suite's pooler scenario: Debian's `pgbouncer` package (1.18 on
 * bookworm). The suite's global setup makes sure it is there before any test runs, as `npm test`
 * does for Chromium (../../support/debian-package.ts: installed through apt-get when missing and
 * run as root, else the run stops at once with the one command to run first);
 * HERALD_TEST_INSTALL_PGBOUNCER=0 says not to install it.
 *
 * HERALD_TEST_PGBOUNCER points at another PgBouncer (or, pointed at a missing file, simulates a
 * machine without one).
 */
export const DEBIAN_PGBOUNCER = '/usr/sbin/pgbouncer';
export const ENV_PGBOUNCER = 'HERALD_TEST_PGBOUNCER';
export const ENV_INSTALL_PGBOUNCER = 'HERALD_TEST_INSTALL_PGBOUNCER';

const PGBOUNCER: DebianProgram = {
  pkg: 'pgbouncer',
  installs: DEBIAN_PGBOUNCER,
  neededBy: "the fault suite's pooler scenario, test/chaos/pooler.chaos.ts",
  noInstallEnv: ENV_INSTALL_PGBOUNCER,
  rerun: 'npm run test:chaos',
  orElse: `set ${ENV_PGBOUNCER} to a PgBouncer binary`,
};

/** The PgBouncer the pooler scenario starts (in a test worker: what the global setup settled on). */
export function pgbouncerPath(): string {
  return process.env[ENV_PGBOUNCER] || DEBIAN_PGBOUNCER;
}

/**
 * Called once per run by the fault suite's global setup: returns the PgBouncer to use, installing
 * Debian's when it can, or throws with the command to run first.
 */
export function ensurePgBouncer(say: (line: string) => void): string {
  return ensureDebianProgram(PGBOUNCER, pgbouncerPath(), say);
}
