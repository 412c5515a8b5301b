import { Client } from 'pg';

/**
 * Where the database work of a delivery goes, read from PostgreSQL's own counters around a run:
 * WAL (pg_current_wal_lsn(), and pg_stat_wal's records and full-page images where the server has
 * it, 14+), rows inserted / updated / HOT-updated / deleted per table (pg_stat_user_tables), heap
 * and index bytes per table (pg_relation_size, pg_indexes_size), dead tuples left, autovacuum and
 * autoanalyze runs, commits (pg_stat_database).
 *
 * The statistics are cumulative and sent by each backend at most once a second and when it exits,
 * so a snapshot is taken only once no backend other than the bench's own is connected to the
 * database (the workers stopped, autovacuum finished): every backend that worked has exited and
 * flushed what it counted. The bench's own connection calls pg_stat_force_next_flush() where the
 * server has it (15+) and reads a fresh snapshot (pg_stat_clear_snapshot()).
 *
 * WAL is the server's, not one database's: the bench runs one thing at a time, so on its own
 * server (the embedded one, the default) the difference is the run's. With DATABASE_URL pointing
 * at a server others use, their WAL counts too.
 */

export interface TableWrites {
  ins: number;
  upd: number;
  hot: number;
  del: number;
  /** n_dead_tup at the end (not a difference). */
  dead: number;
  autovacuum: number;
  autoanalyze: number;
  heapBytes: number;
  indexBytes: number;
  /** Indexes on the table that take an entry per row version (BRIN left out: one summary per page range). */
  rowIndexes: number;
}

export interface WriteSnapshot {
  lsn: bigint;
  walRecords: number | null;
  walFpi: number | null;
  commits: number;
  tables: Map<string, TableWrites>;
}

/** What a run wrote: differences of two snapshots (dead tuples and index counts: the end's). */
export interface Writes {
  deliveries: number;
  /** The run's WAL range, `from..to` as PostgreSQL spells LSNs: what `pg_waldump -s from -e to` reads, record by record. */
  walRange: string;
  walBytes: number;
  walRecords: number | null;
  walFpi: number | null;
  commits: number;
  tables: Map<string, TableWrites>;
}

const lsnValue = (lsn: string): bigint => {
  const [hi, lo] = lsn.split('/');
  return (BigInt(`0x${hi}`) << 32n) | BigInt(`0x${lo}`);
};

const lsnText = (lsn: bigint): string => `${(lsn >> 32n).toString(16).toUpperCase()}/${(lsn & 0xffffffffn).toString(16).toUpperCase()}`;

async function withClient<T>(url: string, work: (c: Client) => Promise<T>): Promise<T> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    return await work(c);
  } finally {
    await c.end();
  }
}

