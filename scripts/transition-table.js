// docs/delivery.md's state tables, drawn from the code's: the job lifecycle
// (src/queue/job-lifecycle.ts TRANSITIONS) and an account's status and circuit
// (src/account-state/account-state.ts STATUS_TRANSITIONS, CIRCUIT_TRANSITIONS).
// `node scripts/transition-table.js --write` (npm run docs:transitions) rewrites the doc between
// its markers; src/transition-tables.spec.ts fails when the doc and the code disagree.
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const DOC = path.join(ROOT, 'docs', 'delivery.md');

/** The tables the doc shows, each between its own markers. */
const TABLES = {
  jobs: { file: 'src/queue/job-lifecycle.ts', export: 'TRANSITIONS' },
  'account-status': { file: 'src/account-state/account-state.ts', export: 'STATUS_TRANSITIONS' },
  circuit: { file: 'src/account-state/account-state.ts', export: 'CIRCUIT_TRANSITIONS' },
};

const start = (name) => `<!-- transitions:${name}:start (drawn from ${TABLES[name].file} by \`npm run docs:transitions\`) -->`;
const end = (name) => `<!-- transitions:${name}:end -->`;

/**
 * One row per (operation, to, why): the states a move starts from are listed together when
 * they share its target and reason (recordLate from six states); a job not written yet is `(new)`.
 */
function renderTable(name, transitions) {
  const rows = [];
  for (const t of transitions) {
    const from = t.from === null ? '(new)' : `\`${t.from}\``;
    const same = rows.find((r) => r.op === t.op && r.to === t.to && r.why === t.why);
    if (same) same.from.push(from);
    else rows.push({ op: t.op, from: [from], to: t.to, why: t.why });
  }
  const cells = [
    ['operation', 'from', 'to', 'why'],
    ...rows.map((r) => [r.op, r.from.join(', '), `\`${r.to}\``, r.why.replace(/\|/g, '\\|')]),
  ];
  const widths = cells[0].map((_, i) => Math.max(...cells.map((c) => c[i].length)));
  const line = (c) => `| ${c.map((x, i) => x.padEnd(widths[i])).join(' | ')} |`;
  // Prettier would realign the table, and the doc would no longer be what this draws.
  return [
    start(name),
    '<!-- prettier-ignore-start -->',
    '',
    line(cells[0]),
    `| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`,
    ...cells.slice(1).map(line),
    '',
    '<!-- prettier-ignore-end -->',
    end(name),
  ].join('\n');
}

/** `doc` with every table between its markers drawn from `tables` ({ jobs, 'account-status', circuit }). */
function docWithTables(doc, tables) {
  let out = doc;
  for (const name of Object.keys(TABLES)) {
    const a = out.indexOf(`<!-- transitions:${name}:start`);
    const b = out.indexOf(end(name));
    if (a < 0 || b < 0) throw new Error(`docs/delivery.md has no markers for the ${name} table (${start(name)} … ${end(name)})`);
    out = out.slice(0, a) + renderTable(name, tables[name]) + out.slice(b + end(name).length);
  }
  return out;
}

/**
 * The tables as the code defines them, without a build: each file is transpiled on its own
 * (TypeScript's transpileModule, type imports dropped) and run. The table files import nothing
 * at run time; one that did would stop this with the name of the import.
 */
function loadTables() {
  const ts = require('typescript');
  const modules = new Map();
  const load = (file) => {
    if (!modules.has(file)) {
      const source = fs.readFileSync(path.join(ROOT, file), 'utf8');
      const { outputText } = ts.transpileModule(source, {
        compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 },
      });
      const mod = { exports: {} };
      const requireNothing = (id) => {
        throw new Error(`${file} imports ${id} at run time: its transition table must stand alone`);
      };
      new Function('module', 'exports', 'require', outputText)(mod, mod.exports, requireNothing);
      modules.set(file, mod.exports);
    }
    return modules.get(file);
  };
  return Object.fromEntries(Object.entries(TABLES).map(([name, t]) => [name, load(t.file)[t.export]]));
}

module.exports = { renderTable, docWithTables, loadTables, TABLES };

if (require.main === module && process.argv.includes('--write')) {
  fs.writeFileSync(DOC, docWithTables(fs.readFileSync(DOC, 'utf8'), loadTables()));
}
