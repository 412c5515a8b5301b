import { derivePostStatus, JobStatusInput } from './post-status';

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
