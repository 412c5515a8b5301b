import sharp from 'sharp';
import fc from 'fast-check';
import { pngBomb } from '../../../test/support/png-bomb';
import { fitUnder, ImageCodec, ImageFitError, longestSideFor, nextLongestSide, previewJpeg, sharpCodec } from './image-processing';

/** Deterministic noise: compresses badly, so the encoder has to work for its bytes. */
function noise(width: number, height: number, channels: 3 | 4): Buffer {
  const raw = Buffer.alloc(width * height * channels);
  let seed = 12345;
  for (let i = 0; i < raw.length; i++) {
    seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff;
    raw[i] = seed >> 16;
  }
  if (channels === 4) for (let i = 3; i < raw.length; i += 4) raw[i] = i % 7 === 0 ? 0 : 255;
  return raw;
}

async function png(width: number, height: number, channels: 3 | 4 = 3): Promise<Buffer> {
  return sharp(noise(width, height, channels), { raw: { width, height, channels } })
    .png()
    .toBuffer();
}

describe('fitUnder', () => {
  it('returns an image that already fits unchanged, with its pixel size', async () => {
    const small = await png(40, 30);
    const fitted = await fitUnder(small, 'image/png', 1_000_000);
    expect(fitted.bytes).toBe(small);
    expect(fitted).toMatchObject({ mimeType: 'image/png', width: 40, height: 30 });
  });

  it('re-encodes an opaque image over the limit as a JPEG under it', async () => {
    const big = await png(1200, 900);
    expect(big.length).toBeGreaterThan(1_000_000);
    const fitted = await fitUnder(big, 'image/png', 1_000_000);
    expect(fitted.bytes.length).toBeLessThanOrEqual(1_000_000);
    expect(fitted.mimeType).toBe('image/jpeg');
    const meta = await sharp(fitted.bytes).metadata();
    expect(meta.format).toBe('jpeg');
    expect([meta.width, meta.height]).toEqual([fitted.width, fitted.height]);
    expect(fitted.width / fitted.height).toBeCloseTo(1200 / 900, 1);
  });

  it('keeps transparency as WebP and downscales until it fits a tight limit', async () => {
    const big = await png(800, 800, 4);
    const fitted = await fitUnder(big, 'image/png', 60_000);
    expect(fitted.bytes.length).toBeLessThanOrEqual(60_000);
    expect(fitted.mimeType).toBe('image/webp');
    expect(fitted.width).toBeLessThan(800);
    expect((await sharp(fitted.bytes).metadata()).hasAlpha).toBe(true);
  });

  it('drops EXIF metadata and applies the orientation when re-encoding', async () => {
    const rotated = await sharp(noise(600, 300, 3), { raw: { width: 600, height: 300, channels: 3 } })
      .jpeg({ quality: 100 })
      .withMetadata({ orientation: 6 })
      .toBuffer();
    const before = await fitUnder(rotated, 'image/jpeg', rotated.length);
    expect([before.width, before.height]).toEqual([300, 600]);
    const fitted = await fitUnder(rotated, 'image/jpeg', Math.floor(rotated.length / 2));
    const meta = await sharp(fitted.bytes).metadata();
    expect(meta.orientation).toBeUndefined();
    expect(meta.exif).toBeUndefined();
    expect([meta.width, meta.height]).toEqual([300, 600]);
  });

  it('refuses bytes that are not an image', async () => {
    await expect(fitUnder(Buffer.from('not an image at all'), 'image/png', 10)).rejects.toBeInstanceOf(ImageFitError);
  });

  it('gives up rather than shrinking an image to a thumbnail', async () => {
    const big = await png(300, 300);
    await expect(fitUnder(big, 'image/png', 100)).rejects.toThrow(/cannot be made smaller than 100 bytes/);
  });
});

/** The production codec, with its calls counted. */
function countingCodec() {
  const calls = { decode: 0, encode: 0 };
  const codec: ImageCodec = {
    decode: (...args) => {
      calls.decode += 1;
      return sharpCodec.decode(...args);
    },
    encode: (...args) => {
      calls.encode += 1;
      return sharpCodec.encode(...args);
    },
  };
  return { codec, calls };
}

