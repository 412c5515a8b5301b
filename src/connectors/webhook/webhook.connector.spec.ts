import { loadConfig } from '../../config/config';
import { ConnectorInputError, DeliveryAccount, DeliveryJob } from '../connector.interface';
import { buildPublishEvent } from './webhook-payload';
import { isValidSigningSecret } from './webhook-signature';
import { WebhookConnector } from './webhook.connector';

/** Everything here needs no network: literal addresses, and accounts that fail before sending. */

function connector(allowPrivate = false): WebhookConnector {
  return new WebhookConnector(loadConfig({ HERALD_ALLOW_PRIVATE_URLS: String(allowPrivate) }));
}

async function inputError(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof ConnectorInputError) return err.message;
    throw err;
  }
  throw new Error('expected a ConnectorInputError');
}

function job(overrides: Partial<DeliveryJob> = {}): DeliveryJob {
  return {
    id: 'job-1',
    postId: 'post-1',
    accountId: 'acc-1',
    workspaceId: 'ws-1',
    idempotencyKey: 'idem-1',
    attemptNumber: 1,
    payload: {
      text: 'Hello',
      title: 'Title',
      link: 'https://example.com/a',
      media: ['m-2', 'm-1'],
      metadata: { tags: ['x'] },
      scheduledAt: '2026-11-29T12:00:00.000Z',
    },
    media: [
      {
        id: 'm-1',
        alt: 'one',
        mimeType: 'image/png',
        url: 'https://herald.example/media/m-1?sig=a',
        width: null,
        height: null,
        byteSize: 0,
        read: () => Promise.resolve(Buffer.alloc(0)),
      },
      {
        id: 'm-2',
        alt: 'two',
        mimeType: 'image/jpeg',
        url: 'https://herald.example/media/m-2?sig=b',
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

function account(config: Record<string, unknown>, credentials: Record<string, unknown>): DeliveryAccount {
  return { id: 'acc-1', workspaceId: 'ws-1', name: 'blog', config, credentials };
}

describe('the post.publish event of a thread', () => {
  it('carries every further part in order, each with its own media, in the one event', () => {
    const event = buildPublishEvent(
      job({
        payload: {
          ...job().payload,
          thread: [
            { text: 'Part two', link: null, media: ['m-1'] },
            { text: 'Part three', link: 'https://example.com/c', media: [] },
          ],
        },
      }),
      new Date('2026-11-29T12:00:01.000Z'),
    );
    expect(event.data.text).toBe('Hello');
    expect(event.data.thread).toEqual([
      { text: 'Part two', link: null, media: [{ url: 'https://herald.example/media/m-1?sig=a', alt: 'one', mimeType: 'image/png' }] },
      { text: 'Part three', link: 'https://example.com/c', media: [] },
    ]);
  });

  it('has no thread field for a single post', () => {
    expect('thread' in buildPublishEvent(job(), new Date())).toBe(false);
  });

  it('refuses a part whose image is gone, as for the first part', () => {
    expect(() =>
      buildPublishEvent(
        job({
          payload: {
            ...job().payload,
            thread: [
              { text: 'a', link: null, media: ['m-9'] },
              { text: 'b', link: null, media: [] },
            ],
          },
        }),
        new Date(),
      ),
    ).toThrow(/media m-9 is missing/);
  });
});

describe('WebhookConnector.prepareAccount', () => {
  it('creates a signing secret, shows it once, and keeps header values out of the public config', async () => {
    const prepared = await connector(true).prepareAccount(
      { url: 'http://127.0.0.1:8080/hook', headers: { Authorization: 'Bearer t0k3n' } },
      null,
    );
    expect(prepared.config).toEqual({ url: 'http://127.0.0.1:8080/hook', headerNames: ['Authorization'] });
    expect(JSON.stringify(prepared.config)).not.toContain('t0k3n');
    const secret = prepared.credentials.secret;
    expect(isValidSigningSecret(secret)).toBe(true);
    expect(prepared.credentials.headers).toEqual({ Authorization: 'Bearer t0k3n' });
    expect(prepared.revealOnce).toEqual({ secret });
  });

  it('keeps the secret on a PATCH within the same origin, and the stored headers when none are given', async () => {
    const previous = { secret: 'whsec_dGVzdHNlY3JldA==', headers: { 'X-Key': 'old' } };
    const stored = { url: 'http://127.0.0.1/old', headerNames: ['X-Key'] };
    const same = await connector(true).prepareAccount({ url: 'http://127.0.0.1/new' }, previous, stored);
    expect(same.credentials).toEqual(previous);
    expect(same.config).toEqual({ url: 'http://127.0.0.1/new', headerNames: ['X-Key'] });
    expect(same.revealOnce).toBeUndefined();

    const replaced = await connector(true).prepareAccount({ url: 'http://127.0.0.1/new', headers: { 'X-Other': 'v' } }, previous, stored);
    expect(replaced.credentials).toEqual({ secret: previous.secret, headers: { 'X-Other': 'v' } });

    const cleared = await connector(true).prepareAccount({ url: 'http://127.0.0.1/new', headers: null }, previous, stored);
    expect(cleared.credentials.headers).toEqual({});
  });

  it('carries neither the stored headers nor the secret to another origin (scheme, host or port), unless the headers are given again', async () => {
    const previous = { secret: 'whsec_dGVzdHNlY3JldA==', headers: { Authorization: 'Bearer blog-token' } };
    const stored = { url: 'https://blog.example.com/hook', headerNames: ['Authorization'] };
    for (const url of [
      'http://127.0.0.1/hook',
      'https://blog.example.com:8443/hook',
      'http://blog.example.com/hook',
      'https://evil.example/hook',
    ]) {
      const moved = await connector(true).prepareAccount({ url }, previous, stored);
      expect(moved.credentials.headers).toEqual({});
      expect(moved.credentials.secret).not.toBe(previous.secret);
      expect(moved.revealOnce).toEqual({ secret: moved.credentials.secret });
      expect(moved.config).toEqual({ url, headerNames: [] });
    }
    const given = await connector(true).prepareAccount(
      { url: 'https://other.example/hook', headers: { Authorization: 'Bearer new' } },
      previous,
      stored,
    );
    expect(given.credentials.headers).toEqual({ Authorization: 'Bearer new' });
    // No stored URL to compare with: nothing is carried.
    expect((await connector(true).prepareAccount({ url: 'https://blog.example.com/hook' }, previous, null)).credentials.headers).toEqual(
      {},
    );
  });

  it('refuses a loopback URL unless private URLs are allowed', async () => {
    const message = await inputError(connector(false).prepareAccount({ url: 'http://127.0.0.1:8080/hook' }, null));
    expect(message).toMatch(/^config\.url /);
    expect(message).toContain('loopback');
    expect(message).toContain('HERALD_ALLOW_PRIVATE_URLS=true');
  });

  it('names the field in validation errors', async () => {
    expect(await inputError(connector(true).prepareAccount({ url: 'nope' }, null))).toBe('config.url must be an absolute http(s) URL');
    expect(await inputError(connector(true).prepareAccount({ url: 'http://127.0.0.1/', extra: 1 }, null))).toContain('"extra"');
    expect(
      await inputError(connector(true).prepareAccount({ url: 'http://127.0.0.1/', headers: { 'Webhook-Signature': 'x' } }, null)),
    ).toContain('cannot be overridden');
  });
});

describe('WebhookConnector.rotateSecret', () => {
  it('issues a new secret, keeps the headers and reveals the secret once', () => {
    const previous = { secret: 'whsec_dGVzdHNlY3JldA==', headers: { 'X-Key': 'v' } };
    const rotated = connector().rotateSecret(previous);
    expect(rotated.credentials.secret).not.toBe(previous.secret);
    expect(isValidSigningSecret(rotated.credentials.secret)).toBe(true);
    expect(rotated.credentials.headers).toEqual({ 'X-Key': 'v' });
    expect(rotated.revealOnce).toEqual({ secret: rotated.credentials.secret });
  });
});

describe('WebhookConnector.deliver without sending', () => {
  const signal = new AbortController().signal;

  it('is poison when the stored secret is unusable', async () => {
    const outcome = await connector(true).deliver(job(), account({ url: 'http://127.0.0.1:1/' }, { secret: 'whsec_' }), signal);
    expect(outcome).toMatchObject({ errorClass: 'poison', httpStatus: null });
    expect(outcome.message).toContain('signing secret');
  });

  it('is poison when the account has no URL', async () => {
    const outcome = await connector(true).deliver(job(), account({}, { secret: 'whsec_dGVzdHNlY3JldA==' }), signal);
    expect(outcome).toMatchObject({ errorClass: 'poison' });
  });

  it('is poison when a media item could not be resolved', async () => {
    const outcome = await connector(true).deliver(
      job({ media: [] }),
      account({ url: 'http://127.0.0.1:1/' }, { secret: 'whsec_dGVzdHNlY3JldA==' }),
      signal,
    );
    expect(outcome).toMatchObject({ errorClass: 'poison', message: 'media m-2 is missing (deleted or expired)' });
  });

  it('is refused at connect time (permanent) for a loopback literal when private URLs are not allowed', async () => {
    const outcome = await connector(false).deliver(
      job(),
      account({ url: 'http://127.0.0.1:1/' }, { secret: 'whsec_dGVzdHNlY3JldA==' }),
      signal,
    );
    expect(outcome).toMatchObject({ errorClass: 'permanent', networkError: 'blocked_address' });
    expect(outcome.message).toContain('HERALD_ALLOW_PRIVATE_URLS');
  });
});

describe('buildPublishEvent', () => {
  it('builds the documented publish body with media in the payload order', () => {
    expect(buildPublishEvent(job(), new Date('2026-11-29T12:00:01.500Z'))).toEqual({
      id: 'idem-1',
      type: 'post.publish',
      timestamp: '2026-11-29T12:00:01.500Z',
      data: {
        postId: 'post-1',
        jobId: 'job-1',
        text: 'Hello',
        title: 'Title',
        link: 'https://example.com/a',
        media: [
          { url: 'https://herald.example/media/m-2?sig=b', alt: 'two', mimeType: 'image/jpeg' },
          { url: 'https://herald.example/media/m-1?sig=a', alt: 'one', mimeType: 'image/png' },
        ],
        scheduledAt: '2026-11-29T12:00:00.000Z',
        metadata: { tags: ['x'] },
      },
    });
  });
});
