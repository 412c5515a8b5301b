import fc from 'fast-check';
import { MAX_IMAGE_PIXELS } from '../common/images/image-processing';
import { framesProblem, pixelsProblem, quotaProblem } from './sniff';

describe('pixelsProblem', () => {
  it('accepts exactly the limit and refuses one pixel more, whatever the shape', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 100_000 }), fc.integer({ min: 1, max: 100_000 }), (w, h) => {
        expect(pixelsProblem(w, h) === null).toBe(w * h <= MAX_IMAGE_PIXELS);
      }),
    );
    expect(pixelsProblem(1, MAX_IMAGE_PIXELS)).toBeNull();
    expect(pixelsProblem(1, MAX_IMAGE_PIXELS + 1)).toMatch(
      /^the image is 1 × 36152320 pixels \(36,152,320\); the limit is 36,152,319 pixels/,
    );
  });
});

describe('framesProblem', () => {
  it('names the count and the limit', () => {
    expect(framesProblem(250, 250)).toBeNull();
    expect(framesProblem(1_000, 250)).toBe("the animation has 1,000 frames; the limit is 250 (LinkedIn's limit for GIFs)");
  });
});

describe('quotaProblem', () => {
  const quota = { bytes: 10 * 1024 * 1024, count: 5 };

  it('lets an upload in exactly when both totals stay within the quota', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: quota.bytes }),
        fc.integer({ min: 0, max: 5 }),
        fc.integer({ min: 1, max: 5 * 1024 * 1024 }),
        (bytes, count, adding) => {
          const fits = bytes + adding <= quota.bytes && count + 1 <= quota.count;
          expect(quotaProblem({ bytes, count }, quota, adding) === null).toBe(fits);
        },
      ),
    );
  });

  it('says which limit is reached and which variable raises it', () => {
    expect(quotaProblem({ bytes: 0, count: 5 }, quota, 1)).toMatch(/5 of 5 images stored; .* MEDIA_QUOTA_COUNT$/);
    expect(quotaProblem({ bytes: 9 * 1024 * 1024, count: 1 }, quota, 2 * 1024 * 1024)).toMatch(
      /9\.0 MiB of 10\.0 MiB used, this image needs 2\.0 MiB more; .* MEDIA_QUOTA_BYTES$/,
    );
  });
});
