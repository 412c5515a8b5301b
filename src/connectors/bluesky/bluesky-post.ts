import type {
  $Typed,
  AppBskyEmbedExternal,
  AppBskyEmbedImages,
  AppBskyFeedPost,
  AppBskyRichtextFacet,
  BlobRef,
  RichText,
} from '@atproto/api';
import { fitUnder, ImageFitError } from '../../common/images/image-processing';
import { atprotoApi, isXrpcError } from './atproto';
import { xrpcStatus } from './bluesky-outcome';
import type { DeliveryJob } from '../connector.interface';
import type { BlueskyAuth } from './bluesky-auth';
import { PreviewFetchOptions, readPreview, readThumbnail } from './link-preview';

/**
 * Builds the `app.bsky.feed.post` record of a job:
 * - facets for links, mentions and hashtags with UTF-8 byte offsets (`RichText` from
 *   @atproto/api); mentions carry the DID their handle resolves to, and a handle that does not
 *   resolve stays plain text instead of becoming an invalid facet;
 * - one embed: images (≤ 4, alt text, aspect ratio, each blob under 1,000,000 bytes) when the
 *   post has media, else a link card for `link` from the page's Open Graph tags. With images the
 *   link is a facet in the text, and so it is when the page cannot be read (with a warning).
 */

export const POST_COLLECTION = 'app.bsky.feed.post';
/** app.bsky.embed.images / app.bsky.embed.external: each blob ≤ 1,000,000 bytes. */
export const MAX_BLOB_BYTES = 1_000_000;
export const MAX_IMAGES = 4;

/** The payload cannot be built (missing or undecodable media): a poison outcome, nothing posted. */
export class PoisonError extends Error {}

export interface PostBuildContext {
  session: BlueskyAuth;
  /** For the page and its image (the attempt's signal included). */
  preview: PreviewFetchOptions;
  /** The attempt's signal: every call stops at its deadline. */
  signal: AbortSignal;
  /** Tells the caller what is being done, for the message of a failure. */
  onStep(step: string): void;
}

export interface BuiltPost {
  record: AppBskyFeedPost.Record;
  warnings: string[];
}

/** The text as posted: the link is appended when it must be a facet and is not in the text yet. */
export function composeText(text: string, link: string | null, linkInText: boolean): string {
  if (link === null || !linkInText || text.includes(link)) return text;
  return text.trim() === '' ? link : `${text.trimEnd()}\n\n${link}`;
}

/** Mention facets whose handle does not resolve are dropped: the text stays, unlinked. */
async function resolveFacets(rt: RichText, ctx: PostBuildContext): Promise<AppBskyRichtextFacet.Main[] | undefined> {
  rt.detectFacetsWithoutResolution();
  const facets = rt.facets ?? [];
  const kept: AppBskyRichtextFacet.Main[] = [];
  const cache = new Map<string, string | null>();
  for (const facet of facets) {
    const features: AppBskyRichtextFacet.Main['features'] = [];
    for (const feature of facet.features) {
      if (!atprotoApi().AppBskyRichtextFacet.isMention(feature)) {
        features.push(feature);
        continue;
      }
      // Before resolution `did` holds the handle as written (without the @).
      const handle = feature.did.toLowerCase();
      if (!cache.has(handle)) {
        ctx.onStep(`resolving the mention @${handle}`);
        try {
          const res = await ctx.session.call(
            (agent) => agent.com.atproto.identity.resolveHandle({ handle }, { signal: ctx.signal }),
            ctx.signal,
          );
          cache.set(handle, res.data.did);
        } catch (err) {
          // 400 "Unable to resolve handle": no such account. Anything else (network, 5xx) fails
          // the attempt, to be retried, rather than silently posting without the mention.
          if (isXrpcError(err) && xrpcStatus(err) === 400) cache.set(handle, null);
          else throw err;
        }
      }
      const did = cache.get(handle) ?? null;
      if (did !== null) features.push({ ...feature, did });
    }
    if (features.length > 0) kept.push({ ...facet, features });
  }
  return kept.length > 0 ? kept : undefined;
}

async function uploadBlob(ctx: PostBuildContext, bytes: Buffer, mimeType: string): Promise<BlobRef> {
  const res = await ctx.session.call(
    (agent) => agent.com.atproto.repo.uploadBlob(new Uint8Array(bytes), { encoding: mimeType, signal: ctx.signal }),
    ctx.signal,
  );
  return res.data.blob;
}

