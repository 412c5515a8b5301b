import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { Pool, PoolClient } from 'pg';
import { DomainError, ErrorCode } from '../common/errors';
import { HERALD_CONFIG, HeraldConfig } from '../config/config';
import { connectionOptions } from './connection-options';

/**
 * Something that runs SQL and answers rows: the pool (each statement on a connection of its
 * own, autocommit) or one transaction's connection. Every repository takes one of these, so a
 * service can run several repositories' statements in one transaction without knowing SQL.
 */
export interface Sql {
  /** Rows of one statement (of `… RETURNING` too, whatever the command). */
  query<T = Record<string, unknown>>(text: string, values?: readonly unknown[]): Promise<T[]>;
  /**
   * A named prepared statement: parsed and planned once per connection instead of on every
   * call. For the statements every request or every worker round runs. `name` must be unique
   * per text across Herald (PostgreSQL refuses a name reused for another text).
   */
  prepared<T = Record<string, unknown>>(name: string, text: string, values?: readonly unknown[]): Promise<T[]>;
}

/** A transaction's connection: statements run in order, and commit or roll back together. */
export interface Tx extends Sql {
  /**
   * Sends COMMIT now, behind whatever was sent before it (pipeline mode: it travels in the same
   * network write as the last statements). Optional: `transaction()` commits when `work` returns.
   */
  commit(): Promise<void>;
}

/** PostgreSQL could not be reached or dropped our connection: the request may be retried. */
export class DatabaseUnavailableError extends DomainError {
  constructor(cause: unknown) {
    super(ErrorCode.Unavailable, 'the database is unavailable at the moment; try again shortly');
    this.name = 'DatabaseUnavailableError';
    this.cause = cause;
  }
}

/** Node socket errors meaning "no connection", not "the statement was wrong". */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNABORTED',
]);
/**
 * SQLSTATEs of a server going away or refusing sessions: class 08 (connection exception),
 * 57P01 admin_shutdown (pg_terminate_backend, `pg_ctl stop -m fast`), 57P02 crash_shutdown,
 * 57P03 cannot_connect_now (starting up or shutting down), 53300 too_many_connections, 25P03
 * idle_in_transaction_session_timeout (the server ended a session that sat in a transaction too
 * long, e.g. a process that was frozen: the connection is gone, the transaction rolled back).
 */
const SERVER_GONE = /^(08...|57P01|57P02|57P03|53300|25P03)$/;
/** node-postgres' own wording for a connection that died under it or never came. */
const DRIVER_GONE = /Connection terminated|not queryable|timeout exceeded when trying to connect|Query read timeout|Client was closed/i;

/** True when `err` says the database is out of reach (as opposed to a bad statement or a constraint). */
export function isConnectionError(err: unknown): boolean {
  if (err instanceof DatabaseUnavailableError) return true;
  if (typeof err !== 'object' || err === null) return false;
  const { code, message } = err as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (SOCKET_CODES.has(code) || SERVER_GONE.test(code))) return true;
  if (err instanceof AggregateError) return err.errors.some(isConnectionError); // happy eyeballs: every address refused
  return typeof message === 'string' && DRIVER_GONE.test(message);
}

/** Connection-level errors become DatabaseUnavailableError (503); anything else is passed on as is. */
function unavailableOr(err: unknown): unknown {
  return isConnectionError(err) && !(err instanceof DatabaseUnavailableError) ? new DatabaseUnavailableError(err) : err;
}

/** An error for the log: its code and message only (a connection string never appears in either). */
function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' ? `${code} ${err.message}` : err.message;
}

class ClientSql implements Tx {
  private committed: Promise<void> | null = null;

  constructor(
    private readonly client: PoolClient,
    private readonly named: boolean,
  ) {}

  async query<T>(text: string, values?: readonly unknown[]): Promise<T[]> {
    try {
      const { rows } = await this.client.query<T & object>(text, values as unknown[] | undefined);
      return rows;
    } catch (err) {
      throw unavailableOr(err);
    }
  }

