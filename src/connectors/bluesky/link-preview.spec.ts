import { closeIdleSockets } from '../../common/net/http-client';
import { endlessBody, RawServer, startRawServer, trickle } from '../../../test/support/hostile';
import { startReceiver } from '../../../test/support/receiver';
import { PreviewFetchOptions, readPreview, readThumbnail } from './link-preview';

/**
 * Link-card fetching against real loopback servers that send pages without end: what is read,
 * where the read stops, and what a person is told.
 */

const opts = (signal: AbortSignal = new AbortController().signal): PreviewFetchOptions => ({
  connectTimeoutMs: 1_000,
  totalTimeoutMs: 5_000,
  allowPrivate: true,
  signal,
});

async function waitFor(check: () => boolean): Promise<void> {
  const deadline = Date.now() + 3_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('readPreview', () => {
  const servers: RawServer[] = [];
  const serve = async (...args: Parameters<typeof startRawServer>) => {
    const server = await startRawServer(...args);
    servers.push(server);
    return server;
  };
  afterEach(async () => {
    closeIdleSockets();
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  it('reads a page only up to the end of its head, even when its body never ends', async () => {
    const head =
      '<!doctype html><html><head><meta property="og:title" content="Caf&eacute; launch"><meta property="og:image" content="/card.png"></head><body>';
    const server = await serve(endlessBody(200, 'text/html; charset=utf-8', head));
    const page = await readPreview(`${server.url}/post`, opts());
    expect(page).toEqual({ og: { title: 'Café launch', description: null, image: `${server.url}/card.png` } });
    // Herald hung up after the head instead of reading on.
    await waitFor(() => server.clientHangUps() === 1);
  });

  it('reads at most 2 MB of a page whose head never ends, and uses what came', async () => {
    const server = await serve(endlessBody(200, 'text/html', '<head><meta name="description" content="Still here">'));
    const page = await readPreview(server.url, opts());
    expect(page).toEqual({ og: { title: null, description: 'Still here', image: null } });
    // The server would write forever: Herald is the one that stopped.
    await waitFor(() => server.clientHangUps() === 1);
  });

  it('does not read an answer that is not an HTML page, and says why there is no card', async () => {
    const server = await serve(endlessBody(200, 'application/octet-stream'));
    const page = await readPreview(server.url, opts());
    expect(page).toEqual({ problem: `${server.url} is not an HTML page (application/octet-stream)` });
    await waitFor(() => server.clientHangUps() === 1);
  });

  it('says which status a page answered with', async () => {
    const receiver = await startReceiver(() => ({ status: 404, body: 'gone' }));
    try {
      expect(await readPreview(receiver.urlFor('/x'), opts())).toEqual({ problem: `${receiver.urlFor('/x')} answered HTTP 404` });
    } finally {
      await receiver.close();
    }
  });

  it("ends the attempt (not just the card) when the attempt's deadline comes during the page", async () => {
    const server = await serve(trickle('HTTP/1.1 200 OK\r\ncontent-type: text/html\r\n\r\n<head>', 300));
    await expect(readPreview(server.url, opts(AbortSignal.timeout(400)))).rejects.toMatchObject({ code: 'attempt_deadline' });
  });
});

describe('readThumbnail', () => {
  it('refuses a source image over 10 MB without reading it all, and anything that is not an image', async () => {
    const big = await startRawServer(endlessBody(200, 'image/png'));
    const html = await startRawServer(endlessBody(200, 'text/html'));
    try {
      await expect(readThumbnail(big.url, opts())).rejects.toThrow('the image is too large');
      await expect(readThumbnail(html.url, opts())).rejects.toThrow('not an image (text/html)');
    } finally {
      closeIdleSockets();
      await big.close();
      await html.close();
    }
  });
});
