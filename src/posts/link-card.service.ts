import { Inject, Injectable } from '@nestjs/common';
import type { AuthContext } from '../access/auth-context';
import { DomainError, ErrorCode } from '../common/errors';
import { previewJpeg } from '../common/images/image-processing';
import { HERALD_CONFIG, HeraldConfig } from '../config/config';
import { readPreview, readThumbnail } from '../connectors/bluesky/link-preview';
import { decideLinkCard, LINK_CARD_WINDOW_MS, quotaKey, tooManyLinkCards } from './link-card-quota';
import { LinkCardQuotaRepository } from './link-card-quota.repository';

/** The card as the composer shows it: what Bluesky would post, or why it would post the plain link. */
export interface LinkCard {
  title: string;
  description: string;
  /** A small JPEG as a data: URL (the page loads nothing from other sites). */
  image: string | null;
  problem: string | null;
}

/** A person asked for more link cards than link-card-quota.ts allows: 429, with the wait. */
export class LinkCardQuotaError extends DomainError {
  constructor(readonly retryAfterS: number) {
    super(ErrorCode.TooManyRequests, tooManyLinkCards(retryAfterS));
    this.name = 'LinkCardQuotaError';
  }
}

/** The longest side of the card's picture on the page. */
const SHOWN_SIDE = 480;
/** The whole fetch (page and image) for one click. */
const FETCH_DEADLINE_MS = 15_000;

/**
 * Bluesky's link card for the composer's "Fetch the link card": read on request only, through the
 * same guarded client the connector uses (link-preview.ts: private addresses refused, 2 MB of
 * page, 10 MB of image, 10 s per request), counted per person (link-card-quota.ts), its image
 * used only when it is a PNG, JPEG, WebP or GIF within MAX_IMAGE_PIXELS (checked before any
 * pixel is decoded), and shrunk to a small JPEG here (sharp, common/images).
 *
 * In posts, not in the page: the card previews what a post with a link becomes on Bluesky, read
 * by the connector's own link-preview code, and its count is a table of its own
 * (link_card_fetches). The composer asks for it and shows it, and reaches no connector itself.
 */
@Injectable()
export class LinkCardService {
  constructor(
    private readonly quota: LinkCardQuotaRepository,
    @Inject(HERALD_CONFIG) private readonly config: HeraldConfig,
  ) {}

  /** Throws LinkCardQuotaError when this person fetched too many cards in the last minute. */
  async fetch(auth: AuthContext, link: string, title: string, now = new Date()): Promise<LinkCard> {
    if (!/^https?:\/\//i.test(link)) return { title: '', description: '', image: null, problem: 'add a link (http or https) first' };
    const decision = decideLinkCard(await this.quota.count(quotaKey(auth.principal), now, LINK_CARD_WINDOW_MS), now);
    if (!decision.allowed) throw new LinkCardQuotaError(decision.retryAfterS);
    const opts = {
      connectTimeoutMs: this.config.http.connectTimeoutMs,
      totalTimeoutMs: this.config.http.totalTimeoutMs,
      allowPrivate: this.config.allowPrivateUrls,
      signal: AbortSignal.timeout(FETCH_DEADLINE_MS),
    };
    try {
      const page = await readPreview(link, opts);
      if ('problem' in page)
        return { title: '', description: '', image: null, problem: `Bluesky would post the plain link: ${page.problem}` };
      let image: string | null = null;
      let problem: string | null = null;
      if (page.og.image !== null) {
        try {
          const thumb = await readThumbnail(page.og.image, opts);
          const shown = await previewJpeg(thumb.bytes, thumb.mimeType, SHOWN_SIDE);
          image = `data:image/jpeg;base64,${shown.data.toString('base64')}`;
        } catch (err) {
          // A page's image is a nicety: not an image, too large, SVG, too many pixels, too slow.
          problem = `the card would have no image: ${page.og.image} could not be used (${err instanceof Error ? err.message : String(err)})`;
        }
      }
      return { title: page.og.title ?? (title || link), description: page.og.description ?? '', image, problem };
    } catch {
      return { title: '', description: '', image: null, problem: 'Bluesky would post the plain link: the page could not be read in time' };
    }
  }
}
