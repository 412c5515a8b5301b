// The README's module map, drawn from architecture.json (the file `npm run lint` enforces).
// `node scripts/architecture-map.js --write` rewrites the README between its markers;
// src/architecture.spec.ts fails when the README and architecture.json disagree.
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const START = '<!-- architecture:start (drawn from architecture.json by `npm run docs:architecture`) -->';
const END = '<!-- architecture:end -->';

function renderMap(modules) {
  const rows = Object.entries(modules)
    .filter(([name]) => name !== 'app')
    .map(([name, m]) => `| \`${name}/\` | ${m.holds} | ${m.uses.length ? m.uses.map((u) => `\`${u}\``).join(', ') : '—'} |`);
  // Prettier would realign the table, and the README would no longer be what this draws.
  return [
    START,
    '<!-- prettier-ignore-start -->',
    '',
    '| module | what it holds | may import |',
    '| --- | --- | --- |',
    ...rows,
    '',
    '<!-- prettier-ignore-end -->',
    END,
  ].join('\n');
}

function readmeWithMap(readme, modules) {
  const a = readme.indexOf(START);
  const b = readme.indexOf(END);
  if (a < 0 || b < 0) throw new Error(`README.md has no architecture markers (${START} … ${END})`);
  return readme.slice(0, a) + renderMap(modules) + readme.slice(b + END.length);
}

function load() {
  return JSON.parse(fs.readFileSync(path.join(ROOT, 'architecture.json'), 'utf8')).modules;
}

module.exports = { renderMap, readmeWithMap, START, END };

if (require.main === module && process.argv.includes('--write')) {
  const file = path.join(ROOT, 'README.md');
  fs.writeFileSync(file, readmeWithMap(fs.readFileSync(file, 'utf8'), load()));
}
