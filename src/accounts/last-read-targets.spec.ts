import { LastReadTargets } from './last-read-targets';
import type { PostTargetAccount } from './accounts.repository';

const W = '11111111-1111-4111-8111-111111111111';
const OTHER = '22222222-2222-4222-8222-222222222222';
const a: PostTargetAccount = {
  id: 'aaaaaaaa-0000-4000-8000-000000000001',
  provider: 'webhook',
  status: 'active',
  config: { url: 'http://x' },
};
const b: PostTargetAccount = { id: 'aaaaaaaa-0000-4000-8000-000000000002', provider: 'bluesky', status: 'needs_reauth', config: {} };

describe('the accounts as last read (LastReadTargets)', () => {
  it('gives every account asked for, in the order asked, whatever the case of the ids', () => {
    const last = new LastReadTargets();
    last.remember(W, [a.id, b.id], [b, a]);
    expect(last.get(W, [b.id.toUpperCase(), a.id])).toEqual([b, a]);
  });

  it('gives nothing while any account asked for was not read, or was read in another workspace', () => {
    const last = new LastReadTargets();
    last.remember(W, [a.id], [a]);
    expect(last.get(W, [a.id, b.id])).toBeNull();
    expect(last.get(OTHER, [a.id])).toBeNull();
  });

  it('forgets an account a later read no longer finds (deleted, or never the workspace’s)', () => {
    const last = new LastReadTargets();
    last.remember(W, [a.id, b.id], [a, b]);
    last.remember(W, [a.id.toUpperCase(), b.id], [b]);
    expect(last.get(W, [a.id])).toBeNull();
    expect(last.get(W, [b.id])).toEqual([b]);
  });

  it('keeps what the latest read found', () => {
    const last = new LastReadTargets();
    last.remember(W, [b.id], [b]);
    const reconnected = { ...b, status: 'active' as const };
    last.remember(W, [b.id], [reconnected]);
    expect(last.get(W, [b.id])).toEqual([reconnected]);
  });
});
