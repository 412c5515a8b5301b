import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadConfig } from './config';

/**
 * One configuration table: docs/operations.md's, under "## Configuration". It names every
 * variable config.ts reads, and nothing it does not read, each with the default config.ts gives
 * it; a new variable is documented there or this fails. Every other doc (docs/**.md and the
 * README) links to it instead of repeating its rows: copies drift (operations-security.md's copy
 * gave METRICS_DB_REFRESH_SECONDS a range operations.md's row did not have).
 */
const ROOT = path.resolve(__dirname, '../..');
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');
const CONFIG_SOURCE = read('src/config/config.ts');
const TABLE_DOC = 'docs/operations.md';
const TABLE_ANCHOR = 'configuration';

function variablesRead(): string[] {
  return [...new Set([...CONFIG_SOURCE.matchAll(/read[A-Za-z]*\(env, '([A-Z][A-Z0-9_]+)'/g)].map((m) => m[1]))].sort();
}

/**
 * The defaults config.ts spells as literals, as the table should show them: numbers (products of
 * literals such as `7 * 86_400` worked out), booleans, and strings after `??`; "unset" for a read
 * whose value is used as it is, null when missing. The few a function computes are taken from
 * loadConfig({}) itself. BLUESKY_OAUTH_SCOPE's (a long scope string the row spells out in its
 * meaning) is not checked.
 */
function defaultsRead(): Map<string, string> {
  const defaults = new Map<string, string>();
  for (const m of CONFIG_SOURCE.matchAll(/readInt\(env, '([A-Z][A-Z0-9_]+)', ([^,]+),/g)) {
    if (/^[\d_ *]+$/.test(m[2])) defaults.set(m[1], String(m[2].split('*').reduce((n, f) => n * Number(f.trim().replace(/_/g, '')), 1)));
  }
  for (const m of CONFIG_SOURCE.matchAll(/readBool\(env, '([A-Z][A-Z0-9_]+)', (true|false)\)/g)) defaults.set(m[1], m[2]);
  for (const m of CONFIG_SOURCE.matchAll(/read(?:String|Url)\(env, '([A-Z][A-Z0-9_]+)'(?:, \[[^\]]*\])?\)\)? \?\? '([^']*)'/g)) {
    defaults.set(m[1], m[2]);
  }
  // (`const value = readString(…)` is a validating reader's, which gives its own default.)
  for (const m of CONFIG_SOURCE.matchAll(/const (?!value )\w+ = read(?:String|Url)\(env, '([A-Z][A-Z0-9_]+)'(?:, \[[^\]]*\])?\);/g)) {
    defaults.set(m[1], 'unset');
  }
  for (const m of CONFIG_SOURCE.matchAll(/: read(?:String|Url)\(env, '([A-Z][A-Z0-9_]+)'(?:, \[[^\]]*\])?\),/g))
    defaults.set(m[1], 'unset');
  const computed = loadConfig({}, '/');
  defaults.set('TRUST_PROXY', String(computed.trustProxy));
  defaults.set('LINKEDIN_VERSION', computed.linkedin.apiVersion);
  defaults.set('BLUESKY_HANDLE_RESOLVER_URL', computed.bluesky.handleResolverUrl ?? 'unset');
  defaults.set('WORKER_ATTEMPT_TIMEOUT_MS', String(computed.worker.attemptTimeoutMs));
  // The table says `http://localhost:$PORT`: the default follows PORT.
  defaults.set('PUBLIC_URL', computed.publicUrl.replace(`:${computed.port}`, ':$PORT'));
  return defaults;
}

/** Every doc: docs/**.md and the README. */
function docs(): string[] {
  const found: string[] = ['README.md'];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
      const file = path.posix.join(dir, entry.name);
      if (entry.isDirectory()) walk(file);
      else if (entry.name.endsWith('.md')) found.push(file);
    }
  };
  walk('docs');
  return found.sort();
}

/** The cells of a table row (`| a | b |`), trimmed; null for a line that is not one, or a header's rule. */
function cells(line: string): string[] | null {
  if (!line.startsWith('|') || /^\|[\s:|-]+\|$/.test(line.trim())) return null;
  return line
    .trim()
    .replace(/^\||\|$/g, '')
    .split('|')
    .map((c) => c.trim());
}

