import fc from 'fast-check';
import { formulaProblem, ImportContext, MAX_IMPORT_BYTES, parseImport } from './csv-import';

const NOW = new Date('2026-12-06T12:00:00Z');
const ctx: ImportContext = {
  zone: 'Europe/Paris',
  now: NOW,
  accounts: [
    { id: '11111111-1111-4111-8111-111111111111', name: 'Company blog', provider: 'webhook', config: null },
    { id: '22222222-2222-4222-8222-222222222222', name: 'Herald on Bluesky', provider: 'bluesky', config: null },
    { id: '33333333-3333-4333-8333-333333333333', name: 'Twin', provider: 'webhook', config: null },
    { id: '44444444-4444-4444-8444-444444444444', name: 'twin', provider: 'webhook', config: null },
  ],
};
const csv = (text: string) => Buffer.from(text, 'utf8');
const parsed = (text: string | Buffer) => {
  const result = parseImport(typeof text === 'string' ? csv(text) : text, ctx);
  if (!result.ok) throw new Error(`expected rows, got: ${result.problem}`);
  return result.rows;
};
const problemOf = (text: string | Buffer) => {
  const result = parseImport(typeof text === 'string' ? csv(text) : text, ctx);
  if (result.ok) throw new Error('expected a problem with the file');
  return result.problem;
};

describe('parseImport: rows', () => {
  it('reads local times in the zone, ISO times, the word queue, links and several accounts', () => {
    const rows = parsed(
      'text,accounts,time,link\n' +
        'Hello,Company blog,2026-12-24 09:30,https://example.com/a\n' +
        '"Two, accounts",Company blog | Herald on Bluesky,2026-12-24T08:30:00Z,\n' +
        'Queued,herald on bluesky,queue,\n',
    );
    expect(rows.map((r) => [r.row, r.problems, r.post])).toEqual([
      [
        2,
        [],
        {
          text: 'Hello',
          targets: [{ accountId: ctx.accounts[0].id }],
          scheduledAt: '2026-12-24T08:30:00.000Z',
          link: 'https://example.com/a',
        },
      ],
      [
        3,
        [],
        {
          text: 'Two, accounts',
          targets: [{ accountId: ctx.accounts[0].id }, { accountId: ctx.accounts[1].id }],
          scheduledAt: '2026-12-24T08:30:00.000Z',
        },
      ],
      [4, [], { text: 'Queued', targets: [{ accountId: ctx.accounts[1].id }], queue: true }],
    ]);
    expect(rows[0].when).toBe('2026-12-24 09:30 (Europe/Paris)');
    expect(rows[2].when).toBe('the next free queue slot');
  });

  it('takes a UTF-8 BOM, CRLF line ends, quoted line breaks, semicolons or tabs as delimiters, and skips blank rows', () => {
    const bom = Buffer.concat([
      Buffer.from([0xef, 0xbb, 0xbf]),
      csv('text;accounts;time\r\n"Line one\r\nline two";Company blog;queue\r\n;;\r\n\r\n'),
    ]);
    const rows = parsed(bom);
    expect(rows).toHaveLength(1);
    expect(rows[0].post?.text).toBe('Line one\r\nline two');
    expect(parsed('Text\tAccounts\tTime\nÉté ☀️\tCompany blog\tqueue\n')[0].post?.text).toBe('Été ☀️');
  });

  it('names the column of every problem of a row, and creates nothing for it', () => {
    const rows = parsed(
      'text,accounts,time,link\n' +
        ',Nobody | Twin,2026-13-01 09:00,\n' +
        'Past,Company blog,2026-12-01 09:00,\n' +
        'Gap,Company blog,2026-03-29 02:30,\n' +
        'Gibberish,Company blog,tomorrow,\n' +
        'Twice,Company blog|company blog,queue,\n' +
        `${'x'.repeat(301)},Herald on Bluesky,queue,\n` +
        'Extra,Company blog,queue,,surplus\n',
    );
    expect(rows.map((r) => r.problems)).toEqual([
      [
        'text: empty; every post needs a text',
        'accounts: no account is named "Nobody"',
        'accounts: 2 accounts are named "Twin"; rename one of them on the accounts page',
        'time: 2026-13-01 is not a date (YYYY-MM-DD)',
      ],
      ['time: 2026-12-01 09:00 (Europe/Paris) is in the past'],
      ['time: 2026-03-29 02:30 does not exist in Europe/Paris (the clocks skip it): choose another time'],
      [expect.stringMatching(/^time: "tomorrow" is not a time: write YYYY-MM-DD HH:MM \(in Europe\/Paris\)/)],
      ['accounts: "company blog" is named twice'],
      ['text: for "Herald on Bluesky" (bluesky): text is 301 graphemes, the limit is 300'],
      ['the row has more cells than the header has columns (a delimiter inside a cell that is not in quotes?)'],
    ]);
    expect(rows.every((r) => r.post === null)).toBe(true);
  });

  it('refuses a row with a formula, naming the cell', () => {
    const rows = parsed(
      'text,accounts,time\n"=HYPERLINK(""http://evil.example"",""click"")",Company blog,queue\nFine,@SUM(1+1)*cmd|\' /C calc\'!A0,queue\n',
    );
    expect(rows[0].problems).toEqual(['text: starts with "=", which a spreadsheet would run as a formula; rephrase the start of the cell']);
    expect(rows[1].problems[0]).toMatch(/^accounts: starts with "@" and what follows reads as a formula/);
  });
});

