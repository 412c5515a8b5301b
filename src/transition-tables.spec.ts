import * as fs from 'node:fs';
import * as path from 'node:path';
import { CIRCUIT_TRANSITIONS, STATUS_TRANSITIONS } from './account-state/account-state';
import { TRANSITIONS } from './queue/job-lifecycle';

interface Move {
  op: string;
  from: string | null;
  to: string;
  why: string;
}
type Tables = Record<'jobs' | 'account-status' | 'circuit', readonly Move[]>;

// eslint-disable-next-line @typescript-eslint/no-require-imports
const script = require('../scripts/transition-table.js') as {
  docWithTables: (doc: string, tables: Tables) => string;
  renderTable: (name: string, moves: readonly Move[]) => string;
  loadTables: () => Tables;
};

/**
 * docs/delivery.md shows the state tables of the code (the job lifecycle, an account's status
 * and circuit), drawn by `npm run docs:transitions` between markers. These fail when the doc and
 * the code differ (run the script), and check that the script reads the same tables the code
 * runs, without a build.
 */
const ROOT = path.resolve(__dirname, '..');
const TABLES: Tables = { jobs: TRANSITIONS, 'account-status': STATUS_TRANSITIONS, circuit: CIRCUIT_TRANSITIONS };

describe("docs/delivery.md's state tables", () => {
  it('are the code’s tables, as `npm run docs:transitions` draws them', () => {
    const doc = fs.readFileSync(path.join(ROOT, 'docs', 'delivery.md'), 'utf8');
    expect(doc).toBe(script.docWithTables(doc, TABLES));
  });

  it('are drawn from the tables the code runs (the script reads the sources without a build)', () => {
    expect(JSON.parse(JSON.stringify(script.loadTables()))).toEqual(JSON.parse(JSON.stringify(TABLES)));
  });

  it('show every move, a source shared by one reason on one row, and a new job as (new)', () => {
    const jobs = script.renderTable('jobs', TRANSITIONS);
    const rows = jobs.split('\n').filter((l) => /^\| [a-zA-Z]+ +\|/.test(l) && !l.startsWith('| operation'));
    const cells = rows.map((r) => r.split('|').map((c) => c.trim()));
    const moves = cells.flatMap(([, op, from, to]) =>
      from.split(', ').map((f) => `${op}: ${f.replace(/`/g, '')} → ${to.replace(/`/g, '')}`),
    );
    expect(moves.sort()).toEqual(TRANSITIONS.map((t) => `${t.op}: ${t.from ?? '(new)'} → ${t.to}`).sort());
    expect(jobs).toContain('| recordLate   | `scheduled`, `in_progress`, `paused`, `dead`, `cancelled`, `discarded` | `succeeded`');
  });

  it('notices a doc that differs from the code', () => {
    const doc = fs.readFileSync(path.join(ROOT, 'docs', 'delivery.md'), 'utf8');
    const stale = doc.replace(
      '| `succeeded`                                                            | `succeeded`',
      '| (none) | `succeeded`',
    );
    expect(stale).not.toBe(doc);
    expect(script.docWithTables(stale, TABLES)).toBe(doc);
    expect(() => script.docWithTables('no markers', TABLES)).toThrow(/no markers for the jobs table/);
  });
});