/** Config variables named in code spans (`LOG_LEVEL`, `HERALD_DATA_DIR/outbox/`) of a text. */
function variablesNamed(text: string, known: Set<string>): string[] {
  const names = [...text.matchAll(/`([^`]+)`/g)].flatMap((m) => [...m[1].matchAll(/[A-Z][A-Z0-9_]+/g)].map((n) => n[0]));
  return [...new Set(names.filter((n) => known.has(n)))];
}

/** A first cell of a configuration table: variables read by config.ts and nothing else (`SMTP_URL`, `MAIL_FROM`). */
function isVariableCell(cell: string, known: Set<string>): boolean {
  const matches = cell.split(',').map((part) => /^\[?`([A-Z][A-Z0-9_]+)`(?:\]\([^)]*\))?$/.exec(part.trim()));
  return matches.every((m) => m !== null) && matches.some((m) => m !== null && known.has(m[1]));
}

/** Splits a cell at its top-level commas (not inside `code` or parentheses): one default per variable. */
function splitDefaults(cell: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let inCode = false;
  let start = 0;
  for (let i = 0; i < cell.length; i++) {
    const c = cell[i];
    if (c === '`') inCode = !inCode;
    else if (!inCode && c === '(') depth++;
    else if (!inCode && c === ')') depth--;
    else if (!inCode && depth === 0 && c === ',') {
      parts.push(cell.slice(start, i).trim());
      start = i + 1;
    }
  }
  parts.push(cell.slice(start).trim());
  return parts;
}

/** As the table shows a default: its first code span (`./.data` is `.data`), or "unset". */
function shownDefault(item: string): string {
  if (/^unset\b/.test(item)) return 'unset';
  const code = /`([^`]*)`/.exec(item);
  return code ? code[1].replace(/^\.\//, '') : item;
}

/** operations.md's table: each variable of the first column with the default the second shows for it. */
function table(): Map<string, string> {
  const lines = read(TABLE_DOC).split('\n');
  const heading = lines.findIndex((l) => l === `## ${TABLE_ANCHOR[0].toUpperCase()}${TABLE_ANCHOR.slice(1)}`);
  const start = lines.findIndex((l, i) => i > heading && /^\| variable /.test(l));
  expect(heading).toBeGreaterThanOrEqual(0);
  expect(start).toBeGreaterThan(heading);
  const rows = new Map<string, string>();
  for (let i = start + 2; i < lines.length && lines[i].startsWith('|'); i++) {
    const [names, defaults] = cells(lines[i])!;
    const variables = [...names.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]);
    const items = splitDefaults(defaults);
    // One default for every variable of the row, or one shared by all of them.
    expect({ row: names, defaults: items.length === variables.length || items.length === 1 }).toEqual({ row: names, defaults: true });
    variables.forEach((v, j) => rows.set(v, shownDefault(items.length === 1 ? items[0] : items[j])));
  }
  return rows;
}

/** Whether `text` (in `doc`) links to the table: `operations.md#configuration` relative to the doc. */
function linksToTable(doc: string, text: string): boolean {
  return [...text.matchAll(/\]\(([^)#\s]*)#([^)\s]+)\)/g)].some(
    (m) => m[2] === TABLE_ANCHOR && path.posix.normalize(path.posix.join(path.posix.dirname(doc), m[1])) === TABLE_DOC,
  );
}

describe('configuration documentation', () => {
  const known = new Set(variablesRead());

  it('reads at least the variables everyone sets', () => {
    expect(variablesRead()).toEqual(expect.arrayContaining(['DATABASE_URL', 'PORT', 'HERALD_SECRET_KEY', 'SMTP_URL']));
  });

  it('docs/operations.md lists every variable config.ts reads, and no other', () => {
    expect([...table().keys()].sort()).toEqual(variablesRead());
  });

  it("docs/operations.md shows each variable's default as config.ts has it", () => {
    const documented = table();
    const defaults = defaultsRead();
    // The reading of config.ts above still finds the defaults (a changed reader would leave it checking nothing).
    expect(defaults.size).toBeGreaterThan(40);
    expect(defaults.get('METRICS_DB_REFRESH_SECONDS')).toBe('30');
    expect(defaults.get('MEDIA_QUOTA_BYTES')).toBe('1073741824');
    const wrong = [...defaults]
      .filter(([name, value]) => documented.get(name) !== value)
      .map(([name, value]) => `${name}: config.ts ${value}, ${TABLE_DOC} ${documented.get(name)}`);
    expect(wrong).toEqual([]);
  });

  it('no other doc repeats a row of the table: no table row of variables, no default in a table row naming one', () => {
    const repeated: string[] = [];
    for (const doc of docs().filter((d) => d !== TABLE_DOC)) {
      read(doc)
        .split('\n')
        .forEach((line, i) => {
          const row = cells(line);
          if (!row) return;
          const named = variablesNamed(line, known);
          if (named.length === 0) return;
          const where = `${doc}:${i + 1} (${named.join(', ')})`;
          if (isVariableCell(row[0], known)) repeated.push(`${where}: a configuration table row`);
          else if (/\bdefault\b/i.test(line)) repeated.push(`${where}: a default (link to ${TABLE_DOC}#${TABLE_ANCHOR} instead)`);
        });
    }
    expect(repeated).toEqual([]);
  });

  it('every doc that names a variable links to the table', () => {
    const unlinked = docs()
      .filter((d) => d !== TABLE_DOC)
      .filter((doc) => variablesNamed(read(doc), known).length > 0 && !linksToTable(doc, read(doc)));
    expect(unlinked).toEqual([]);
  });
});
