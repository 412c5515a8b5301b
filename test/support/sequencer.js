/**
 * The order jest starts test files in: its own (files that failed last time first, then the
 * longest by the durations it kept from earlier runs, then the largest files), except that the
 * files below always start first.
 *
 * Their tests wait for a real minute: a post due at a whole minute of the wall clock (the story's
 * queue slot, the composer's scheduled post). Each takes 1.5 to 3 minutes whatever else runs,
 * mostly waiting. On a fresh checkout (CI's) jest knows no durations and orders by file size, which
 * put these small files near the end of the run, where their wait became its tail; started first,
 * they wait while the other workers run everything else.
 */
const Sequencer = require('@jest/test-sequencer').default;

const WAIT_FOR_A_MINUTE = ['test/story-review.test.ts', 'test/settings-compose.test.ts'];

class HeraldSequencer extends Sequencer {
  sort(tests) {
    const sorted = super.sort(tests);
    const waits = (test) => WAIT_FOR_A_MINUTE.some((file) => test.path.endsWith(file));
    return [...sorted.filter(waits), ...sorted.filter((test) => !waits(test))];
  }
}

module.exports = HeraldSequencer;
