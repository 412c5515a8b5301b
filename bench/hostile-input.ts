import { parseOpenGraph } from '../src/connectors/bluesky/open-graph';
import { redactSecrets } from '../src/connectors/outcome-kit';

/**
 * The speed of the two parsers that read input a hostile party writes, on the inputs built to
 * make them slow: a link's page (parseOpenGraph, 2 MB at most) and a receiver's answer that
 * echoes a secret (redactSecrets, a 4 KB token against a 64 KB body). Their unit tests check what
 * they return on these inputs; how long that takes is measured here, with a clock the tests must
 * not depend on (a loaded machine makes any wall-clock bound fail).
 *
 * Targets: linear work, i.e. milliseconds per page; the regular expressions parseOpenGraph
 * replaced took minutes on several of these pages, and the old redaction loop ~8 million
 * comparisons per token form.
 */

const SIZE = 2 * 1024 * 1024;
const fill = (unit: string, prefix = '', suffix = ''): string =>
  prefix + unit.repeat(Math.floor((SIZE - prefix.length - suffix.length) / unit.length)) + suffix;

/** The pages of open-graph.spec.ts's "pages built to hurt". */
export const HURTFUL_PAGES: [string, string][] = [
  ['a <meta that never closes, repeated', fill('<meta ')],
  ['one megabyte-long attribute name in a closed tag', fill('a', '<meta ', '>')],
  ['a quoted value that never ends', fill('x', '<meta content="')],
  ['<title> that never closes, repeated', fill('<title>')],
  ['unclosed comments', fill('<!--')],
  ['a million open tags and mismatched closes', fill('<div></span>')],
  ['attributes without values', fill(' a', '<meta', '>')],
  ['= signs everywhere', fill('a=', '<meta x=', '>')],
  ['entities without semicolons', fill('&amp', '<title>', '</title>')],
  ['a <script> that never ends', fill('<meta content="x">', '<script>')],
];

function timeMs(work: () => unknown): number {
  const started = process.hrtime.bigint();
  work();
  return Number(process.hrtime.bigint() - started) / 1e6;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

export interface HostileInputFigure {
  what: string;
  /** median of `runs`, ms */
  ms: number;
  maxMs: number;
}

/** Median and worst time of each parser on each hostile input, over `runs` runs. */
export function hostileInputFigures(runs: number): HostileInputFigure[] {
  const token = `AQV${'x'.repeat(4093)}`;
  const forms = [token, token.replace('AQV', 'AQX')];
  const body = 'x'.repeat(64 * 1024);
  const cases: [string, () => unknown][] = [
    ...HURTFUL_PAGES.map(([name, html]): [string, () => unknown] => [
      `parseOpenGraph, 2 MB page: ${name}`,
      () => parseOpenGraph(html, 'https://e.com/'),
    ]),
    ['redactSecrets, 4 KB token, 64 KB body without it', () => redactSecrets(body, forms)],
    ['redactSecrets, 4 KB token cut at the end of a 64 KB body', () => redactSecrets(`${body}${token.slice(0, 4095)}`, forms)],
  ];
  return cases.map(([what, work]) => {
    const times = Array.from({ length: runs }, () => timeMs(work));
    return { what, ms: median(times), maxMs: Math.max(...times) };
  });
}
