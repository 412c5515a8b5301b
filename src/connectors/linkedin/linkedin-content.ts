/**
 * What a LinkedIn post carries besides its commentary, decided without I/O: the Posts API's
 * `content` (learn.microsoft.com/linkedin/marketing/community-management/shares/posts-api) is one
 * of an article, one image, or several images.
 * - One image: `content.media` `{ id, altText }` (Images API URN).
 * - Several: `content.multiImage.images`, an ordered array of the same `{ id, altText }`; the
 *   MultiImage API (…/shares/multiimage-post-api) takes "a minimum of 2 images and maximum of 20
 *   images", shown in the array's order.
 * - No image and a link: `content.article` `{ source, title }`.
 * A post has one content: with images, the link goes into the commentary instead (as on Bluesky,
 * where a post has one embed).
 */

/** The most images one LinkedIn post takes (the MultiImage API's maximum). */
export const LINKEDIN_MAX_IMAGES = 20;

/** An image uploaded through the Images API, with the alt text the post gives it. */
export interface LinkedInImage {
  /** `urn:li:image:…`, from initializeUpload. */
  id: string;
  altText: string;
}

export type LinkedInContent =
  { article: { source: string; title: string } } | { media: LinkedInImage } | { multiImage: { images: LinkedInImage[] } };

/**
 * The `content` of a post with these images (in the post's order) and this link; undefined for a
 * text-only post. Throws a RangeError past LINKEDIN_MAX_IMAGES: intake refuses such a post
 * (platform-rules.ts), so only a payload that skipped it (a bug) gets here. Pure.
 */
export function linkedinContent(images: readonly LinkedInImage[], link: string | null, title: string | null): LinkedInContent | undefined {
  if (images.length > LINKEDIN_MAX_IMAGES) {
    throw new RangeError(`LinkedIn takes at most ${LINKEDIN_MAX_IMAGES} images per post (this one has ${images.length})`);
  }
  if (images.length === 1) return { media: { ...images[0] } };
  if (images.length > 1) return { multiImage: { images: images.map((i) => ({ ...i })) } };
  if (link) return { article: { source: link, title: title ?? link } };
  return undefined;
}

/**
 * The text of the commentary (before LinkedIn's escaping): with images the post cannot also be
 * an article, so the link is appended after a blank line, unless the text already holds it. Pure.
 */
export function linkedinText(text: string, link: string | null, images: number): string {
  return images > 0 && link && !text.includes(link) ? `${text}\n\n${link}` : text;
}
