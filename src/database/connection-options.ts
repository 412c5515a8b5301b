import type { ClientConfig } from 'pg';

/** How long to wait for a free pooled connection (or a new one) before answering 503 instead of hanging. */
export const CONNECT_TIMEOUT_MS = 5_000;
/**
 * At start (migrations, creating the embedded server's database) nothing answers yet, so there is
 * no request to fail fast for: wait longer for a server that is starting or a host under load,
 * rather than exiting (seen: boots failing at 5 s on a machine at load average 30).
 */
export const START_CONNECT_TIMEOUT_MS = 30_000;

/**
 * Who opens a connection; it names the session in pg_stat_activity (`application_name`), so an
 * operator can tell Herald's pool from its LISTEN session and its start-up work.
 * - pool: the statements of the API and the worker (Db);
 * - listener: the worker's LISTEN session, one per process (a session of its own: behind a
 *   transaction pooler it must reach PostgreSQL itself, DATABASE_DIRECT_URL);
 * - notifier: the notifier's LISTEN session (herald_notifications), one per process that runs it;
 * - migrations: the schema update at start, under an advisory lock;
 * - bootstrap: creating the embedded server's database before anything else.
 */
export type ConnectionRole = 'pool' | 'listener' | 'notifier' | 'migrations' | 'bootstrap';

const APPLICATION_NAME: Record<ConnectionRole, string> = {
  pool: 'herald',
  listener: 'herald-listener',
  notifier: 'herald-notifier',
  migrations: 'herald-migrations',
  bootstrap: 'herald-bootstrap',
};

/**
 * The options of every PostgreSQL connection Herald opens, in one place:
 * - a connect timeout, so nothing hangs on a database that is away (a 503 or a retried round
 *   instead; longer for the work at start, START_CONNECT_TIMEOUT_MS);
 * - TCP keepalive, so a peer that vanished without closing (a host cut off, a NAT that dropped
 *   the flow) is noticed instead of waiting on it forever.
 * Callers add only what is theirs: the pool its size and pipelining.
 */
export function connectionOptions(url: string, role: ConnectionRole): ClientConfig {
  return {
    connectionString: url,
    application_name: APPLICATION_NAME[role],
    connectionTimeoutMillis: role === 'migrations' || role === 'bootstrap' ? START_CONNECT_TIMEOUT_MS : CONNECT_TIMEOUT_MS,
    keepAlive: true,
  };
}
