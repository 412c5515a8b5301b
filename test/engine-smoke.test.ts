import { useMediumEngine } from './support/medium-engine';
import { verifySignature } from './support/receiver';

describe('engine smoke', () => {
  const engine = useMediumEngine();

  it('delivers a post to a webhook after two 503s', async () => {
    const receiver = await engine.receiver();
    receiver.respondSequence([503, 503, { status: 200, body: { url: 'https://blog.example.com/p/1' } }]);
    const account = await engine.account(receiver.urlFor('/hook'));
    const post = await engine.post({ text: 'Hello', targets: [{ accountId: account.id }] });
    const job = await engine.waitForJob(post.jobs[0].id, (j) => j.status === 'succeeded');
    expect(job.attempts.map((a) => a.errorClass)).toEqual(['transient', 'transient', 'success']);
    expect(job.remoteUrl).toBe('https://blog.example.com/p/1');
    const requests = receiver.requests;
    expect(requests).toHaveLength(3);
    expect(new Set(requests.map((r) => r.headers['idempotency-key'])).size).toBe(1);
    for (const r of requests) verifySignature(account.secret, r);
    expect((await engine.postView(post.id)).status).toBe('published');
  });
});
