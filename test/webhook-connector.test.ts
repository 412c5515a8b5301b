import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { closeIdleSockets } from '../src/common/net/http-client';
import { EnvConfig, loadConfig } from '../src/config/config';
import { ConnectorInputError, DeliveryAccount, DeliveryJob } from '../src/connectors/connector.interface';
import { WebhookConnector } from '../src/connectors/webhook/webhook.connector';
import { freePort } from './support/net';
import { Receiver, startReceiver } from './support/receiver';

/**
 * The webhook connector against real loopback receivers: signatures a Standard Webhooks library
 * accepts, the idempotency key across attempts, and how each kind of answer or failure is
 * classified. No database is involved.
 */

function config(env: Record<string, string> = {}): EnvConfig {
  return loadConfig({ LOG_LEVEL: 'silent', HERALD_ALLOW_PRIVATE_URLS: 'true', ...env });
}

const connector = new WebhookConnector(config({ HTTP_CONNECT_TIMEOUT_MS: '2000', HTTP_TOTAL_TIMEOUT_MS: '5000' }));
// A connect timeout longer than the total one: only the total timeout can end its attempts (a
// 200 ms connect timeout fired first on a loaded machine, before the connection was made).
const impatient = new WebhookConnector(config({ HTTP_CONNECT_TIMEOUT_MS: '5000', HTTP_TOTAL_TIMEOUT_MS: '300' }));
const guarded = new WebhookConnector(config({ HERALD_ALLOW_PRIVATE_URLS: 'false' }));

const AUTH_VALUE = 'Bearer blog-api-token-7f3a9c';

function makeJob(overrides: Partial<DeliveryJob> = {}): DeliveryJob {
  return {
    id: randomUUID(),
    postId: randomUUID(),
    accountId: 'acc-1',
    workspaceId: 'ws-1',
    idempotencyKey: randomUUID(),
    attemptNumber: 1,
    payload: {
      text: 'Launch day 🚀',
      title: 'We shipped',
      link: 'https://example.com/launch',
      media: ['media-1'],
      metadata: { campaign: 'launch' },
      scheduledAt: '2026-11-29T12:00:00.000Z',
    },
    media: [
      {
        id: 'media-1',
        alt: 'a rocket',
        mimeType: 'image/png',
        url: 'https://herald.example/m/media-1?sig=x',
        width: null,
        height: null,
        byteSize: 0,
        read: () => Promise.resolve(Buffer.alloc(0)),
      },
    ],
    previousAttempt: null,
    ...overrides,
  };
}

async function makeAccount(
  url: string,
  headers: Record<string, string> = { Authorization: AUTH_VALUE },
  via: WebhookConnector = connector,
): Promise<{ account: DeliveryAccount; secret: string }> {
  const prepared = await via.prepareAccount({ url, headers }, null);
  const secret = prepared.revealOnce?.secret;
  if (secret === undefined) throw new Error('expected the signing secret to be revealed on create');
  return {
    account: { id: 'acc-1', workspaceId: 'ws-1', name: 'blog', config: prepared.config, credentials: prepared.credentials },
    secret,
  };
}

function signatureHeadersOf(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const pick = (name: string): string => {
    const value = headers[name];
    if (typeof value !== 'string') throw new Error(`missing header ${name}`);
    return value;
  };
  return {
    'webhook-id': pick('webhook-id'),
    'webhook-timestamp': pick('webhook-timestamp'),
    'webhook-signature': pick('webhook-signature'),
  };
}