describe('parseImport: the whole file refused', () => {
  it('a file that is not UTF-8 (Latin-1, UTF-16)', () => {
    const latin1 = Buffer.from('text,accounts,time\nÉté,Company blog,queue\n', 'latin1');
    expect(problemOf(latin1)).toMatch(/^the file is not UTF-8; save it as UTF-8/);
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('text,accounts,time\n', 'utf16le')]);
    expect(problemOf(utf16)).toMatch(/^the file is not UTF-8/);
  });

  it('an empty file, a blank one, a header without rows', () => {
    expect(problemOf('')).toBe('the file is empty; the first row names the columns: text, accounts, time, link');
    expect(problemOf('\n \r\n')).toMatch(/^the file is empty/);
    expect(problemOf(Buffer.from([0xef, 0xbb, 0xbf]))).toMatch(/^the file is empty/);
    expect(problemOf('text,accounts,time\n,,\n')).toBe('the file has a header row but no rows of posts under it');
  });

  it('missing, unknown or repeated columns', () => {
    expect(problemOf('text,time\nHello,queue\n')).toMatch(
      /^the header row \(the first row\) lacks the column "accounts"; it must name text, accounts, time/,
    );
    expect(problemOf('Hello,Company blog,queue\n')).toMatch(/lacks the columns "text", "accounts", "time"/);
    expect(problemOf('text,acounts,accounts,time\n')).toBe(
      'the header row names unknown column "acounts"; the columns are text, accounts, time, link',
    );
    expect(problemOf('text,accounts,time,text\n')).toBe('the header row names the column "text" twice');
  });

  it('unbalanced quotes', () => {
    expect(problemOf('text,accounts,time\n"Hello,Company blog,queue\nNext,Company blog,queue\n')).toMatch(
      /^the file is not valid CSV: a quote \("\) opens a cell that is never closed \(line \d+\)/,
    );
    expect(problemOf('text,accounts,time\n"Hello" world,Company blog,queue\n')).toMatch(
      /^the file is not valid CSV: a quote \("\) in the middle of a cell/,
    );
  });

  it('more than 500 rows (10,000 here), and a file over the size limit', () => {
    const rows = (n: number) => `text,accounts,time\n${'Post,Company blog,queue\n'.repeat(n)}`;
    expect(parsed(rows(500))).toHaveLength(500);
    expect(problemOf(rows(501))).toBe('the file has 501 rows; an import takes at most 500: split it into files of 500 rows or fewer');
    expect(problemOf(rows(10_000))).toMatch(/^the file has 10,000 rows; an import takes at most 500/);
    expect(problemOf(Buffer.alloc(MAX_IMPORT_BYTES + 1, 0x61))).toMatch(/^the file is 1\.0 MB; an import takes files up to 1 MB/);
  });
});

describe('formulaProblem', () => {
  it.each([
    ['=1+1'],
    ['=HYPERLINK("http://x","y")'],
    ['  =cmd'],
    ['\t=1'],
    ['+1+1'],
    ['-2*3'],
    ['-A1*2'],
    ['+$B$2+1'],
    ['@SUM(A1:A9)'],
    ['+HYPERLINK("http://x")'],
    ["-2+3+cmd|' /C calc'!A0"],
    ["@x cmd|' /C calc'!A0"],
  ])('refuses %j', (cell) => {
    expect(formulaProblem(cell)).not.toBeNull();
  });

  it.each([
    ['@alice see you there'],
    ['- item one'],
    ['-3 degrees tonight'],
    ['+5'],
    ['Hello = world'],
    ['@herald.bsky.social thanks!'],
    ['a+1+1'],
    [''],
  ])('lets %j through', (cell) => {
    expect(formulaProblem(cell)).toBeNull();
  });

  it('refuses every cell that starts with "=" after blanks, and nothing that starts with another character than =, +, -, @ or a blank', () => {
    fc.assert(fc.property(fc.string(), fc.stringMatching(/^[ \t\r\n]*$/), (rest, blanks) => formulaProblem(`${blanks}=${rest}`) !== null));
    fc.assert(
      fc.property(
        fc.string({ minLength: 1 }).filter((s) => !/^[\s=+\-@]/.test(s)),
        (s) => formulaProblem(s) === null,
      ),
    );
  });
});

describe('parseImport: properties', () => {
  /** RFC 4180 quoting, as a spreadsheet writes a cell. */
  const quote = (cell: string) => `"${cell.replace(/"/g, '""')}"`;

  it('reads back any text a spreadsheet writes (quoted, with commas, quotes and line breaks)', () => {
    const text = fc
      .string({ unit: 'grapheme', minLength: 1, maxLength: 200 })
      .filter((s) => s.trim() !== '' && formulaProblem(s) === null && !s.includes('\u0000'));
    fc.assert(
      fc.property(fc.array(text, { minLength: 1, maxLength: 20 }), (texts) => {
        const file = `text,accounts,time\r\n${texts.map((t) => `${quote(t)},Company blog,queue`).join('\r\n')}\r\n`;
        const result = parseImport(csv(file), ctx);
        return result.ok && result.rows.length === texts.length && result.rows.every((r, i) => r.post?.text === texts[i].trim());
      }),
    );
  });

  it('never throws on any bytes: a verdict for each row, or one problem for the file', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 400 }), fc.boolean(), (bytes, withHeader) => {
        const file = Buffer.concat([withHeader ? csv('text,accounts,time,link\n') : Buffer.alloc(0), Buffer.from(bytes)]);
        const result = parseImport(file, ctx);
        return result.ok ? result.rows.every((r) => (r.post === null) === r.problems.length > 0) : result.problem.length > 0;
      }),
      { numRuns: 500 },
    );
  });
});
