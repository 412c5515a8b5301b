// One writer per table, checked by the build: the rule `herald/one-writer-per-table` reads the SQL
// text of every src/ file (its string and template literals) and refuses a statement that writes a
// table from outside the module architecture.json "tables" names as its owner, naming what to
// call instead. graphile-worker states its ownership in its tables' names (`_private_jobs`,
// written only through its own functions); ours is stated in architecture.json and checked here.
//
// What counts as a write: INSERT INTO t, UPDATE t … SET, DELETE FROM t, MERGE INTO t, TRUNCATE
// [TABLE] t[, u…], COPY t FROM; t schema-qualified or quoted or not, with or without an alias, at
// the top of a statement or inside a CTE (`WITH x AS (UPDATE t …)`). ON CONFLICT … DO UPDATE
// writes the INSERT's own table and FOR [NO KEY] UPDATE locks rows: neither is a second statement.
// A table marked `view` is written by nobody; one marked `private` is read by its owner alone
// too (FROM t, JOIN t). A write of a table the list does not know is refused as well, so a new
// table gets an owner when it gets its first statement.
//
// What it cannot see: SQL assembled from pieces at run time (a table name in a `${…}`), and a
// statement split across string concatenation. Those are for review; every statement in src/
// today is a literal or a template with its table written out.
//
// CommonJS, like the other scripts, so src/table-owners.spec.ts can require it.
const path = require('node:path');

const IDENT = String.raw`(?:"[^"]+"|[A-Za-z_][A-Za-z0-9_$]*)`;
/** A table name, maybe schema-qualified; group `t` is the table. */
const NAME = String.raw`(?:${IDENT}\s*\.\s*)?(?<t>${IDENT})`;
/** Words that may follow a table where an alias would stand. */
const NOT_ALIAS = String.raw`(?!(?:SET|WHERE|USING|RETURNING|VALUES|SELECT|DEFAULT|OVERRIDING|ON|FROM|WITH)\b)`;
const ALIAS = String.raw`(?:\s+(?:AS\s+)?${NOT_ALIAS}${IDENT})?`;
/** What a template's `${…}` becomes in the text scanned. */
const HOLE = '__expr__';

const WRITES = [
  new RegExp(
    String.raw`\bINSERT\s+INTO\s+${NAME}(?:\s+AS\s+${IDENT})?\s*(?:\(|VALUES\b|SELECT\b|DEFAULT\b|OVERRIDING\b|WITH\b|${HOLE})`,
    'gi',
  ),
  new RegExp(String.raw`(?<!\b(?:FOR|KEY|DO)\s+)\bUPDATE\s+(?:ONLY\s+)?${NAME}\s*\*?${ALIAS}\s+SET\b`, 'gi'),
  new RegExp(String.raw`\bDELETE\s+FROM\s+(?:ONLY\s+)?${NAME}\s*\*?${ALIAS}\s*(?:WHERE\b|USING\b|RETURNING\b|;|\)|$|${HOLE})`, 'gi'),
  new RegExp(String.raw`\bMERGE\s+INTO\s+(?:ONLY\s+)?${NAME}`, 'gi'),
  new RegExp(String.raw`\bCOPY\s+${NAME}\s*(?:\([^)]*\)\s*)?FROM\b`, 'gi'),
];
const TRUNCATE = new RegExp(
  String.raw`\bTRUNCATE\s+(?:TABLE\s+)?((?:ONLY\s+)?${IDENT}(?:\s*\.\s*${IDENT})?(?:\s*,\s*(?:ONLY\s+)?${IDENT}(?:\s*\.\s*${IDENT})?)*)`,
  'gi',
);
const READS = new RegExp(String.raw`\b(?:FROM|JOIN)\s+(?:ONLY\s+|LATERAL\s+)?${NAME}`, 'gi');

/** Unquoted names fold to lower case in PostgreSQL; quoted ones are compared as written, lower-cased (no table here differs by case). */
const tableName = (raw) => raw.replace(/^"|"$/g, '').toLowerCase();

