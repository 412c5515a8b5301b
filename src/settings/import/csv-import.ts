import { CsvError, parse } from 'csv-parse/sync';
import { limitsFor, validateForPlatform } from '../../posts/platform-rules';
import type { Provider } from '../../vocabulary/vocabulary';
import { formatLocal, zonedToInstant } from '../../common/zoned-time';

/**
 * The CSV import of the settings page (docs/settings.md "Importing posts from a CSV file"): the
 * file's bytes in, each row's verdict out. Pure: the accounts, the time zone and `now` are passed
 * in; nothing is read or written. The page shows these verdicts before anything is created, and
 * creates the rows that are ok through POST /v1/posts/batch's path, which checks them again.
 */

/** Largest file the import reads (the upload stops past it). 500 posts of ~2,000 bytes each. */
export const MAX_IMPORT_BYTES = 1_048_576;
/** Most rows one import takes (5 batches of 100); a larger file is refused as a whole. */
export const MAX_IMPORT_ROWS = 500;
/** Separator of account names in the `accounts` column: not a CSV delimiter (`,` or `;`), never in a name people give. */
export const ACCOUNT_SEPARATOR = '|';

export const REQUIRED_COLUMNS = ['text', 'accounts', 'time'] as const;
export const OPTIONAL_COLUMNS = ['link'] as const;
export type Column = (typeof REQUIRED_COLUMNS)[number] | (typeof OPTIONAL_COLUMNS)[number];
const COLUMNS: readonly Column[] = [...REQUIRED_COLUMNS, ...OPTIONAL_COLUMNS];

/** What the import needs to know of an account of the workspace. */
export interface ImportAccount {
  id: string;
  name: string;
  provider: Provider;
  config: Record<string, unknown> | null;
}

export interface ImportContext {
  accounts: readonly ImportAccount[];
  /** IANA zone a time without an offset is read in. */
  zone: string;
  now: Date;
}

/** A row's post as POST /v1/posts takes it (the batch's item). */
export interface ImportedPost {
  text: string;
  targets: { accountId: string }[];
  scheduledAt?: string;
  queue?: true;
  link?: string;
}

export interface ImportRow {
  /** The row's number as a spreadsheet shows it: the header is row 1. */
  row: number;
  cells: Record<Column, string>;
  /** Every problem of the row, each naming its column ("time: …"); empty when the row is ok. */
  problems: string[];
  /** The post to create, when the row's own checks passed. */
  post: ImportedPost | null;
  /** How the time was read, for the person: "Tue 24 Dec 2026, 09:30 (Europe/Paris)", or "next free queue slot". */
  when: string | null;
  /** The accounts' names as matched. */
  accountNames: string[];
}

export type ImportParse = { ok: false; problem: string } | { ok: true; rows: ImportRow[]; delimiter: string };

const DELIMITERS = [',', ';', '\t'] as const;
const DELIMITER_NAMES: Record<string, string> = { ',': 'commas', ';': 'semicolons', '\t': 'tabs' };

/**
 * The file read as CSV: UTF-8 (a BOM is fine), a header row naming the columns, at most
 * MAX_IMPORT_ROWS rows. A file-level problem refuses the whole file (nothing is created); a
 * row-level problem is that row's verdict.
 */
export function parseImport(bytes: Buffer, ctx: ImportContext): ImportParse {
  if (bytes.length > MAX_IMPORT_BYTES) return { ok: false, problem: tooLarge(bytes.length) };
  let text: string;
  try {
    // fatal: invalid UTF-8 is refused rather than read as U+FFFD; a UTF-8 BOM is dropped.
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return {
      ok: false,
      problem:
        'the file is not UTF-8; save it as UTF-8 (in Excel: "CSV UTF-8 (Comma delimited)"; in LibreOffice: character set "Unicode (UTF-8)") and upload it again',
    };
  }
  if (text.trim() === '') return { ok: false, problem: `the file is empty; the first row names the columns: ${COLUMNS.join(', ')}` };
  const delimiter = delimiterOf(text);
  let records: { record: string[] }[];
  try {
    records = parse(text, { delimiter, info: true, relax_column_count: true, skip_empty_lines: true }) as unknown as typeof records;
  } catch (err) {
    return { ok: false, problem: csvProblem(err) };
  }
  const [header, ...body] = records;
  if (!header) return { ok: false, problem: `the file is empty; the first row names the columns: ${COLUMNS.join(', ')}` };
  const columns = readHeader(header.record, delimiter);
  if (typeof columns === 'string') return { ok: false, problem: columns };
  // A spreadsheet saves rows left blank as a line of delimiters: those are not rows.
  const rows = body.map((r, i) => ({ row: i + 2, record: r.record })).filter((r) => r.record.some((cell) => cell.trim() !== ''));
  if (rows.length === 0) return { ok: false, problem: 'the file has a header row but no rows of posts under it' };
  if (rows.length > MAX_IMPORT_ROWS) {
    return {
      ok: false,
      problem: `the file has ${rows.length.toLocaleString('en-GB')} rows; an import takes at most ${MAX_IMPORT_ROWS}: split it into files of ${MAX_IMPORT_ROWS} rows or fewer`,
    };
  }
  const byName = accountsByName(ctx.accounts);
  return {
    ok: true,
    delimiter,
    rows: rows.map(({ row, record }) => {
      const cells = Object.fromEntries(COLUMNS.map((c) => [c, columns[c] === undefined ? '' : (record[columns[c]] ?? '')])) as Record<
        Column,
        string
      >;
      return verdict(row, cells, record.length > header.record.length, byName, ctx);
    }),
  };
}

