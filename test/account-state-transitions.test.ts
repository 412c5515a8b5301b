import { randomUUID } from 'node:crypto';
import {
  ACCOUNT_STATUSES,
  AccountFeedback,
  AccountStatus,
  CIRCUIT_OPERATIONS,
  CIRCUIT_STATES,
  CIRCUIT_TRANSITIONS,
  CircuitOperation,
  circuitTargets,
  STATUS_OPERATIONS,
  STATUS_TRANSITIONS,
  StatusOperation,
  statusTargets,
} from '../src/account-state/account-state';
import { AccountRowRepository } from '../src/account-state/account-row.repository';
import { AccountStateRepository } from '../src/account-state/account-state.repository';
import { AccountStateService } from '../src/account-state/account-state.service';
import { Db } from '../src/database/db';
import type { CircuitStateName } from '../src/retry/circuit-breaker';
import { createTestDatabase } from './support/database';

/**
 * An account's delivery state as behaviour, as test/job-transitions.test.ts does for jobs: for
 * every operation of the two tables in src/account-state/account-state.ts (status, circuit) and
 * every value the column can hold, an account with that value is written to PostgreSQL, the
 * operation runs through AccountStateService (the only writer of these columns), and the row is
 * read back: the value the table names where it lets the operation leave that value, else the
 * row byte for byte as it was (to_jsonb of the whole row).
 *
 * Where the statement takes its target from its caller (the worker's feedback: the pure
 * account-feedback.ts decides the circuit and maybe a status), every target is tried from every
 * value, so a pair the table does not list is seen refused. Expected values come from the
 * tables; a test checks that every move of both tables is run by some case.
 *
 * One database, one account per case, set up in one statement, read in one before and after.
 */

const LATER = () => new Date(Date.now() + 3_600_000);
/** Every row starts with this updated_at and last_error: a write of the operation changes one or the other. */
const BEFORE = '2001-01-01T00:00:00Z';

type Column = 'status' | 'circuit';

interface Ctx {
  db: Db;
  state: AccountStateService;
  workspaceId: string;
  /** Errors by account: a statement that threw fails the cases it ran for (all of a batch, or the one account). */
  failed: Map<string, unknown>;
}

/** A statement per account, each one's error kept for its own case. */
const eachAccount = (work: (ctx: Ctx, id: string) => Promise<unknown>) => (ctx: Ctx, ids: string[]) =>
  Promise.all(ids.map((id) => work(ctx, id).catch((err: unknown) => ctx.failed.set(id, err))));

interface Variant {
  column: Column;
  op: StatusOperation | CircuitOperation;
  name: string;
  to: AccountStatus | CircuitStateName;
  /** The other column, held at a value that lets this run happen (default: active, closed). */
  other?: AccountStatus | CircuitStateName;
  run(ctx: Ctx, ids: string[]): Promise<unknown>;
}

/** The worker's feedback for these accounts: the circuit (and maybe status) the pure feedback decided. */
function feedback(circuit: CircuitStateName, status: AccountFeedback['status']) {
  return ({ db, state }: Ctx, ids: string[]) =>
    state.applyFeedback(
      db,
      new Map(
        ids.map((id): [string, AccountFeedback] => [
          id,
          {
            circuit: { state: circuit, openUntil: circuit === 'closed' ? null : LATER(), consecutiveFailures: 3 },
            opened: circuit === 'open',
            closed: circuit === 'closed',
            lastError: 'written by the case',
            succeeded: false,
            status,
          },
        ]),
      ),
    );
}