async function imagesEmbed(job: DeliveryJob, ctx: PostBuildContext): Promise<$Typed<AppBskyEmbedImages.Main>> {
  if (job.media.length > MAX_IMAGES)
    throw new PoisonError(`Bluesky takes at most ${MAX_IMAGES} images per post (this one has ${job.media.length})`);
  const images: AppBskyEmbedImages.Image[] = [];
  for (const [i, media] of job.media.entries()) {
    ctx.onStep(`preparing image ${i + 1}`);
    let bytes: Buffer;
    try {
      bytes = await media.read();
    } catch (err) {
      throw new PoisonError(`image ${i + 1} (${media.id}) cannot be read: ${(err as Error).message}`);
    }
    let fitted;
    try {
      fitted = await fitUnder(bytes, media.mimeType, MAX_BLOB_BYTES);
    } catch (err) {
      if (err instanceof ImageFitError) throw new PoisonError(`image ${i + 1} (${media.id}): ${err.message}`);
      throw err;
    }
    ctx.onStep(`uploading image ${i + 1}`);
    const blob = await uploadBlob(ctx, fitted.bytes, fitted.mimeType);
    const width = fitted.width || media.width || 0;
    const height = fitted.height || media.height || 0;
    images.push({
      $type: 'app.bsky.embed.images#image',
      image: blob,
      alt: media.alt,
      ...(width > 0 && height > 0 ? { aspectRatio: { width, height } } : {}),
    });
  }
  return { $type: 'app.bsky.embed.images', images };
}

/** The page's card data, or a warning saying why there is no card. */
async function linkCard(
  link: string,
  title: string | null,
  ctx: PostBuildContext,
): Promise<{ card: $Typed<AppBskyEmbedExternal.Main> | null; warnings: string[] }> {
  ctx.onStep('reading the link preview');
  // Throws only when the attempt itself was stopped (its deadline): that ends the attempt.
  const page = await readPreview(link, ctx.preview);
  if ('problem' in page) return { card: null, warnings: [`the link preview was not added: ${page.problem}`] };
  const { og } = page;
  const warnings: string[] = [];
  let thumb: BlobRef | undefined;
  if (og.image !== null) {
    try {
      thumb = await thumbnail(og.image, ctx);
    } catch (err) {
      if (isXrpcError(err)) throw err; // the upload failed: the PDS's problem, not the page's
      if (ctx.signal.aborted) throw err; // the attempt's deadline, not the image's fault
      const code = (err as { code?: unknown }).code;
      warnings.push(
        `the link preview has no image: ${og.image} could not be used (${typeof code === 'string' ? code : (err as Error).message})`,
      );
    }
  }
  return {
    card: {
      $type: 'app.bsky.embed.external',
      external: {
        $type: 'app.bsky.embed.external#external',
        uri: link,
        title: og.title ?? title ?? link,
        description: og.description ?? '',
        ...(thumb ? { thumb } : {}),
      },
    },
    warnings,
  };
}

async function thumbnail(url: string, ctx: PostBuildContext): Promise<BlobRef> {
  ctx.onStep('reading the link preview image');
  const { bytes, mimeType } = await readThumbnail(url, ctx.preview);
  const fitted = await fitUnder(bytes, mimeType, MAX_BLOB_BYTES);
  ctx.onStep('uploading the link preview image');
  return uploadBlob(ctx, fitted.bytes, fitted.mimeType);
}

export async function buildPost(job: DeliveryJob, createdAt: Date, ctx: PostBuildContext): Promise<BuiltPost> {
  const { text, link, title } = job.payload;
  if (job.payload.media.length > job.media.length) {
    throw new PoisonError(`${job.payload.media.length - job.media.length} of the post's images are no longer available`);
  }
  const warnings: string[] = [];
  let embed: AppBskyFeedPost.Record['embed'];
  let linkInText = false;
  if (job.media.length > 0) {
    embed = await imagesEmbed(job, ctx);
    linkInText = true;
  } else if (link !== null) {
    const result = await linkCard(link, title, ctx);
    warnings.push(...result.warnings);
    if (result.card) embed = result.card;
    else linkInText = true;
  }
  const rt = new (atprotoApi().RichText)({ text: composeText(text, link, linkInText) });
  const facets = await resolveFacets(rt, ctx);
  const record: AppBskyFeedPost.Record = {
    $type: POST_COLLECTION,
    text: rt.text,
    createdAt: createdAt.toISOString(),
    ...(facets ? { facets } : {}),
    ...(embed ? { embed } : {}),
  };
  return { record, warnings };
}
