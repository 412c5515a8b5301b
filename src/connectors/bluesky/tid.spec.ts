import fc from 'fast-check';
import { decodeTid, encodeTid, isValidTid, tidForJob } from './tid';

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