/** Waits until no backend but the caller's is connected to `datname` (their statistics are then flushed). */
export async function settle(adminUrl: string, datname: string, timeoutMs = 300_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  await withClient(adminUrl, async (c) => {
    for (;;) {
      const n = (
        await c.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, [
          datname,
        ])
      ).rows[0].n;
      if (n === 0) return;
      if (Date.now() > deadline) throw new Error(`bench: ${n} backends still connected to ${datname}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  });
}

export async function writeSnapshot(adminUrl: string, url: string, datname: string): Promise<WriteSnapshot> {
  await settle(adminUrl, datname);
  const tables = await withClient(url, async (c) => {
    const version = Number((await c.query<{ v: string }>(`SELECT current_setting('server_version_num') AS v`)).rows[0].v);
    if (version >= 150000) await c.query('SELECT pg_stat_force_next_flush()');
    await c.query('SELECT pg_stat_clear_snapshot()');
    const rows = (
      await c.query<{
        name: string;
        ins: string;
        upd: string;
        hot: string;
        del: string;
        dead: string;
        autovacuum: string;
        autoanalyze: string;
        heap: string;
        index: string;
        indexes: number;
      }>(
        `SELECT s.schemaname || '.' || s.relname AS name, s.n_tup_ins AS ins, s.n_tup_upd AS upd, s.n_tup_hot_upd AS hot,
                s.n_tup_del AS del, s.n_dead_tup AS dead, s.autovacuum_count AS autovacuum, s.autoanalyze_count AS autoanalyze,
                pg_relation_size(s.relid) AS heap, pg_indexes_size(s.relid) AS index,
                (SELECT count(*)::int FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid JOIN pg_am am ON am.oid = ic.relam
                 WHERE i.indrelid = s.relid AND am.amname <> 'brin') AS indexes
         FROM pg_stat_user_tables s`,
      )
    ).rows;
    return new Map(
      rows.map((r) => [
        r.name,
        {
          ins: Number(r.ins),
          upd: Number(r.upd),
          hot: Number(r.hot),
          del: Number(r.del),
          dead: Number(r.dead),
          autovacuum: Number(r.autovacuum),
          autoanalyze: Number(r.autoanalyze),
          heapBytes: Number(r.heap),
          indexBytes: Number(r.index),
          rowIndexes: r.indexes,
        },
      ]),
    );
  });
  return withClient(adminUrl, async (c) => {
    const version = Number((await c.query<{ v: string }>(`SELECT current_setting('server_version_num') AS v`)).rows[0].v);
    if (version >= 150000) await c.query('SELECT pg_stat_force_next_flush()');
    await c.query('SELECT pg_stat_clear_snapshot()');
    const lsn = lsnValue((await c.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0].lsn);
    const wal =
      version >= 140000
        ? (await c.query<{ records: string; fpi: string }>('SELECT wal_records AS records, wal_fpi AS fpi FROM pg_stat_wal')).rows[0]
        : null;
    const commits = Number(
      (await c.query<{ n: string }>('SELECT xact_commit AS n FROM pg_stat_database WHERE datname = $1', [datname])).rows[0]?.n ?? 0,
    );
    return {
      lsn,
      walRecords: wal ? Number(wal.records) : null,
      walFpi: wal ? Number(wal.fpi) : null,
      commits,
      tables,
    };
  });
}

/** `after` − `before`, for `deliveries` deliveries; `ownCommits`: the bench's own queries on the database meanwhile (polling). */
export function writesBetween(before: WriteSnapshot, after: WriteSnapshot, deliveries: number, ownCommits: number): Writes {
  const tables = new Map<string, TableWrites>();
  for (const [name, a] of after.tables) {
    const b = before.tables.get(name);
    const d = (k: keyof TableWrites) => a[k] - (b?.[k] ?? 0);
    const t: TableWrites = {
      ins: d('ins'),
      upd: d('upd'),
      hot: d('hot'),
      del: d('del'),
      dead: a.dead,
      autovacuum: d('autovacuum'),
      autoanalyze: d('autoanalyze'),
      heapBytes: d('heapBytes'),
      indexBytes: d('indexBytes'),
      rowIndexes: a.rowIndexes,
    };
    if (t.ins || t.upd || t.del || t.dead || t.autovacuum || t.autoanalyze || t.heapBytes || t.indexBytes) tables.set(name, t);
  }
  return {
    deliveries,
    walRange: `${lsnText(before.lsn)}..${lsnText(after.lsn)}`,
    walBytes: Number(after.lsn - before.lsn),
    walRecords: after.walRecords !== null && before.walRecords !== null ? after.walRecords - before.walRecords : null,
    walFpi: after.walFpi !== null && before.walFpi !== null ? after.walFpi - before.walFpi : null,
    commits: after.commits - before.commits - ownCommits,
    tables,
  };
}

/** Totals over the tables, per delivery (dead tuples and autovacuum runs: totals, not per delivery). */
export interface WriteTotals {
  walBytes: number;
  walRecords: number | null;
  walFpi: number | null;
  commits: number;
  ins: number;
  upd: number;
  hot: number;
  del: number;
  /** Upper bound of index entries written: (inserts + non-HOT updates) × the table's per-row indexes (partial indexes take only rows that match). */
  indexEntries: number;
  indexBytes: number;
  heapBytes: number;
  dead: number;
  autovacuum: number;
  autoanalyze: number;
}

export function totals(w: Writes): WriteTotals {
  const per = (x: number) => x / w.deliveries;
  let ins = 0;
  let upd = 0;
  let hot = 0;
  let del = 0;
  let entries = 0;
  let indexBytes = 0;
  let heapBytes = 0;
  let dead = 0;
  let autovacuum = 0;
  let autoanalyze = 0;
  for (const t of w.tables.values()) {
    ins += t.ins;
    upd += t.upd;
    hot += t.hot;
    del += t.del;
    entries += (t.ins + t.upd - t.hot) * t.rowIndexes;
    indexBytes += t.indexBytes;
    heapBytes += t.heapBytes;
    dead += t.dead;
    autovacuum += t.autovacuum;
    autoanalyze += t.autoanalyze;
  }
  return {
    walBytes: per(w.walBytes),
    walRecords: w.walRecords === null ? null : per(w.walRecords),
    walFpi: w.walFpi === null ? null : per(w.walFpi),
    commits: per(w.commits),
    ins: per(ins),
    upd: per(upd),
    hot: per(hot),
    del: per(del),
    indexEntries: per(entries),
    indexBytes: per(indexBytes),
    heapBytes: per(heapBytes),
    dead,
    autovacuum,
    autoanalyze,
  };
}
