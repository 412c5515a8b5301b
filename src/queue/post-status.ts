import type { JobStatus } from './job-lifecycle';

/**
 * A post's status as its jobs tell it (docs/api.md "Concepts"): THE derivation, one table of
 * rules run in two places that must agree, TypeScript (derivePostStatus: the intake's answer,
 * computed before the post is written, and every post's view) and SQL (POST_STATUS_SQL: the
 * list's filter, which must say it for every post of a page before the page is cut). Both are
 * built from RULES and COUNTS below, as the job transition table builds its statements' guards;
 * there is no second copy to keep in step. `draft` (a post kept without a time, which has no
 * jobs yet) is the posts module's to say, not this table's.
 */
export type PostStatusFromJobs = 'scheduled' | 'publishing' | 'published' | 'partially_failed' | 'failed' | 'cancelled';

export interface JobStatusInput {
  status: JobStatus;
  attemptCount: number;
}

/** The numbers of a post's jobs that the rules compare: the jobs whose status is one of `statuses` (and, `unattempted`, never attempted). */
const COUNTS = {
  /** every job but the cancelled ones */
  live: { statuses: ['scheduled', 'in_progress', 'succeeded', 'paused', 'dead', 'discarded'] },
  succeeded: { statuses: ['succeeded'] },
  failed: { statuses: ['dead', 'discarded'] },
  /** waiting for a first attempt (a job paused before it ever ran too) */
  unstarted: { statuses: ['scheduled', 'paused'], unattempted: true },
} as const satisfies Record<string, { statuses: readonly JobStatus[]; unattempted?: true }>;
type Count = keyof typeof COUNTS;

/** `sum of counts` `=` or `>` `a count, or 0`. */
type Term = readonly [readonly Count[], '=' | '>', Count | 0];

/** In order, the first that holds wins; none: `publishing` (a paused job that ran keeps its post publishing). */
export const RULES: readonly { status: Exclude<PostStatusFromJobs, 'publishing'>; when: readonly Term[] }[] = [
  { status: 'cancelled', when: [[['live'], '=', 0]] },
  { status: 'published', when: [[['succeeded'], '=', 'live']] },
  { status: 'failed', when: [[['failed'], '=', 'live']] },
  {
    status: 'partially_failed',
    when: [
      [['succeeded'], '>', 0],
      [['succeeded', 'failed'], '=', 'live'],
    ],
  },
  { status: 'scheduled', when: [[['unstarted'], '=', 'live']] },
];
const OTHERWISE = 'publishing' satisfies PostStatusFromJobs;

export function derivePostStatus(jobs: readonly JobStatusInput[]): PostStatusFromJobs {
  const n = (c: Count) =>
    jobs.filter((j) => {
      const def: { statuses: readonly JobStatus[]; unattempted?: true } = COUNTS[c];
      return def.statuses.includes(j.status) && (!def.unattempted || j.attemptCount === 0);
    }).length;
  const holds = ([sum, op, than]: Term) => {
    const left = sum.reduce((total, c) => total + n(c), 0);
    const right = than === 0 ? 0 : n(than);
    return op === '=' ? left === right : left > right;
  };
  return RULES.find((r) => r.when.every(holds))?.status ?? OTHERWISE;
}

/** `count(*) FILTER (WHERE …)` of a count over the post's jobs `j` (the view `jobs`). */
function countSql(c: Count): string {
  const def: { statuses: readonly JobStatus[]; unattempted?: true } = COUNTS[c];
  const statuses = `j.status IN (${def.statuses.map((s) => `'${s}'`).join(', ')})`;
  return `count(*) FILTER (WHERE ${def.unattempted ? `${statuses} AND j.attempt_count = 0` : statuses})`;
}

function termSql([sum, op, than]: Term): string {
  return `${sum.map(countSql).join(' + ')} ${op} ${than === 0 ? '0' : countSql(than)}`;
}

/** The derivation as an aggregate over one post's jobs `j` (read-post-status.ts runs it). */
export const POST_STATUS_SQL = `CASE ${RULES.map((r) => `WHEN ${r.when.map(termSql).join(' AND ')} THEN '${r.status}'`).join(' ')} ELSE '${OTHERWISE}' END`;