const VARIANTS: Variant[] = [
  {
    column: 'status',
    op: 'refuse',
    name: 'credentials refused',
    to: 'needs_reauth',
    run: feedback('closed', { value: 'needs_reauth', reason: 'refused' }),
  },
  {
    column: 'status',
    op: 'autoDisable',
    name: 'failures reached the disable threshold',
    to: 'disabled',
    run: feedback('closed', { value: 'disabled', reason: 'failing' }),
  },
  {
    column: 'status',
    op: 'disable',
    name: 'a person disables it',
    to: 'disabled',
    run: eachAccount(({ db, state, workspaceId }, id) => state.disable(db, workspaceId, id, 'by a person')),
  },
  {
    column: 'status',
    op: 'reactivate',
    name: 'a person enables it',
    to: 'active',
    other: 'open',
    run: eachAccount(({ db, state, workspaceId }, id) => state.reactivate(db, workspaceId, id)),
  },
  // The feedback's circuit is the caller's: every target from every state.
  ...CIRCUIT_STATES.map((to): Variant => ({
    column: 'circuit',
    op: 'feedback',
    name: `outcomes decide ${to}`,
    to,
    run: feedback(to, null),
  })),
  {
    column: 'circuit',
    op: 'probe',
    name: 'a round takes the probe',
    to: 'half_open',
    run: ({ db, state }, ids) => state.startProbes(db, ids, 60_000),
  },
  {
    column: 'circuit',
    op: 'reset',
    name: 'a person enables the account',
    to: 'closed',
    other: 'disabled',
    run: eachAccount(({ db, state, workspaceId }, id) => state.reactivate(db, workspaceId, id)),
  },
];

function allowed(v: Variant, from: string): boolean {
  return v.column === 'status'
    ? statusTargets(v.op as StatusOperation, from as AccountStatus).includes(v.to as AccountStatus)
    : circuitTargets(v.op as CircuitOperation, from as CircuitStateName).includes(v.to as CircuitStateName);
}

interface Case {
  variant: Variant;
  from: string;
  expected: string;
  id: string;
  status: AccountStatus;
  circuit: CircuitStateName;
}

const CASES: Case[] = VARIANTS.flatMap((variant) =>
  (variant.column === 'status' ? ACCOUNT_STATUSES : CIRCUIT_STATES).map((from): Case => {
    const status = (variant.column === 'status' ? from : (variant.other ?? 'active')) as AccountStatus;
    const circuit = (variant.column === 'circuit' ? from : (variant.other ?? 'closed')) as CircuitStateName;
    return { variant, from, expected: allowed(variant, from) ? variant.to : 'unchanged', id: randomUUID(), status, circuit };
  }),
);

interface Snapshot {
  row: string;
  status: AccountStatus;
  circuit: CircuitStateName;
}

async function snapshot(db: Db): Promise<Map<string, Snapshot>> {
  const rows = await db.query<Snapshot & { id: string }>(
    `SELECT a.id, a.status, a.circuit_state AS circuit, to_jsonb(a)::text AS row FROM accounts a`,
  );
  return new Map(rows.map((r) => [r.id, r]));
}

async function setUp(db: Db, workspaceId: string, rows: { id: string; status: AccountStatus; circuit: CircuitStateName }[]): Promise<void> {
  await db.query(
    `INSERT INTO accounts (id, workspace_id, provider, name, status, status_reason, credentials, circuit_state, circuit_open_until,
                           consecutive_failures, last_error, updated_at)
     SELECT r.id, $1, 'webhook', 'case', r.status, CASE WHEN r.status <> 'active' THEN 'set up by the test' END, 'sealed',
            r.circuit, CASE WHEN r.circuit <> 'closed' THEN now() - interval '1 second' END, 0, 'set up by the test', $2::timestamptz
     FROM unnest($3::uuid[], $4::text[], $5::text[]) AS r(id, status, circuit)`,
    [workspaceId, BEFORE, rows.map((r) => r.id), rows.map((r) => r.status), rows.map((r) => r.circuit)],
  );
}

