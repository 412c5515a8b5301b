import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { formatUtc } from './page-input';

/**
 * Where the page's templates and static files live. They are not TypeScript, so `tsc` does not
 * copy them to dist/: the compiled code (dist/src/settings) reads them from the source tree
 * (src/settings), which every install has. No build step, no bundler.
 */
export function settingsDir(): string {
  const candidates = [__dirname, path.resolve(__dirname, '../../../src/settings')];
  const found = candidates.find((dir) => fs.existsSync(path.join(dir, 'views', 'layout.hbs')));
  if (!found) throw new Error(`the settings page templates were not found (looked in ${candidates.join(', ')})`);
  return found;
}

/** A static file of the page, read once at start, with a content hash for its URL. */
export interface Asset {
  name: string;
  type: string;
  body: Buffer;
  /** The URL the templates link to: changes when the file does, so it can be cached for a year. */
  url: string;
}

const ASSET_TYPES: Record<string, string> = {
  'settings.css': 'text/css; charset=utf-8',
  'settings.js': 'text/javascript; charset=utf-8',
};

export function loadAssets(dir: string): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  for (const [name, type] of Object.entries(ASSET_TYPES)) {
    const body = fs.readFileSync(path.join(dir, 'assets', name));
    const hash = createHash('sha256').update(body).digest('hex').slice(0, 12);
    assets.set(name, { name, type, body, url: `/settings/assets/${hash}/${name}` });
  }
  return assets;
}

/** Handlebars helpers of the templates. Every one escapes what it prints. */
export interface HelperHost {
  registerHelper(name: string, fn: (...args: never[]) => unknown): void;
  registerPartial(name: string, template: string): void;
  handlebars: { SafeString: new (s: string) => unknown; Utils: { escapeExpression(s: unknown): string } };
}

export function registerHelpers(hbs: HelperHost, dir: string): void {
  const escape = (v: unknown) => hbs.handlebars.Utils.escapeExpression(v);
  // <time> with the UTC text; the page's script rewrites it in the reader's own time zone.
  hbs.registerHelper('time', (iso: unknown) => {
    if (typeof iso !== 'string' && !(iso instanceof Date)) return '';
    const d = iso instanceof Date ? iso : new Date(iso);
    if (Number.isNaN(d.getTime())) return '';
    return new hbs.handlebars.SafeString(`<time datetime="${escape(d.toISOString())}" data-local>${escape(formatUtc(d))}</time>`);
  });
  hbs.registerHelper('eq', (a: unknown, b: unknown) => a === b);
  hbs.registerHelper('and', (a: unknown, b: unknown) => Boolean(a) && Boolean(b));
  // (concat "a" b "c"): the last argument is Handlebars' options object.
  hbs.registerHelper('concat', (...args: unknown[]) => args.slice(0, -1).map(String).join(''));
  hbs.registerHelper('plural', (n: unknown, word: unknown) => `${String(n)} ${String(word)}${n === 1 ? '' : 's'}`);
  hbs.registerHelper('json', (v: unknown) => JSON.stringify(v, null, 2));
  const partials = path.join(dir, 'views', 'partials');
  for (const file of fs.readdirSync(partials)) {
    if (file.endsWith('.hbs')) hbs.registerPartial(file.slice(0, -4), fs.readFileSync(path.join(partials, file), 'utf8'));
  }
}
