import fc from 'fast-check';
import { decodeTid, encodeTid, isValidTid, tidForJob, tidForThreadPart } from './tid';

describe('Bluesky record keys (TIDs)', () => {
  it('encodes like the atproto reference (timestamp in 11 chars, clock id in 2)', () => {
    // From @atproto/common-web's TID: s32encode(timestamp).padStart(11, '2') + s32encode(clockid).padStart(2, '2').
    expect(encodeTid(0, 0)).toBe('2222222222222');
    expect(encodeTid(1, 1)).toBe('2222222222323');
    expect(encodeTid(2 ** 53 - 1, 1023)).toBe('bzzzzzzzzzzzz');
  });

  it('round-trips timestamp and clock id', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 53 - 1 }), fc.integer({ min: 0, max: 1023 }), (micros, clockId) => {
        const tid = encodeTid(micros, clockId);
        expect(isValidTid(tid)).toBe(true);
        expect(decodeTid(tid)).toEqual({ micros, clockId });
      }),
    );
  });

  it('gives every job a valid TID within the second it was scheduled for', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 255 }),
        fc.date({ min: new Date('2000-01-01'), max: new Date('2200-01-01'), noInvalidDate: true }),
        (key, at) => {
          const tid = tidForJob(key, at.toISOString());
          expect(tid).toHaveLength(13);
          expect(isValidTid(tid)).toBe(true);
          const { micros } = decodeTid(tid);
          expect(Math.floor(micros / 1_000_000)).toBe(Math.floor(at.getTime() / 1000));
        },
      ),
    );
  });

  it('is the same for the same job and different for different idempotency keys', () => {
    const at = '2026-11-29T12:00:00.000Z';
    expect(tidForJob('job-key-1', at)).toBe(tidForJob('job-key-1', at));
    const keys = Array.from({ length: 5000 }, (_, i) => tidForJob(`key-${i}`, at));
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('still gives a stable, valid key when the scheduled time cannot be read', () => {
    expect(isValidTid(tidForJob('k', 'not a date'))).toBe(true);
    expect(tidForJob('k', 'not a date')).toBe(tidForJob('k', 'not a date'));
  });
});

describe('thread part record keys', () => {
  const at = '2026-12-01T09:00:00.000Z';

  it('are fixed by the job and the part: the same on every attempt, different per part and per job', () => {
    expect(tidForThreadPart('job-a', 2, at)).toBe(tidForThreadPart('job-a', 2, at));
    const keys = Array.from({ length: 26 }, (_, i) => tidForThreadPart('job-a', i, at));
    expect(new Set(keys).size).toBe(26);
    expect(tidForThreadPart('job-b', 0, at)).not.toBe(keys[0]);
  });

  it('are valid TIDs in the scheduled second that sort in the order of the parts (property)', () => {
    fc.assert(
      fc.property(fc.uuid(), fc.date({ min: new Date('2000-01-01'), max: new Date('2200-01-01'), noInvalidDate: true }), (jobId, when) => {
        const keys = Array.from({ length: 26 }, (_, i) => tidForThreadPart(jobId, i, when.toISOString()));
        for (const k of keys) {
          expect(isValidTid(k)).toBe(true);
          expect(Math.floor(decodeTid(k).micros / 1_000_000)).toBe(Math.floor(when.getTime() / 1000));
        }
        expect([...keys].sort()).toEqual(keys);
      }),
    );
  });

  it('refuses an index outside a thread', () => {
    expect(() => tidForThreadPart('job-a', 26, at)).toThrow(RangeError);
    expect(() => tidForThreadPart('job-a', -1, at)).toThrow(RangeError);
  });
});
