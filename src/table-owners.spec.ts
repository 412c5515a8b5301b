import { execFileSync } from 'node:child_process';
import * as path from 'node:path';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { sqlTouches, moduleOf } = require('../scripts/eslint-table-owners.js') as {
  sqlTouches: (text: string, privateTables?: Set<string>) => { table: string; kind: 'write' | 'read' }[];
  moduleOf: (file: string, root: string) => string | null;
};

const ROOT = path.resolve(__dirname, '..');

/**
 * One writer per table (architecture.json "tables", rule herald/one-writer-per-table in
 * scripts/eslint-table-owners.js): what the check reads as a write in a file's SQL text, and
 * `npm run lint` itself on the deliberate breaks of issue 33.
 */
describe('the SQL a file writes', () => {
  const writes = (sql: string) =>
    sqlTouches(sql)
      .filter((t) => t.kind === 'write')
      .map((t) => t.table);

  it.each([
    ['UPDATE job_state SET run_at = now() WHERE job_id = $1', ['job_state']],
    ['update job_state s set run_at = now()', ['job_state']],
    ['UPDATE public.job_state AS s SET status = $2', ['job_state']],
    ['UPDATE ONLY "job_state" SET status = $2', ['job_state']],
    ["INSERT INTO accounts (id) VALUES ($1) ON CONFLICT (id) DO UPDATE SET name = 'x'", ['accounts']],
    ['INSERT INTO accounts AS a (id) VALUES ($1)', ['accounts']],
    ['INSERT INTO audit_events SELECT * FROM x', ['audit_events']],
    [
      'WITH moved AS (UPDATE job_state s SET status = r.status FROM r RETURNING s.job_id) UPDATE job_payloads j SET x = 1',
      ['job_state', 'job_payloads'],
    ],
    ['DELETE FROM posts WHERE id = $1', ['posts']],
    ['DELETE FROM ONLY posts p USING x WHERE p.id = x.id', ['posts']],
    ['TRUNCATE TABLE accounts, public.posts RESTART IDENTITY', ['accounts', 'posts']],
    ['MERGE INTO accounts a USING x ON a.id = x.id WHEN MATCHED THEN DO NOTHING', ['accounts']],
    ['COPY accounts (id, name) FROM STDIN', ['accounts']],
  ])('%s writes %j', (sql, tables) => {
    expect(writes(sql)).toEqual(tables);
  });

  it.each([
    ['a row lock', 'SELECT id FROM accounts WHERE id = ANY($1) ORDER BY id FOR UPDATE'],
    ['a key lock', 'SELECT 1 FROM job_state FOR NO KEY UPDATE OF job_state SKIP LOCKED'],
    ['a comment', '-- UPDATE accounts SET name = 1\nSELECT 1 /* DELETE FROM posts */'],
    ['prose', 'could not update accounts: try again; delete from memory when done'],
    ['a read', 'SELECT * FROM accounts a JOIN posts p ON true'],
  ])('%s writes nothing', (_what, sql) => {
    expect(writes(sql)).toEqual([]);
  });

  it('reads of a private table count; of another, not', () => {
    expect(
      sqlTouches('SELECT 1 FROM attempts t JOIN jobs j ON j.id = t.job_id JOIN accounts a ON true', new Set(['jobs', 'attempts'])),
    ).toEqual([
      { table: 'attempts', kind: 'read' },
      { table: 'jobs', kind: 'read' },
    ]);
    expect(sqlTouches('DELETE FROM jobs', new Set(['jobs']))).toEqual([{ table: 'jobs', kind: 'write' }]);
  });

  it("knows a file's module by its folder of src/", () => {
    expect(moduleOf(path.join(ROOT, 'src/mail/mail-format.ts'), ROOT)).toBe('mail');
    expect(moduleOf(path.join(ROOT, 'src/connectors/bluesky/oauth/bluesky-oauth.repository.ts'), ROOT)).toBe('connectors');
    expect(moduleOf(path.join(ROOT, 'src/main.ts'), ROOT)).toBe('app');
    expect(moduleOf(path.join(ROOT, 'test/posts-api.test.ts'), ROOT)).toBeNull();
  });
});

