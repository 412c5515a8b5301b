import { derivePostStatus, JobStatusInput, POST_STATUS_SQL } from './post-status';

const j = (status: JobStatusInput['status'], attemptCount = 0): JobStatusInput => ({ status, attemptCount });

describe('derivePostStatus', () => {
  it.each<[string, JobStatusInput[], string]>([
    ['all cancelled', [j('cancelled'), j('cancelled')], 'cancelled'],
    ['all succeeded', [j('succeeded', 1), j('succeeded', 3)], 'published'],
    ['succeeded apart from cancelled ones', [j('succeeded', 1), j('cancelled')], 'published'],
    ['all dead or discarded', [j('dead', 16), j('discarded', 1)], 'failed'],
    ['some succeeded, the rest dead', [j('succeeded', 1), j('dead', 1)], 'partially_failed'],
    ['nothing started', [j('scheduled'), j('scheduled')], 'scheduled'],
    ['paused before any attempt', [j('paused')], 'scheduled'],
    ['one in flight', [j('in_progress', 1), j('scheduled')], 'publishing'],
    ['waiting for a retry', [j('scheduled', 2)], 'publishing'],
    ['paused after an attempt', [j('paused', 1), j('succeeded', 1)], 'publishing'],
    ['one succeeded, one still waiting', [j('succeeded', 1), j('scheduled')], 'publishing'],
    ['one dead, one still retrying', [j('dead', 1), j('scheduled', 1)], 'publishing'],
  ])('%s → %s', (_, jobs, expected) => {
    expect(derivePostStatus(jobs)).toBe(expected);
  });
});

describe('the one derivation of a post status', () => {
  const STATUSES: JobStatusInput['status'][] = ['scheduled', 'in_progress', 'succeeded', 'paused', 'dead', 'cancelled', 'discarded'];

  it("says what docs/api.md's sentences say, for every post of up to three jobs", () => {
    // docs/api.md "Concepts", sentence by sentence.
    const documented = (jobs: JobStatusInput[]): string => {
      const live = jobs.filter((x) => x.status !== 'cancelled');
      if (live.length === 0) return 'cancelled';
      if (live.every((x) => x.status === 'succeeded')) return 'published';
      if (live.every((x) => x.status === 'dead' || x.status === 'discarded')) return 'failed';
      if (live.some((x) => x.status === 'succeeded') && live.every((x) => ['succeeded', 'dead', 'discarded'].includes(x.status)))
        return 'partially_failed';
      if (live.every((x) => x.attemptCount === 0 && (x.status === 'scheduled' || x.status === 'paused'))) return 'scheduled';
      return 'publishing';
    };
    const one = STATUSES.flatMap((s) => [j(s, 0), j(s, 1)]);
    const posts: JobStatusInput[][] = [[]];
    for (let size = 0; size < 3; size++) for (const p of posts.filter((x) => x.length === size)) for (const x of one) posts.push([...p, x]);
    expect(posts.length).toBe(1 + 14 + 14 ** 2 + 14 ** 3);
    for (const p of posts) expect({ jobs: p, status: derivePostStatus(p) }).toEqual({ jobs: p, status: documented(p) });
  });

  it('runs in SQL from the same rules, as an aggregate over the post’s jobs', () => {
    const live = "count(*) FILTER (WHERE j.status IN ('scheduled', 'in_progress', 'succeeded', 'paused', 'dead', 'discarded'))";
    const succeeded = "count(*) FILTER (WHERE j.status IN ('succeeded'))";
    const failed = "count(*) FILTER (WHERE j.status IN ('dead', 'discarded'))";
    const unstarted = "count(*) FILTER (WHERE j.status IN ('scheduled', 'paused') AND j.attempt_count = 0)";
    expect(POST_STATUS_SQL).toBe(
      `CASE WHEN ${live} = 0 THEN 'cancelled' WHEN ${succeeded} = ${live} THEN 'published' WHEN ${failed} = ${live} THEN 'failed'` +
        ` WHEN ${succeeded} > 0 AND ${succeeded} + ${failed} = ${live} THEN 'partially_failed'` +
        ` WHEN ${unstarted} = ${live} THEN 'scheduled' ELSE 'publishing' END`,
    );
  });
});