describe('WebhookConnector against a real receiver', () => {
  let receiver: Receiver;
  const signal = new AbortController().signal;

  beforeEach(async () => {
    receiver = await startReceiver();
  });

  afterEach(async () => {
    closeIdleSockets();
    await receiver.close();
  });

  it('delivers a signed body that the standardwebhooks library verifies, with the documented shape', async () => {
    const { account, secret } = await makeAccount(receiver.urlFor('/hooks/herald'));
    const job = makeJob();
    const outcome = await connector.deliver(job, account, signal);
    expect(outcome.errorClass).toBe('success');

    const [request] = await receiver.waitFor(1);
    expect(request.method).toBe('POST');
    expect(request.path).toBe('/hooks/herald');
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers['user-agent']).toBe('Herald/1.0');
    expect(request.headers['idempotency-key']).toBe(job.idempotencyKey);
    expect(request.headers['webhook-id']).toBe(job.idempotencyKey);
    expect(request.headers.authorization).toBe(AUTH_VALUE);

    const event = new Webhook(secret).verify(request.body, signatureHeadersOf(request.headers));
    expect(event).toEqual({
      id: job.idempotencyKey,
      type: 'post.publish',
      timestamp: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      data: {
        postId: job.postId,
        jobId: job.id,
        text: 'Launch day 🚀',
        title: 'We shipped',
        link: 'https://example.com/launch',
        media: [{ url: 'https://herald.example/m/media-1?sig=x', alt: 'a rocket', mimeType: 'image/png' }],
        scheduledAt: '2026-11-29T12:00:00.000Z',
        metadata: { campaign: 'launch' },
      },
    });
    // The body's timestamp and the signed header are the same moment.
    const sent = Date.parse((event as { timestamp: string }).timestamp);
    expect(Math.floor(sent / 1000)).toBe(Number(request.headers['webhook-timestamp']));
  });

  it('sends the same Idempotency-Key and webhook-id on every attempt of a job', async () => {
    receiver.respondSequence([503, 200]);
    const { account, secret } = await makeAccount(receiver.url);
    const job = makeJob();
    expect((await connector.deliver(job, account, signal)).errorClass).toBe('transient');
    expect((await connector.deliver({ ...job, attemptNumber: 2 }, account, signal)).errorClass).toBe('success');
    const [first, second] = await receiver.waitFor(2);
    for (const request of [first, second]) {
      expect(request.headers['idempotency-key']).toBe(job.idempotencyKey);
      expect(request.headers['webhook-id']).toBe(job.idempotencyKey);
      expect(() => new Webhook(secret).verify(request.body, signatureHeadersOf(request.headers))).not.toThrow();
    }
  });

  it('records the published URL and id from a 2xx JSON answer', async () => {
    receiver.respondWith({ status: 201, body: { url: 'https://blog.example.com/2026/we-shipped', id: 'post-981' } });
    const { account } = await makeAccount(receiver.url);
    const outcome = await connector.deliver(makeJob(), account, signal);
    expect(outcome).toMatchObject({
      errorClass: 'success',
      httpStatus: 201,
      remoteUrl: 'https://blog.example.com/2026/we-shipped',
      remoteId: 'post-981',
      message: null,
    });
  });

  it('treats a redirect as permanent, names its target without the query, and never follows it', async () => {
    receiver.setHandler((req) =>
      req.path.startsWith('/moved') ? 200 : { status: 302, headers: { location: receiver.urlFor('/moved/here?token=abc') } },
    );
    const { account } = await makeAccount(receiver.urlFor('/hook'));
    const outcome = await connector.deliver(makeJob(), account, signal);
    expect(outcome.errorClass).toBe('permanent');
    expect(outcome.httpStatus).toBe(302);
    expect(outcome.message).toContain('redirected');
    expect(outcome.message).toContain('redirects are not followed');
    expect(outcome.message).toContain(`${receiver.url}/moved/here`);
    expect(outcome.message).not.toContain('token=abc');
    // deliver() has returned: a followed redirect would have been requested before that.
    expect(receiver.requests.map((r) => r.path)).toEqual(['/hook']);
  });

  it('honours Retry-After on a 503 as a transient failure', async () => {
    receiver.respondWith({ status: 503, headers: { 'retry-after': '3' }, body: 'maintenance' });
    const { account } = await makeAccount(receiver.url);
    const outcome = await connector.deliver(makeJob(), account, signal);
    expect(outcome).toMatchObject({ errorClass: 'transient', httpStatus: 503, serverDelayMs: 3000, responseExcerpt: 'maintenance' });
  });

  it.each([
    [401, 'auth'],
    [403, 'auth'],
    [400, 'permanent'],
    [410, 'permanent'],
    [429, 'transient'],
  ])('classifies HTTP %i as %s', async (status, errorClass) => {
    receiver.respondWith(status);
    const { account } = await makeAccount(receiver.url);
    expect(await connector.deliver(makeJob(), account, signal)).toMatchObject({ errorClass, httpStatus: status });
  });

  it('reports a closed port as a transient ECONNREFUSED', async () => {
    const port = await freePort();
    const { account } = await makeAccount(`http://127.0.0.1:${port}/hook`);
    const outcome = await connector.deliver(makeJob(), account, signal);
    expect(outcome).toMatchObject({
      errorClass: 'transient',
      httpStatus: null,
      networkError: 'ECONNREFUSED',
      message: `connection refused by 127.0.0.1:${port}`,
    });
  });

  it('gives up on a receiver that never answers after the total timeout', async () => {
    receiver.respondWith({ hang: true });
    const { account } = await makeAccount(receiver.url, {}, impatient);
    const started = Date.now();
    const outcome = await impatient.deliver(makeJob(), account, signal);
    const elapsed = Date.now() - started;
    expect(outcome).toMatchObject({ errorClass: 'transient', networkError: 'total_timeout' });
    expect(outcome.message).toBe(`no complete answer from ${new URL(receiver.url).host} within 0.3 s`);
    // Not before the timeout; that the timeout (and not the receiver) ended it, the outcome says.
    expect(elapsed).toBeGreaterThanOrEqual(290);
  });

  it('stops when the worker aborts the attempt', async () => {
    receiver.respondWith({ hang: true });
    const { account } = await makeAccount(receiver.url);
    const controller = new AbortController();
    const pending = connector.deliver(makeJob(), account, controller.signal);
    await receiver.waitFor(1);
    controller.abort();
    expect(await pending).toMatchObject({ errorClass: 'transient', networkError: 'aborted' });
  });

  it("ends at the attempt's deadline (its signal fires before the total timeout) as transient attempt_deadline", async () => {
    receiver.respondWith({ hang: true });
    const { account } = await makeAccount(receiver.url);
    const started = Date.now();
    const outcome = await connector.deliver(makeJob(), account, AbortSignal.timeout(300));
    expect(outcome).toMatchObject({ errorClass: 'transient', networkError: 'attempt_deadline', httpStatus: null });
    expect(outcome.message).toMatch(/reached its deadline before 127\.0\.0\.1:\d+ answered/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
  });

  it('refuses loopback at save time and again at connect time when private URLs are not allowed', async () => {
    const saved = guarded.prepareAccount({ url: receiver.urlFor('/hook') }, null);
    await expect(saved).rejects.toBeInstanceOf(ConnectorInputError);
    await expect(saved).rejects.toThrow(/HERALD_ALLOW_PRIVATE_URLS=true/);

    // Saved while private URLs were allowed (or before a DNS change): the connect-time guard stops it.
    const { account } = await makeAccount(`http://localhost:${receiver.port}/hook`);
    const outcome = await guarded.deliver(makeJob(), account, signal);
    expect(outcome).toMatchObject({ errorClass: 'permanent', networkError: 'blocked_address', httpStatus: null });
    expect(outcome.message).toContain('HERALD_ALLOW_PRIVATE_URLS');
    const verified = await guarded.verify(account);
    expect(verified.ok).toBe(false);
    expect(receiver.requests).toHaveLength(0);
  });

  it('keeps a 5 MB answer down to a bounded excerpt', async () => {
    receiver.respondWith({ status: 500, body: Buffer.alloc(5 * 1024 * 1024, 'y') });
    const { account } = await makeAccount(receiver.url);
    const outcome = await connector.deliver(makeJob(), account, signal);
    expect(outcome.errorClass).toBe('transient');
    expect(outcome.responseExcerpt).toHaveLength(2048);
  });

  it('sends custom headers but never shows their values or the secret, even when the receiver echoes them', async () => {
    receiver.setHandler((req) => ({ status: 401, body: { error: 'unauthorized', echoed: req.headers } }));
    const { account, secret } = await makeAccount(receiver.url, { Authorization: AUTH_VALUE, 'X-Blog-Key': 'blog-key-55aa77' });
    const outcome = await connector.deliver(makeJob(), account, signal);
    const [request] = await receiver.waitFor(1);
    expect(request.headers['x-blog-key']).toBe('blog-key-55aa77');
    expect(outcome.errorClass).toBe('auth');
    const shown = JSON.stringify(outcome);
    expect(shown).not.toContain('blog-api-token');
    expect(shown).not.toContain('blog-key-55aa77');
    expect(shown).not.toContain(secret.slice(6));
    expect(outcome.responseExcerpt).toContain('[redacted]');
    expect(JSON.stringify(account.config)).not.toContain('blog-key-55aa77');
  });

  it('verifies an account with a signed ping', async () => {
    const { account, secret } = await makeAccount(receiver.url);
    const result = await connector.verify(account);
    expect(result.ok).toBe(true);
    expect(result.message).toMatch(/^the endpoint answered 200 in \d+ ms$/);
    const [request] = await receiver.waitFor(1);
    const event = new Webhook(secret).verify(request.body, signatureHeadersOf(request.headers)) as {
      id: string;
      type: string;
      data: unknown;
    };
    expect(event.type).toBe('herald.ping');
    expect(event.id).toMatch(/^ping_[0-9a-f]+$/);
    expect(event.data).toEqual({});

    receiver.respondWith(404);
    const failed = await connector.verify(account);
    expect(failed).toMatchObject({ ok: false, message: 'HTTP 404: the endpoint was not found; check the URL' });
  });
});
