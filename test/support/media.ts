import sharp from 'sharp';
import { TestApp } from './app';
import { bearer } from './config';

/** A small solid image of the given format, made here (no fixture files). */
export async function makeImage(format: 'png' | 'jpeg' | 'webp' | 'gif', width = 32, height = 24): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: { r: 200, g: 40, b: 90 } } })
    .toFormat(format)
    .toBuffer();
}

/** POST /v1/media through the API; returns the answer (status and body). */
export function postMedia(t: TestApp, key: string, bytes: Buffer, options: { alt?: string; filename?: string; contentType?: string } = {}) {
  const req = t.http().post('/v1/media').set(bearer(key));
  if (options.alt !== undefined) req.field('alt', options.alt);
  return req.attach('file', bytes, {
    filename: options.filename ?? 'image.bin',
    contentType: options.contentType ?? 'application/octet-stream',
  });
}

/** Uploads an image and returns its id (fails the test on anything but 201). */
export async function uploadImage(t: TestApp, key: string, bytes: Buffer, alt = 'a test image'): Promise<string> {
  const res = await postMedia(t, key, bytes, { alt });
  if (res.status !== 201) throw new Error(`media upload failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id as string;
}