  async prepared<T>(name: string, text: string, values: readonly unknown[] = []): Promise<T[]> {
    try {
      // Behind a pooler in transaction mode the next statement may land on another server
      // connection, where the name does not exist: the statement is then sent unnamed.
      const { rows } = await this.client.query<T & object>(
        this.named ? { name, text, values: values as unknown[] } : { text, values: values as unknown[] },
      );
      return rows;
    } catch (err) {
      throw unavailableOr(err);
    }
  }

  commit(): Promise<void> {
    this.committed ??= this.client.query('COMMIT').then(
      () => undefined,
      (err: unknown) => {
        throw unavailableOr(err);
      },
    );
    return this.committed;
  }

  get isCommitted(): boolean {
    return this.committed !== null;
  }
}

/**
 * How long shutdown waits for PostgreSQL to close the pool's sessions after Terminate: it takes
 * milliseconds, more on a loaded host; a server that is cut off never answers.
 */
const CLOSE_WAIT_MS = 5_000;

/**
 * Herald's one way to its database: one `pg` pool per process, used by every repository, the
 * API and the worker alike (the LISTEN connection is the one exception: a pooled connection
 * cannot listen, see QueueListener). TypeORM remains the migration runner (data-source.ts).
 *
 * - Pipeline mode: a statement is written to the socket without waiting for the answer to the
 *   previous one, so statements issued together (a worker round, BEGIN + first statement)
 *   cost one network round trip. Answers still come back in order; an error inside a
 *   transaction fails the statements behind it, exactly as without pipelining.
 * - A database that restarts or kills our sessions must not kill Herald: the pool listens for
 *   errors of idle connections (without a listener Node ends the process on the 'error'
 *   event), a checked-out connection has a listener for as long as it is out and is thrown
 *   away when it broke, and callers receive DatabaseUnavailableError (a 503 for the API; the
 *   worker retries its round). New connections are made on demand, so service resumes as
 *   soon as PostgreSQL accepts them again.
 * - A request never hangs on a missing database: getting a connection gives up after
 *   CONNECT_TIMEOUT_MS (connection-options.ts), and TCP keepalive notices a peer that vanished without closing.
 */
@Injectable()
export class Db implements Sql, OnApplicationShutdown {
  private readonly logger = new Logger('Database');
  private readonly pool: Pool;
  private readonly named: boolean;
  private readonly begin: string;
  /** Connections opened and not yet closed: the pool's 'connect' adds one, its 'remove' (socket closed) drops it. */
  private readonly open = new Set<PoolClient>();
  private lastWarning = 0;

  constructor(
    @Inject(HERALD_CONFIG)
    config: Pick<HeraldConfig, 'databaseUrl' | 'databasePoolSize' | 'databasePreparedStatements' | 'databaseIdleInTransactionTimeoutMs'>,
  ) {
    this.named = config.databasePreparedStatements;
    // SET LOCAL, not SET: it ends with the transaction, so it holds behind a transaction pooler
    // and leaves nothing on a connection another client may get next. A whole number of ms,
    // validated by the configuration, so it is written into the statement as is.
    const timeout = Math.floor(config.databaseIdleInTransactionTimeoutMs);
    this.begin = timeout > 0 ? `BEGIN; SET LOCAL idle_in_transaction_session_timeout = ${timeout}` : 'BEGIN';
    this.pool = new Pool({ ...connectionOptions(config.databaseUrl, 'pool'), max: config.databasePoolSize, pipeline: true });
    // An idle connection died (server restart, pg_terminate_backend): the pool already
    // dropped it; the next statement opens a new one.
    this.pool.on('error', (err) => this.warn(`an idle database connection was closed: ${describe(err)}`));
    // Every connection also keeps a listener for its whole life. A new connection is handed out
    // from inside the socket read that completed its handshake; if the same read carries the
    // server's FATAL (pg_terminate_backend right after the connect), the client emits 'error'
    // after the pool removed its listener and before the caller added one: without this, the
    // process would end. The caller's statement then fails as "not queryable" (a 503).
    this.pool.on('connect', (client) => {
      this.open.add(client);
      client.on('error', () => undefined);
    });
    this.pool.on('remove', (client) => this.open.delete(client));
  }