describe("an account's delivery state on PostgreSQL", () => {
  let db: Db;
  let ctx: Ctx;
  let before: Map<string, Snapshot>;
  let after: Map<string, Snapshot>;

  beforeAll(async () => {
    const { url } = await createTestDatabase();
    db = new Db({ databaseUrl: url, databasePoolSize: 4, databasePreparedStatements: true, databaseIdleInTransactionTimeoutMs: 0 });
    const [{ id: workspaceId }] = await db.query<{ id: string }>(`INSERT INTO workspaces (name) VALUES ('account states') RETURNING id`);
    ctx = {
      db,
      state: new AccountStateService(new AccountStateRepository(), new AccountRowRepository(db)),
      workspaceId,
      failed: new Map(),
    };
    await setUp(db, workspaceId, CASES);
    before = await snapshot(db);
    for (const variant of VARIANTS) {
      const ids = CASES.filter((c) => c.variant === variant).map((c) => c.id);
      await variant.run(ctx, ids).catch((err: unknown) => ids.forEach((id) => ctx.failed.set(id, err)));
    }
    after = await snapshot(db);
  });

  afterAll(async () => {
    await db?.onApplicationShutdown();
  });

  it('sets up every case with the value it names', () => {
    for (const c of CASES) {
      const got = before.get(c.id)!;
      expect({ id: c.id, value: c.variant.column === 'status' ? got.status : got.circuit }).toEqual({ id: c.id, value: c.from });
    }
  });

  it.each(CASES.map((c) => [`${c.variant.column} ${c.variant.op} (${c.variant.name}) from ${c.from}: ${c.expected}`, c] as const))(
    '%s',
    (_name, c) => {
      expect(ctx.failed.get(c.id)).toBeUndefined();
      const was = before.get(c.id)!;
      const now = after.get(c.id)!;
      if (c.expected === 'unchanged') {
        expect(now).toEqual(was);
      } else {
        expect(c.variant.column === 'status' ? now.status : now.circuit).toBe(c.expected);
        expect(now.row).not.toBe(was.row);
      }
    },
  );

  it('runs every move of both tables, and every operation from every value it may not leave', () => {
    const ran = (column: Column) =>
      new Set(
        CASES.filter((c) => c.variant.column === column && c.expected !== 'unchanged').map(
          (c) => `${c.variant.op}: ${c.from} → ${c.expected}`,
        ),
      );
    expect([...ran('status')].sort()).toEqual(STATUS_TRANSITIONS.map((t) => `${t.op}: ${t.from} → ${t.to}`).sort());
    expect([...ran('circuit')].sort()).toEqual(CIRCUIT_TRANSITIONS.map((t) => `${t.op}: ${t.from} → ${t.to}`).sort());
    const refused = (op: string, from: string) => CASES.some((c) => c.variant.op === op && c.from === from && c.expected === 'unchanged');
    for (const op of STATUS_OPERATIONS)
      for (const from of ACCOUNT_STATUSES.filter((s) => !STATUS_TRANSITIONS.some((t) => t.op === op && t.from === s)))
        expect({ op, from, refused: refused(op, from) }).toEqual({ op, from, refused: true });
    for (const op of CIRCUIT_OPERATIONS)
      for (const from of CIRCUIT_STATES.filter((s) => !CIRCUIT_TRANSITIONS.some((t) => t.op === op && t.from === s)))
        expect({ op, from, refused: refused(op, from) }).toEqual({ op, from, refused: true });
  });

  it.each([...ACCOUNT_STATUSES])("refuses feedback that would set a status outside the table's moves, from %s", async (from) => {
    // The feedback's status comes from its caller; only refuse and autoDisable's pairs may be written.
    const rows = ACCOUNT_STATUSES.map((to) => ({ id: randomUUID(), status: from, circuit: 'closed' as const, to }));
    await setUp(db, ctx.workspaceId, rows);
    const was = await snapshot(db);
    const written = await ctx.state.applyFeedback(
      db,
      new Map(
        rows.map((r): [string, AccountFeedback] => [
          r.id,
          {
            circuit: { state: 'closed', openUntil: null, consecutiveFailures: 0 },
            opened: false,
            closed: false,
            lastError: null,
            succeeded: false,
            status: { value: r.to as 'disabled', reason: 'caller' },
          },
        ]),
      ),
    );
    const now = await snapshot(db);
    for (const r of rows) {
      const ok = STATUS_TRANSITIONS.some((t) => (t.op === 'refuse' || t.op === 'autoDisable') && t.from === from && t.to === r.to);
      expect({ to: r.to, written: written.has(r.id), status: now.get(r.id)!.status }).toEqual({
        to: r.to,
        written: ok,
        status: ok ? r.to : from,
      });
      if (!ok) expect(now.get(r.id)).toEqual(was.get(r.id));
    }
  });
});