/** The header's delimiter: a spreadsheet set to a European locale saves CSV with `;`, some tools with tabs. */
function delimiterOf(text: string): string {
  const firstLine = text.split(/\r?\n/, 1)[0];
  let best: string = ',';
  let most = 0;
  for (const d of DELIMITERS) {
    const n = firstLine.split(d).length - 1;
    if (n > most) [best, most] = [d, n];
  }
  return best;
}

/** Column positions by name, or the header's problem. */
function readHeader(cells: string[], delimiter: string): Partial<Record<Column, number>> | string {
  const names = cells.map((c) => c.trim().toLowerCase());
  const columns: Partial<Record<Column, number>> = {};
  const unknown: string[] = [];
  for (const [i, name] of names.entries()) {
    if (name === '') continue;
    if (!(COLUMNS as readonly string[]).includes(name)) {
      unknown.push(cells[i].trim());
      continue;
    }
    if (columns[name as Column] !== undefined) return `the header row names the column "${name}" twice`;
    columns[name as Column] = i;
  }
  const missing = REQUIRED_COLUMNS.filter((c) => columns[c] === undefined);
  if (missing.length > 0) {
    const found = names.filter((n) => n !== '');
    return (
      `the header row (the first row) lacks the column${missing.length > 1 ? 's' : ''} ${missing.map((m) => `"${m}"`).join(', ')}; ` +
      `it must name ${REQUIRED_COLUMNS.join(', ')} and optionally ${OPTIONAL_COLUMNS.join(', ')} ` +
      `(found: ${found.length ? found.map((n) => `"${n}"`).join(', ') : 'nothing'}, separated by ${DELIMITER_NAMES[delimiter]})`
    );
  }
  if (unknown.length > 0) {
    return `the header row names unknown column${unknown.length > 1 ? 's' : ''} ${unknown.map((u) => `"${u}"`).join(', ')}; the columns are ${COLUMNS.join(', ')}`;
  }
  return columns;
}

function csvProblem(err: unknown): string {
  if (!(err instanceof CsvError)) return 'the file could not be read as CSV';
  const line = (err as CsvError & { lines?: number }).lines;
  const at = typeof line === 'number' ? ` (line ${line})` : '';
  switch (err.code) {
    case 'CSV_QUOTE_NOT_CLOSED':
      return `the file is not valid CSV: a quote (") opens a cell that is never closed${at}; every quoted cell ends with a quote`;
    case 'INVALID_OPENING_QUOTE':
    case 'CSV_INVALID_CLOSING_QUOTE':
      return `the file is not valid CSV: a quote (") in the middle of a cell${at}; put the whole cell in quotes and double the quotes inside it ("")`;
    default:
      return `the file is not valid CSV${at}: ${err.message.replace(/^[^:]*:\s*/, '')}`;
  }
}

const tooLarge = (bytes: number) =>
  `the file is ${(bytes / 1_048_576).toFixed(1)} MB; an import takes files up to ${MAX_IMPORT_BYTES / 1_048_576} MB: split it into smaller files`;
export const FILE_TOO_LARGE = tooLarge(MAX_IMPORT_BYTES + 1).replace(/is [\d.]+ MB/, 'is too large');

function accountsByName(accounts: readonly ImportAccount[]): Map<string, ImportAccount[]> {
  const map = new Map<string, ImportAccount[]>();
  for (const a of accounts) {
    const key = a.name.trim().toLowerCase();
    map.set(key, [...(map.get(key) ?? []), a]);
  }
  return map;
}