  /**
   * Ends the pool and resolves once its connections are closed. pg-pool's end() resolves as soon
   * as the last connection has left the pool, when each has only sent Terminate and still waits
   * for the server to hang up: app.close() returned with all the pooled sockets open (they closed
   * some 20 ms later on a quiet machine, later on a loaded one), and a jest worker told to exit
   * right after its last test file is force-exited if anything is still open 500 ms later. A
   * server that never hangs up (cut off) gets CLOSE_WAIT_MS.
   */
  async onApplicationShutdown(): Promise<void> {
    await this.pool.end();
    if (this.open.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    let onRemove = (): void => undefined;
    await new Promise<void>((resolve) => {
      onRemove = () => {
        if (this.open.size === 0) resolve();
      };
      this.pool.on('remove', onRemove);
      timer = setTimeout(resolve, CLOSE_WAIT_MS);
    });
    clearTimeout(timer);
    this.pool.off('remove', onRemove);
    if (this.open.size > 0)
      this.logger.warn(`${this.open.size} database connections were still open ${CLOSE_WAIT_MS} ms after shutdown began`);
  }

  async query<T>(text: string, values?: readonly unknown[]): Promise<T[]> {
    return this.withClient((sql) => sql.query<T>(text, values));
  }

  async prepared<T>(name: string, text: string, values: readonly unknown[] = []): Promise<T[]> {
    return this.withClient((sql) => sql.prepared<T>(name, text, values));
  }

  /**
   * Runs `work` in one transaction on one connection: BEGIN, work, COMMIT; ROLLBACK when `work`
   * throws (the error is passed on). BEGIN goes out with `work`'s first statement (pipeline).
   * The transaction carries idle_in_transaction_session_timeout: if this process stops between
   * two statements (frozen, suspended), the server ends the session and its row locks go with it.
   * Never hold a transaction across an HTTP call or a timer: rows stay locked until it ends.
   */
  async transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.withClient(async (tx, client) => {
      const begin = client.query(this.begin);
      begin.catch(() => undefined); // observed below; the statements behind it fail with it
      try {
        const value = await work(tx);
        await begin;
        await tx.commit();
        return value;
      } catch (err) {
        if (!tx.isCommitted) await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      }
    });
  }

  /**
   * A pooled connection for `work`, with an 'error' listener for as long as we hold it (the
   * pool listens only while a connection is idle; an error event without a listener would end
   * the process). A connection that broke is destroyed on release, never handed out again.
   */
  private async withClient<T>(work: (sql: ClientSql, client: PoolClient) => Promise<T>): Promise<T> {
    let client: PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      // Whatever the reason (refused, starting up, not accepting connections, too many, bad
      // password), no connection means the database is unavailable to this request.
      this.warn(`cannot connect to the database: ${describe(err)}`);
      throw new DatabaseUnavailableError(err);
    }
    let broken: Error | null = null;
    const onError = (err: Error) => {
      broken = err;
    };
    client.on('error', onError);
    try {
      return await work(new ClientSql(client, this.named), client);
    } catch (err) {
      if (isConnectionError(err)) {
        broken ??= err instanceof Error ? err : new Error(String(err));
        this.warn(`lost a database connection: ${describe(err)}`);
      }
      throw unavailableOr(err);
    } finally {
      client.removeListener('error', onError);
      client.release(broken ?? undefined);
    }
  }

  /** Once per burst: an outage fails every request, one line says it. */
  private warn(message: string): void {
    const now = Date.now();
    if (now - this.lastWarning > 5_000) this.logger.warn(message);
    this.lastWarning = now;
  }
}
