import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * The configuration table of docs/operations.md (the only one: the README links to it) names
 * every variable config.ts reads, and nothing it does not read: a new variable is documented
 * there or this fails.
 */
const ROOT = path.resolve(__dirname, '../..');
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');

function variablesRead(): string[] {
  const source = read('src/config/config.ts');
  return [...new Set([...source.matchAll(/read[A-Za-z]*\(env, '([A-Z][A-Z0-9_]+)'/g)].map((m) => m[1]))].sort();
}

/** Variables named in the first column of the table that starts with `| variable`. */
function variablesDocumented(file: string): string[] {
  const lines = read(file).split('\n');
  const start = lines.findIndex((l) => /^\| variable /.test(l));
  const names: string[] = [];
  for (let i = start + 2; i < lines.length && lines[i].startsWith('|'); i++) {
    names.push(...[...lines[i].split('|')[1].matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]));
  }
  return [...new Set(names)].sort();
}

describe('configuration documentation', () => {
  it('reads at least the variables everyone sets', () => {
    expect(variablesRead()).toEqual(expect.arrayContaining(['DATABASE_URL', 'PORT', 'HERALD_SECRET_KEY', 'SMTP_URL']));
  });

  it('docs/operations.md lists every variable config.ts reads, and no other', () => {
    expect(variablesDocumented('docs/operations.md')).toEqual(variablesRead());
  });
});
