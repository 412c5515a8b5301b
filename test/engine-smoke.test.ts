import { bearer, TestApp } from './support/app';
import { bootEngine, createPost, createWebhookAccount, verifySignature, waitForJob } from './support/engine';
import { Receiver, startReceiver } from './support/receiver';

describe('engine smoke', () => {
  let t: TestApp;
  let receiver: Receiver;
  beforeAll(async () => {
    t = await bootEngine();
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  it('delivers a post to a webhook after two 503s', async () => {
    receiver.respondSequence([503, 503, { status: 200, body: { url: 'https://blog.example.com/p/1' } }]);
    const account = await createWebhookAccount(t, t.adminKey, receiver.urlFor('/hook'));
    const post = await createPost(t, t.adminKey, { text: 'Hello', targets: [{ accountId: account.id }] });
    const job = await waitForJob<{ status: string; attempts: { errorClass: string }[]; remoteUrl: string }>(
      t,
      t.adminKey,
      post.jobs[0].id,
      (j) => j.status === 'succeeded',
    );
    expect(job.attempts.map((a) => a.errorClass)).toEqual(['transient', 'transient', 'success']);
    expect(job.remoteUrl).toBe('https://blog.example.com/p/1');
    const requests = receiver.requests;
    expect(requests).toHaveLength(3);
    expect(new Set(requests.map((r) => r.headers['idempotency-key'])).size).toBe(1);
    for (const r of requests) verifySignature(account.secret, r);
    const got = await t.http().get(`/v1/posts/${post.id}`).set(bearer(t.adminKey)).expect(200);
    expect(got.body.status).toBe('published');
  });
});
