import * as net from 'node:net';
import { Db, DatabaseUnavailableError, isConnectionError } from './db';

/** Which failures mean "the database is out of reach" (a 503, retried) rather than a bad statement (a bug, a 500). */
describe('isConnectionError', () => {
  const pgError = (code: string, message = 'x') => Object.assign(new Error(message), { code });

  it.each([
    [
      'a refused connection (server down or restarting)',
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
    ],
    ['a reset socket', Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })],
    ['pg_terminate_backend / fast shutdown (57P01)', pgError('57P01', 'terminating connection due to administrator command')],
    ['a crashed server (57P02)', pgError('57P02')],
    ['a server starting up (57P03)', pgError('57P03', 'the database system is starting up')],
    ['too many connections (53300)', pgError('53300')],
    ['a session ended for idling in a transaction (25P03)', pgError('25P03', 'terminating connection due to idle-in-transaction timeout')],
    ['any connection exception (class 08)', pgError('08006')],
    ['a connection that died under a query', new Error('Connection terminated unexpectedly')],
    ['a client that broke earlier', new Error('Client has encountered a connection error and is not queryable')],
    ['no pooled connection in time', new Error('timeout exceeded when trying to connect')],
    ['every address refused (happy eyeballs)', new AggregateError([Object.assign(new Error('refused'), { code: 'ECONNREFUSED' })])],
    ['an error already classified', new DatabaseUnavailableError(new Error('x'))],
  ])('counts %s', (_what, err) => {
    expect(isConnectionError(err)).toBe(true);
  });

  it.each([
    ['a unique violation', pgError('23505', 'duplicate key value violates unique constraint')],
    ['a syntax error', pgError('42601', 'syntax error at or near "SELEC"')],
    ['a check violation', pgError('23514')],
    ['a serialization failure', pgError('40001')],
    ['a plain bug', new TypeError('cannot read properties of undefined')],
    ['not an error at all', 'oops'],
    ['null', null],
  ])('does not count %s', (_what, err) => {
    expect(isConnectionError(err)).toBe(false);
  });
});

/** A message of the PostgreSQL wire protocol, as a server sends it (type byte, length, body). */
function message(type: string, body: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.write(type, 0, 'latin1');
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}
const int32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};

/**
 * A server that accepts the connection and, in the same write as "ready for query", ends the
 * session the way pg_terminate_backend does (FATAL 57P01). Found by the fault suite: Herald's
 * process ended on an 'error' event nobody listened to.
 */
describe('a connection killed the moment it is made', () => {
  const fields = (f: Record<string, string>) =>
    Buffer.concat([...Object.entries(f).map(([k, v]) => Buffer.from(`${k}${v}\0`, 'utf8')), Buffer.from([0])]);

  it('answers DatabaseUnavailableError and keeps the process alive', async () => {
    const server = net.createServer((socket) => {
      socket.once('data', () => {
        socket.write(
          Buffer.concat([
            message('R', int32(0)),
            message('K', Buffer.concat([int32(1), int32(2)])),
            message('Z', Buffer.from('I')),
            message('E', fields({ S: 'FATAL', V: 'FATAL', C: '57P01', M: 'terminating connection due to administrator command' })),
          ]),
        );
        socket.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    const db = new Db({
      databaseUrl: `postgres://herald@127.0.0.1:${port}/herald`,
      databasePoolSize: 2,
      databasePreparedStatements: true,
      databaseIdleInTransactionTimeoutMs: 0,
    });
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown) => uncaught.push(err);
    const listeners = process.listeners('uncaughtException');
    process.removeAllListeners('uncaughtException');
    process.on('uncaughtException', onUncaught);
    try {
      for (let i = 0; i < 5; i++) await expect(db.query('SELECT 1')).rejects.toBeInstanceOf(DatabaseUnavailableError);
      await new Promise((r) => setTimeout(r, 50));
    } finally {
      process.removeListener('uncaughtException', onUncaught);
      for (const l of listeners) process.on('uncaughtException', l);
      await db.onApplicationShutdown();
      await new Promise((r) => server.close(r));
    }
    expect(uncaught).toEqual([]);
  });
});

/**
 * A server that answers every statement with no rows and, like a busy PostgreSQL, takes a while
 * to hang up after Terminate. pg-pool's end() resolves before that: shutdown returned with the
 * pooled sockets still open, left to whatever came next (a jest worker told to exit).
 */
describe('shutdown', () => {
  it('resolves once the server has closed every pooled connection', async () => {
    const sessions = new Set<net.Socket>();
    const server = net.createServer((socket) => {
      sessions.add(socket);
      socket.on('close', () => sessions.delete(socket));
      let pending = Buffer.alloc(0);
      let started = false;
      socket.on('data', (data: Buffer) => {
        pending = Buffer.concat([pending, data]);
        for (;;) {
          if (!started) {
            // The startup message: a length, no type byte.
            if (pending.length < 4 || pending.length < pending.readInt32BE(0)) return;
            pending = pending.subarray(pending.readInt32BE(0));
            started = true;
            socket.write(Buffer.concat([message('R', int32(0)), message('Z', Buffer.from('I'))]));
            continue;
          }
          if (pending.length < 5 || pending.length < pending.readInt32BE(1) + 1) return;
          const type = String.fromCharCode(pending[0]);
          pending = pending.subarray(pending.readInt32BE(1) + 1);
          const done = message('C', Buffer.from('SELECT 0\0'));
          const ready = message('Z', Buffer.from('I'));
          const answers: Record<string, Buffer> = {
            Q: Buffer.concat([done, ready]),
            P: message('1', Buffer.alloc(0)),
            B: message('2', Buffer.alloc(0)),
            D: message('n', Buffer.alloc(0)),
            E: done,
            S: ready,
          };
          if (answers[type]) socket.write(answers[type]);
          if (type === 'X') setTimeout(() => socket.end(), 200);
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    const db = new Db({
      databaseUrl: `postgres://herald@127.0.0.1:${port}/herald`,
      databasePoolSize: 3,
      databasePreparedStatements: true,
      databaseIdleInTransactionTimeoutMs: 0,
    });
    try {
      await Promise.all([db.query('SELECT 1'), db.prepared('one', 'SELECT $1', [1]), db.transaction((tx) => tx.query('SELECT 1'))]);
      expect(sessions.size).toBe(3);
      await db.onApplicationShutdown();
      expect(sessions.size).toBe(0);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