/** `npm run lint`'s ESLint on `code` as if it were the file at `filePath` (an existing file: the type-aware parser needs one of the project). */
function lint(cases: { filePath: string; code: string }[]): { ruleId: string | null; message: string }[][] {
  // ESLint loads its configuration with import(), which Jest's CommonJS sandbox cannot run: a child process does.
  const script = `
    import { ESLint } from 'eslint';
    const eslint = new ESLint({ cwd: process.cwd(), overrideConfigFile: 'eslint.config.mjs' });
    const out = [];
    for (const c of JSON.parse(process.argv[1])) {
      const [r] = await eslint.lintText(c.code, { filePath: c.filePath });
      out.push(r.messages.map((m) => ({ ruleId: m.ruleId, message: m.message })));
    }
    process.stdout.write(JSON.stringify(out));`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script, JSON.stringify(cases)], { cwd: ROOT, encoding: 'utf8' });
  return JSON.parse(out) as { ruleId: string | null; message: string }[][];
}

describe('npm run lint on deliberate breaks', () => {
  let results: { ruleId: string | null; message: string }[][];

  beforeAll(() => {
    results = lint([
      {
        // A raw UPDATE of the queue's state table in src/mail.
        filePath: 'src/mail/mail-format.ts',
        code: [
          "import type { Sql } from '../database/db';",
          'export async function touch(q: Sql): Promise<void> {',
          "  await q.query(`UPDATE job_state SET run_at = now() WHERE job_id = $1`, ['x']);",
          '}',
          '',
        ].join('\n'),
      },
      {
        // An import of a connector from the page.
        filePath: 'src/settings/page-input.ts',
        code: "import { WebhookConnector } from '../connectors/webhook/webhook.connector';\nexport const connector: unknown = WebhookConnector;\n",
      },
      {
        // A second writer of accounts: the accounts module writing its table itself.
        filePath: 'src/accounts/account-credentials.ts',
        code: [
          "import type { Sql } from '../database/db';",
          'export async function rename(q: Sql): Promise<void> {',
          "  await q.query('UPDATE accounts SET name = $2 WHERE id = $1', ['a', 'b']);",
          '}',
          '',
        ].join('\n'),
      },
      {
        // …and in a CTE of another module's statement.
        filePath: 'src/posts/content-patch.ts',
        code: 'export const SQL = `WITH a AS (DELETE FROM accounts WHERE id = $1 RETURNING 1) SELECT count(*) FROM a`;\n',
      },
      {
        // A read of the jobs' view outside the queue: JobReads is the one home of job reads.
        filePath: 'src/dead-letter/payload-edit.ts',
        code: "export const SQL = 'SELECT id FROM jobs WHERE status = $1';\n",
      },
      {
        // The owner writing its own table is no break.
        filePath: 'src/account-state/account-state.ts',
        code: "export const SQL = 'UPDATE accounts SET name = $2 WHERE id = $1';\n",
      },
    ]);
  });

  it('refuses a raw UPDATE job_state in src/mail, naming the rule, the owner and what to call', () => {
    expect(results[0]).toEqual([
      {
        ruleId: 'herald/one-writer-per-table',
        message:
          'one writer per table: src/mail/mail-format.ts writes job_state, which src/queue owns; call JobLifecycle, JobStore or JobReads instead (architecture.json "tables").',
      },
    ]);
  });

  it('refuses an import of a connector from the page, naming the registry to use', () => {
    // Twice since the page uses nothing of src/connectors at all: the map's rule and the
    // connectors' own; the second names what to call.
    expect(results[1]).toEqual([
      expect.objectContaining({
        ruleId: 'import-x/no-restricted-paths',
        message: expect.stringContaining('src/settings may not import src/connectors: architecture.json lists what each module uses'),
      }),
      expect.objectContaining({
        ruleId: 'import-x/no-restricted-paths',
        message: expect.stringContaining(
          'one module per platform: src/settings may not import a connector (src/connectors/*/*.connector.ts); pick one by provider through ConnectorRegistry',
        ),
      }),
    ]);
  });

  it('refuses a second writer of accounts, naming its owner and service', () => {
    const message = (file: string) =>
      `one writer per table: ${file} writes accounts, which src/account-state owns; call AccountStateService instead (architecture.json "tables").`;
    expect(results[2]).toEqual([{ ruleId: 'herald/one-writer-per-table', message: message('src/accounts/account-credentials.ts') }]);
    expect(results[3]).toEqual([{ ruleId: 'herald/one-writer-per-table', message: message('src/posts/content-patch.ts') }]);
  });

  it('refuses a read of the jobs outside the queue, naming JobReads', () => {
    expect(results[4]).toEqual([
      {
        ruleId: 'herald/one-writer-per-table',
        message:
          'one writer per table: src/dead-letter/payload-edit.ts reads jobs, which only src/queue reads; call JobReads instead (architecture.json "tables").',
      },
    ]);
  });

  it("lets a table's owner write it", () => {
    expect(results[5]).toEqual([]);
  });
});