/** A row's checks that need no database: formulas, the cells' shapes, account names, the time, each account's limits. */
function verdict(
  row: number,
  cells: Record<Column, string>,
  extraCells: boolean,
  byName: Map<string, ImportAccount[]>,
  ctx: ImportContext,
): ImportRow {
  const problems: string[] = [];
  for (const column of COLUMNS) {
    const formula = formulaProblem(cells[column]);
    if (formula) problems.push(`${column}: ${formula}`);
  }
  if (extraCells) problems.push('the row has more cells than the header has columns (a delimiter inside a cell that is not in quotes?)');
  const text = cells.text.trim();
  if (text === '') problems.push('text: empty; every post needs a text');

  const names = cells.accounts
    .split(ACCOUNT_SEPARATOR)
    .map((n) => n.trim())
    .filter((n) => n !== '');
  const targets: ImportAccount[] = [];
  if (names.length === 0) problems.push(`accounts: empty; name one or more accounts, separated by ${ACCOUNT_SEPARATOR}`);
  for (const name of names) {
    const found = byName.get(name.toLowerCase()) ?? [];
    if (found.length === 0) problems.push(`accounts: no account is named "${name}"`);
    else if (found.length > 1)
      problems.push(`accounts: ${found.length} accounts are named "${name}"; rename one of them on the accounts page`);
    else if (targets.includes(found[0])) problems.push(`accounts: "${name}" is named twice`);
    else targets.push(found[0]);
  }

  const time = readTime(cells.time.trim(), ctx);
  if (time.problem) problems.push(`time: ${time.problem}`);
  const link = cells.link.trim();

  // Each account's limits on this text (docs/api.md "Limits"), as POST /v1/posts checks them.
  if (text !== '') {
    for (const account of targets) {
      for (const p of validateForPlatform(
        account.provider,
        { text, media: [], link: link || null },
        limitsFor(account.provider, account.config),
      )) {
        problems.push(`text: for "${account.name}" (${account.provider}): ${p}`);
      }
    }
  }
  const post: ImportedPost | null =
    problems.length > 0
      ? null
      : {
          text,
          targets: targets.map((a) => ({ accountId: a.id })),
          ...(time.queue ? { queue: true as const } : { scheduledAt: time.instant!.toISOString() }),
          ...(link ? { link } : {}),
        };
  return { row, cells, problems, post, when: time.when, accountNames: targets.map((a) => a.name) };
}

const ISO_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i;
const LOCAL = /^(\d{4}-\d{2}-\d{2})[T ](\d{1,2}:\d{2})(:00)?$/i;

/** The `time` cell: `queue`, an ISO 8601 instant with its offset, or a local "YYYY-MM-DD HH:MM" in the zone. Not in the past. */
function readTime(cell: string, ctx: ImportContext): { problem?: string; instant?: Date; queue?: boolean; when: string | null } {
  if (cell === '') return { problem: 'empty; give a date and time (YYYY-MM-DD HH:MM) or the word queue', when: null };
  if (cell.toLowerCase() === 'queue') return { queue: true, when: 'the next free queue slot' };
  let instant: Date;
  if (ISO_WITH_OFFSET.test(cell)) {
    instant = new Date(cell);
    if (Number.isNaN(instant.getTime())) return { problem: `${cell} is not a real date and time`, when: null };
  } else {
    const m = LOCAL.exec(cell);
    if (!m) {
      return {
        problem: `"${cell}" is not a time: write YYYY-MM-DD HH:MM (in ${ctx.zone}), an ISO 8601 time with its offset, or the word queue`,
        when: null,
      };
    }
    const zoned = zonedToInstant(m[1], m[2].padStart(5, '0'), ctx.zone);
    if (!zoned.ok) return { problem: zoned.problem, when: null };
    instant = zoned.instant;
  }
  const when = `${formatLocal(instant, ctx.zone)} (${ctx.zone})`;
  // A minute of grace: a row for "now" written a moment ago is not refused.
  if (instant.getTime() < ctx.now.getTime() - 60_000) return { problem: `${when} is in the past`, when };
  return { instant, when };
}

/**
 * Why a cell would run as a formula if this file (or a list made from it) were opened in a
 * spreadsheet, or null (OWASP "CSV Injection"). Leading spaces, tabs and line breaks are skipped,
 * as spreadsheets skip them. Refused:
 * - a cell starting with `=`, followed by anything;
 * - a cell starting with `+`, `-` or `@` followed by formula-like content: a function call
 *   (`@SUM(`, `+HYPERLINK(`), arithmetic on a number or a cell reference (`+1+1`, `-A1*2`), or a
 *   DDE reference (`-2+cmd|' /C calc'!A0`).
 * Not refused: a post that starts with a mention (`@alice see you there`), a list dash
 * (`- item one`), or a signed number alone (`+5`, `-3 degrees tonight`).
 */
export function formulaProblem(cell: string): string | null {
  const s = cell.replace(/^[\s]+/, '');
  const first = s.charAt(0);
  if (first === '=') return 'starts with "=", which a spreadsheet would run as a formula; rephrase the start of the cell';
  if (first !== '+' && first !== '-' && first !== '@') return null;
  const rest = s.slice(1).replace(/^\s+/, '');
  const call = /^[A-Za-z_][\w.]*\s*\(/.test(rest);
  const arithmetic = /^\$?[A-Za-z]{0,3}\$?\d+(\.\d+)?\s*[-+*/^&=<>]/.test(rest);
  const dde = /[A-Za-z]+\s*\|\s*'[^']*'\s*!/.test(rest);
  if (!call && !arithmetic && !dde) return null;
  return `starts with "${first}" and what follows reads as a formula a spreadsheet would run; rephrase the start of the cell`;
}
