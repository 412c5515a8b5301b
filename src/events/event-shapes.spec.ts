import { approvalEvent, postScheduled } from './event-shapes';

describe('event shapes', () => {
  const now = new Date('2026-12-06T09:00:00.123Z');

  it('post.scheduled names the post, its time, its deadline and each target with its job', () => {
    const e = postScheduled({
      workspaceId: 'w',
      postId: 'p',
      scheduledAt: new Date('2026-12-07T10:00:00Z'),
      publishBy: null,
      targets: [{ jobId: 'j', accountId: 'a', provider: 'bluesky', status: 'paused' }],
      now,
      id: 'e',
    });
    expect(e).toEqual({
      workspaceId: 'w',
      id: 'e',
      type: 'post.scheduled',
      occurredAt: now,
      data: {
        postId: 'p',
        scheduledAt: '2026-12-07T10:00:00.000Z',
        publishBy: null,
        targets: [{ jobId: 'j', accountId: 'a', provider: 'bluesky', status: 'paused' }],
      },
    });
  });

  it('gives every event a fresh id unless one is given', () => {
    const input = { workspaceId: 'w', postId: 'p', scheduledAt: now, publishBy: null, targets: [], now };
    expect(postScheduled(input).id).not.toBe(postScheduled(input).id);
    expect(postScheduled(input).id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('a rejection carries its comment; an approval or a request does not', () => {
    const by = { kind: 'person', id: 'x', label: 'Ada' };
    expect(approvalEvent('post.rejected', { workspaceId: 'w', postId: 'p', actor: by, comment: 'Not now', now }).data).toEqual({
      postId: 'p',
      by,
      comment: 'Not now',
    });
    expect(approvalEvent('post.approved', { workspaceId: 'w', postId: 'p', actor: by, comment: 'ignored', now }).data).toEqual({
      postId: 'p',
      by,
    });
    expect(approvalEvent('post.approval_requested', { workspaceId: 'w', postId: 'p', actor: null, now }).type).toBe(
      'post.approval_requested',
    );
  });
});
