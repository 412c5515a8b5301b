import { StringDecoder } from 'node:string_decoder';
import { ABORTED, ATTEMPT_DEADLINE, OutboundError } from '../../common/net/deadline';
import { HttpResult, send } from '../../common/net/http-client';
import { HeadWatcher, OpenGraph, parseOpenGraphYielding } from './open-graph';

/**
 * Fetches what a link card needs: the page's Open Graph data and the preview image's
 * bytes, through the outbound layer with the attempt's signal.
 *
 * A page is read only as far as its head: at most MAX_PAGE_BYTES, and the read stops at `</head>`
 * (or `<body`), at once for an answer that is not an HTML page, and at the deadline. What was
 * read is parsed in linear time (open-graph.ts). A card is a nicety: any failure of the page or
 * its image becomes a warning and the post goes out with the plain link, except the attempt's
 * own deadline (or shutdown), which ends the attempt.
 */

export interface PreviewFetchOptions {
  connectTimeoutMs: number;
  totalTimeoutMs: number;
  allowPrivate: boolean;
  signal: AbortSignal;
}

/** The card's data is in the head; past this much of a page nothing more is read. */
export const MAX_PAGE_BYTES = 2 * 1024 * 1024;
/** A thumbnail source larger than this is not downloaded, however well it would shrink. */
export const MAX_THUMB_SOURCE_BYTES = 10 * 1024 * 1024;
/** The link preview is a nicety: it never holds a post back longer than this per request. */
const PREVIEW_TIMEOUT_MS = 10_000;
const USER_AGENT = 'Herald/1.0 (link preview)';

/** A request the attempt itself was stopped in: not a reason to skip the card, but to end the attempt. */
function throwIfStopped(result: HttpResult): void {
  const code = result.kind === 'network_error' ? result.code : result.cut;
  if (code === ATTEMPT_DEADLINE || code === ABORTED) throw new OutboundError(code, `the attempt was stopped (${code})`, true);
}

function isHtml(contentType: string | undefined): boolean {
  return contentType !== undefined && /html/i.test(contentType);
}

/** The page's card data, or why there is none (a sentence for the attempt's warnings). */
export async function readPreview(link: string, opts: PreviewFetchOptions): Promise<{ og: OpenGraph } | { problem: string }> {
  const watcher = new HeadWatcher();
  const decoder = new StringDecoder('utf8');
  const result = await send(
    { method: 'GET', url: link, headers: { 'user-agent': USER_AGENT, accept: 'text/html,application/xhtml+xml' } },
    {
      connectTimeoutMs: opts.connectTimeoutMs,
      totalTimeoutMs: Math.min(opts.totalTimeoutMs, PREVIEW_TIMEOUT_MS),
      allowPrivate: opts.allowPrivate,
      maxBodyBytes: MAX_PAGE_BYTES,
      // The watcher keeps the text; the layer keeps no bytes of its own.
      keepBytes: 0,
      signal: opts.signal,
      stopReading: (chunk, response) => {
        if (response.status !== 200 || !isHtml(response.headers['content-type'])) return true;
        return watcher.write(decoder.write(chunk));
      },
    },
  );
  throwIfStopped(result);
  if (result.kind === 'network_error') return { problem: `${link} could not be fetched (${result.code})` };
  if (result.status !== 200) return { problem: `${link} answered HTTP ${result.status}` };
  const type = result.headers['content-type'];
  if (!isHtml(type)) return { problem: `${link} is not an HTML page (${type || 'no content type'})` };
  // Cut by the byte limit or the total timeout: what arrived may still hold the head.
  watcher.write(decoder.end());
  return { og: await parseOpenGraphYielding(watcher.text(), link) };
}

/** The preview image's bytes and type; throws an Error saying why it cannot be used. */
export async function readThumbnail(url: string, opts: PreviewFetchOptions): Promise<{ bytes: Buffer; mimeType: string }> {
  const result = await send(
    { method: 'GET', url, headers: { 'user-agent': USER_AGENT, accept: 'image/*' } },
    {
      connectTimeoutMs: opts.connectTimeoutMs,
      totalTimeoutMs: Math.min(opts.totalTimeoutMs, PREVIEW_TIMEOUT_MS),
      allowPrivate: opts.allowPrivate,
      maxBodyBytes: MAX_THUMB_SOURCE_BYTES,
      signal: opts.signal,
      stopReading: (_chunk, response) =>
        response.status !== 200 ||
        !String(response.headers['content-type'] ?? '')
          .toLowerCase()
          .startsWith('image/'),
    },
  );
  throwIfStopped(result);
  if (result.kind === 'network_error') throw new Error(result.code);
  if (result.status !== 200) throw new Error(`HTTP ${result.status}`);
  const mimeType = String(result.headers['content-type'] ?? '')
    .split(';')[0]
    .trim()
    .toLowerCase();
  if (!mimeType.startsWith('image/')) throw new Error(`not an image (${mimeType || 'no content type'})`);
  if (result.cut === 'limit') throw new Error('the image is too large');
  if (result.cut !== null) throw new Error(`the image did not arrive whole (${result.cut})`);
  return { bytes: result.body, mimeType };
}
