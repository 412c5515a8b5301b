import * as fs from 'node:fs';
import * as path from 'node:path';
import architecture from '../architecture.json';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { readmeWithMap } = require('../scripts/architecture-map.js') as {
  readmeWithMap: (readme: string, modules: Record<string, { holds: string; uses: string[] }>) => string;
};

/**
 * architecture.json is the module map `npm run lint` enforces (eslint.config.mjs). These check
 * the map itself: it names every folder of src/, names nothing else, has no cycle (so no two
 * folders can import each other, however indirectly), and the README shows it as it is.
 */
const ROOT = path.resolve(__dirname, '..');
const modules = architecture.modules as Record<string, { holds: string; uses: string[] }>;
const folders = Object.keys(modules).filter((m) => m !== 'app');
const tables = Object.fromEntries(Object.entries(architecture.tables).filter(([name]) => name !== '$comment')) as Record<
  string,
  { owner: string; call: string[]; private?: boolean; view?: boolean; alsoWrittenBy?: string }
>;

/**
 * The tables and views migrations/ leaves, from their SQL in order (each migration's down()
 * left out): CREATE TABLE, ALTER TABLE … RENAME TO, DROP TABLE, CREATE VIEW, DROP VIEW.
 */
function migratedRelations(): { tables: Set<string>; views: Set<string> } {
  const tablesNow = new Set<string>();
  const viewsNow = new Set<string>();
  const files = fs
    .readdirSync(path.join(ROOT, 'migrations'))
    .filter((f) => /^\d+-.*\.ts$/.test(f))
    .sort();
  const events =
    /CREATE TABLE (?:IF NOT EXISTS )?(\w+)|ALTER TABLE (?:IF EXISTS )?(\w+) RENAME TO (\w+)|DROP TABLE (?:IF EXISTS )?(\w+)|CREATE (?:OR REPLACE )?VIEW (\w+)|DROP VIEW (?:IF EXISTS )?(\w+)/g;
  for (const f of files) {
    const text = fs.readFileSync(path.join(ROOT, 'migrations', f), 'utf8').replace(/async down\([\s\S]*?\n {2}\}\n/, '');
    for (const m of text.matchAll(events)) {
      if (m[1]) tablesNow.add(m[1]);
      if (m[2]) {
        tablesNow.delete(m[2]);
        tablesNow.add(m[3]);
      }
      if (m[4]) tablesNow.delete(m[4]);
      if (m[5]) viewsNow.add(m[5]);
      if (m[6]) viewsNow.delete(m[6]);
    }
  }
  return { tables: tablesNow, views: viewsNow };
}

/** Every file under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((d) => (d.isDirectory() ? filesUnder(path.join(dir, d.name)) : [path.join(dir, d.name)]));
}

describe('the module map (architecture.json)', () => {
  it('keeps the edges it says never to add ("never"): the page runs no queue, holds no SQL, speaks to no platform', () => {
    const never = Object.entries(architecture.never).filter(([m]) => m !== '$comment') as [string, string[]][];
    expect(never.length).toBeGreaterThan(0);
    const broken = never.flatMap(([m, targets]) => targets.filter((x) => modules[m].uses.includes(x)).map((x) => `${m} → ${x}`));
    expect(broken).toEqual([]);
  });

  it('lists every folder of src/, and only those', () => {
    const onDisk = fs
      .readdirSync(path.join(ROOT, 'src'), { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name)
      .sort();
    expect([...folders].sort()).toEqual(onDisk);
  });

  it('lets a module use only modules that exist, never itself', () => {
    for (const [name, m] of Object.entries(modules)) {
      for (const u of m.uses) {
        if (u === '*') continue;
        expect({ module: name, uses: u, known: folders.includes(u) && u !== name }).toEqual({ module: name, uses: u, known: true });
      }
    }
  });

  it('has no cycle: every module can be placed below all of its users', () => {
    const order: string[] = [];
    const state = new Map<string, 'visiting' | 'done'>();
    const visit = (m: string, trail: string[]): void => {
      if (state.get(m) === 'done') return;
      if (state.get(m) === 'visiting') throw new Error(`import cycle: ${[...trail, m].join(' → ')}`);
      state.set(m, 'visiting');
      for (const u of modules[m].uses) visit(u, [...trail, m]);
      state.set(m, 'done');
      order.push(m);
    };
    for (const m of folders) visit(m, []);
    expect(order).toHaveLength(folders.length);
  });

  it('is what the README shows (npm run docs:architecture draws it)', () => {
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    expect(readme).toBe(readmeWithMap(readme, modules));
  });
});

describe('the owners of the tables (architecture.json "tables")', () => {
  it('lists every table and view migrations/ leaves, and only those', () => {
    const migrated = migratedRelations();
    expect(migrated.tables.size).toBeGreaterThan(20);
    expect(Object.keys(tables).sort()).toEqual([...migrated.tables, ...migrated.views].sort());
    expect(
      Object.keys(tables)
        .filter((t) => tables[t].view)
        .sort(),
    ).toEqual([...migrated.views].sort());
  });

  it('gives each table one owner, a module of the map, and classes of that module to call', () => {
    for (const [table, t] of Object.entries(tables)) {
      expect({ table, owner: t.owner, known: folders.includes(t.owner) }).toEqual({ table, owner: t.owner, known: true });
      expect({ table, call: t.call.length > 0 }).toEqual({ table, call: true });
      const source = filesUnder(path.join(ROOT, 'src', t.owner))
        .filter((f) => f.endsWith('.ts') && !f.endsWith('.spec.ts'))
        .map((f) => fs.readFileSync(f, 'utf8'))
        .join('\n');
      for (const name of t.call)
        expect({ table, call: name, exported: new RegExp(`export class ${name}\\b`).test(source) }).toEqual({
          table,
          call: name,
          exported: true,
        });
    }
  });
});
