import fc from 'fast-check';
import { jsonNestsDeeperThan } from './request-limits';

/** The nesting depth JSON.parse sees, measured on the parsed value. */
function depthOf(value: unknown): number {
  if (Array.isArray(value)) return 1 + Math.max(0, ...value.map(depthOf));
  if (value !== null && typeof value === 'object') return 1 + Math.max(0, ...Object.values(value).map(depthOf));
  return 0;
}

describe('jsonNestsDeeperThan', () => {
  it('agrees with the depth of the parsed value, brackets inside strings and escapes included', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), fc.integer({ min: 0, max: 10 }), (value, limit) => {
        const text = Buffer.from(JSON.stringify(value), 'utf8');
        expect(jsonNestsDeeperThan(text, limit)).toBe(depthOf(value) > limit);
      }),
      { numRuns: 500 },
    );
  });

  it('is not fooled by brackets and escaped quotes in strings', () => {
    expect(jsonNestsDeeperThan(Buffer.from('{"a":"[[[[[[\\"{{{{"}'), 1)).toBe(false);
    expect(jsonNestsDeeperThan(Buffer.from('[[["\\\\"]]]'), 2)).toBe(true);
  });

  it('answers for a megabyte of brackets without recursion', () => {
    expect(jsonNestsDeeperThan(Buffer.alloc(1024 * 1024, '['), 64)).toBe(true);
  });
});