describe('fitUnder: decoding', () => {
  it('decodes the source once however many quality and size steps it takes', async () => {
    const big = await png(1000, 800);
    const { codec, calls } = countingCodec();
    const fitted = await fitUnder(big, 'image/png', 20_000, codec);
    expect(fitted.bytes.length).toBeLessThanOrEqual(20_000);
    expect(calls.encode).toBeGreaterThan(3); // more than one size was tried …
    expect(calls.decode).toBe(1); // … all from one decode
  });

  it('does not decode an image that already fits', async () => {
    const small = await png(40, 30);
    const { codec, calls } = countingCodec();
    await fitUnder(small, 'image/png', 1_000_000, codec);
    expect(calls).toEqual({ decode: 0, encode: 0 });
  });

  it('refuses a decompression bomb from its header, without decoding it', async () => {
    const bomb = pngBomb(8000, 8000); // 64 M pixels in a few kilobytes
    expect(bomb.length).toBeLessThan(20_000);
    const { codec, calls } = countingCodec();
    await expect(fitUnder(bomb, 'image/png', 1_000, codec)).rejects.toThrow(
      'the image is 8000 × 8000 pixels (64,000,000); the limit is 36,152,319 pixels',
    );
    expect(calls.decode).toBe(0);
  });

  it('decodes at most 8 pixels per byte of the limit', async () => {
    const big = await png(1200, 900);
    const { codec } = countingCodec();
    let decoded = 0;
    const measuring: ImageCodec = {
      decode: async (...args) => {
        const raw = await codec.decode(...args);
        decoded = raw.width * raw.height;
        return raw;
      },
      encode: (...args) => codec.encode(...args),
    };
    await fitUnder(big, 'image/png', 20_000, measuring);
    expect(decoded).toBeGreaterThan(0);
    expect(decoded).toBeLessThanOrEqual(160_000 * 1.01); // the short side is rounded
    expect(decoded).toBeLessThan(1200 * 900);
  });
});

describe('only raster images within the pixel limit are decoded', () => {
  const svg = Buffer.from(
    '<svg xmlns="http://www.w3.org/2000/svg" width="1200" height="630"><rect width="1200" height="630" fill="red"/></svg>',
  );
  const notRaster =
    'the image is image/svg+xml, not PNG, JPEG, WebP or GIF (read from its bytes): other formats, SVG among them, are not decoded';

  it('refuses an SVG before any decoder sees it, even one small enough to pass on as it is', async () => {
    const { codec, calls } = countingCodec();
    await expect(fitUnder(svg, 'image/svg+xml', 1_000_000, codec)).rejects.toThrow(new ImageFitError(notRaster));
    await expect(fitUnder(svg, 'image/png', 1_000_000, codec)).rejects.toThrow(/^the image is image\/png, not PNG/);
    expect(calls.decode).toBe(0);
  });

  it('makes a small JPEG for a page to show, refusing an SVG and more than 36,152,319 pixels without decoding', async () => {
    const { codec, calls } = countingCodec();
    await expect(previewJpeg(svg, 'image/svg+xml', 480, codec)).rejects.toThrow(new ImageFitError(notRaster));
    // Between the documented limit and the 40,000,000 the composer used to decode.
    const bomb = pngBomb(6100, 6000);
    await expect(previewJpeg(bomb, 'image/png', 480, codec)).rejects.toThrow(
      new ImageFitError('the image is 6100 × 6000 pixels (36,600,000); the limit is 36,152,319 pixels'),
    );
    expect(calls.decode).toBe(0);
    const shown = await previewJpeg(await png(1200, 630), 'image/png', 480, codec);
    expect(calls.decode).toBe(1);
    const meta = await sharp(shown.data).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['jpeg', 480, 252]);
  });
});

describe('size steps', () => {
  it('keeps the aspect ratio within a pixel budget', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 20_000 }),
        fc.integer({ min: 1, max: 20_000 }),
        fc.integer({ min: 1, max: 50_000_000 }),
        (w, h, budget) => {
          const longest = longestSideFor(w, h, budget);
          expect(longest).toBeGreaterThanOrEqual(1);
          if (w * h <= budget) expect(longest).toBe(Math.max(w, h));
          else if (longest > 1) expect((longest / Math.max(w, h)) ** 2 * w * h).toBeLessThanOrEqual(budget * (1 + 1e-9));
        },
      ),
    );
  });

  it('always shrinks by at least a quarter, more when the last try was far off', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 64, max: 20_000 }),
        fc.integer({ min: 1, max: 10_000_000 }),
        fc.integer({ min: 1, max: 10_000_000 }),
        (longest, size, max) => {
          fc.pre(size > max);
          const next = nextLongestSide(longest, size, max);
          expect(next).toBeLessThanOrEqual(Math.floor(longest * 0.75));
          expect(next).toBeGreaterThanOrEqual(0);
        },
      ),
    );
    expect(nextLongestSide(4000, 4_000_000, 1_000_000)).toBe(1800); // a quarter of the bytes: about half the side, with a margin
  });
});
