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

describe('the module map (architecture.json)', () => {
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
