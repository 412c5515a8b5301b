import { loadSharp } from '../../common/images/sharp-loader';

/**
 * LinkedIn's Images API takes JPG, PNG and GIF (learn.microsoft.com/linkedin/
 * marketing/community-management/shares/images-api): a WebP upload is converted — to PNG when it
 * has transparency, else to JPEG — so a post's images work on every platform it targets.
 */
export async function toLinkedInImage(bytes: Buffer, mimeType: string): Promise<{ bytes: Buffer; mimeType: string }> {
  if (mimeType !== 'image/webp') return { bytes, mimeType };
  const sharp = await loadSharp();
  const image = sharp(bytes);
  const { hasAlpha } = await image.metadata();
  return hasAlpha
    ? { bytes: await image.png().toBuffer(), mimeType: 'image/png' }
    : { bytes: await image.jpeg({ quality: 90 }).toBuffer(), mimeType: 'image/jpeg' };
}
