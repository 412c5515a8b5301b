import sharp from 'sharp';
import { fitUnder, ImageFitError } from './image-processing';

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
  return sharp(noise(width, height, channels), { raw: { width, height, channels } }).png().toBuffer();
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