/** SQL comments hold prose ("-- update the lease first"), not statements. */
const withoutComments = (text) => text.replace(/\/\*[\s\S]*?\*\//g, ' ').replace(/--[^\n]*/g, ' ');

/** The tables `text` writes and, of `privateTables`, reads: [{ table, kind: 'write' | 'read' }]. */
function sqlTouches(text, privateTables = new Set()) {
  const sql = withoutComments(text);
  const found = [];
  for (const re of WRITES) for (const m of sql.matchAll(re)) found.push({ table: tableName(m.groups.t), kind: 'write' });
  for (const m of sql.matchAll(TRUNCATE)) {
    for (const part of m[1].split(',')) {
      const name = part
        .trim()
        .replace(/^ONLY\s+/i, '')
        .split('.')
        .pop()
        .trim();
      found.push({ table: tableName(name), kind: 'write' });
    }
  }
  for (const m of sql.matchAll(READS)) {
    const table = tableName(m.groups.t);
    const isDelete = /\bDELETE\s+$/i.test(sql.slice(Math.max(0, m.index - 10), m.index));
    if (privateTables.has(table) && !isDelete) found.push({ table, kind: 'read' });
  }
  return found;
}

/** `src/<module>/…` → the module; `src/x.ts` → app; anything else → null (not checked). */
function moduleOf(file, root) {
  const rel = path.relative(root, file).split(path.sep);
  if (rel[0] !== 'src') return null;
  return rel.length === 2 ? 'app' : rel[1];
}

const listed = (calls) => (calls.length <= 1 ? calls.join('') : `${calls.slice(0, -1).join(', ')} or ${calls[calls.length - 1]}`);

/**
 * The ESLint plugin, for `tables` (architecture.json "tables": { [table]: { owner, call[], private?, view? } })
 * and the repository's `root`.
 */
function tableOwnersPlugin(tables, root) {
  const entries = Object.fromEntries(Object.entries(tables).filter(([name]) => name !== '$comment'));
  const privateTables = new Set(Object.keys(entries).filter((t) => entries[t].private));
  const rule = {
    meta: {
      type: 'problem',
      docs: { description: 'A table is written only by its owner module, as architecture.json "tables" lists it' },
      schema: [],
      messages: {
        write:
          'one writer per table: {{file}} writes {{table}}, which src/{{owner}} owns; call {{call}} instead (architecture.json "tables").',
        view: 'one writer per table: {{file}} writes {{table}}, a view nobody writes (src/{{owner}} owns what it shows); call {{call}} instead (architecture.json "tables").',
        read: 'one writer per table: {{file}} reads {{table}}, which only src/{{owner}} reads; call {{call}} instead (architecture.json "tables").',
        unknown:
          'one writer per table: {{file}} writes {{table}}, which architecture.json "tables" does not list: add it there with its owner module, then write it from that module only.',
      },
    },
    create(context) {
      const file = context.filename;
      const module = moduleOf(file, root);
      if (module === null) return {};
      const rel = path.relative(root, file).split(path.sep).join('/');
      const check = (node, text) => {
        const seen = new Set();
        for (const { table, kind } of sqlTouches(text, privateTables)) {
          const key = `${kind}:${table}`;
          if (seen.has(key)) continue;
          seen.add(key);
          const entry = entries[table];
          if (!entry) {
            if (kind === 'write') context.report({ node, messageId: 'unknown', data: { file: rel, table } });
            continue;
          }
          const data = { file: rel, table, owner: entry.owner, call: listed(entry.call) };
          if (kind === 'write' && entry.view) context.report({ node, messageId: 'view', data });
          else if (entry.owner !== module) context.report({ node, messageId: kind, data });
        }
      };
      return {
        Literal(node) {
          if (typeof node.value === 'string') check(node, node.value);
        },
        TemplateLiteral(node) {
          check(node, node.quasis.map((q) => q.value.cooked ?? q.value.raw).join(` ${HOLE} `));
        },
      };
    },
  };
  return { meta: { name: 'herald' }, rules: { 'one-writer-per-table': rule } };
}

module.exports = { sqlTouches, moduleOf, tableOwnersPlugin };
