import { DatabaseUnavailableError, isConnectionError } from './db';

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
