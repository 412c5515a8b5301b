import fc from 'fast-check';
import { digestSubject, renderDigest, windowPhrase } from './digest-builder';
import { DeadJobItem, DigestAccount, DigestFacts, DIGEST_ITEM_LIMIT } from './digest.types';

const end = new Date('2027-05-05T08:00:00Z');
const day = { start: new Date(end.getTime() - 86_400_000), end };
const ctx = { publicUrl: 'https://herald.example.com', timeZone: 'Europe/Paris', workspaceName: 'Acme' };

function account(o: Partial<DigestAccount> = {}): DigestAccount {
  return {
    id: 'a1',
    name: 'Blog',
    provider: 'webhook',
    status: 'active',
    statusReason: null,
    warnings: [],
    circuitOpenedAt: null,
    consecutiveFailures: 0,
    lastError: null,
    ...o,
  };
}

function deadJob(i: number, o: Partial<DeadJobItem> = {}): DeadJobItem {
  return {
    jobId: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    accountId: 'a1',
    accountName: 'Blog',
    provider: 'webhook',
    text: `post number ${i}`,
    errorClass: 'permanent',
    deadReason: 'permanent',
    lastError: 'HTTP 400: bad payload',
    deadAt: new Date(end.getTime() - i * 60_000),
    ...o,
  };
}

function facts(o: Partial<DigestFacts> = {}): DigestFacts {
  return { window: day, accounts: [account()], activity: [], deadJobs: [], deadTotal: 0, topErrors: [], ...o };
}

describe('digest subject', () => {
  it('says the gist: how many posts failed, in which span', () => {
    const f = facts({
      deadJobs: [deadJob(1), deadJob(2), deadJob(3)],
      deadTotal: 3,
      activity: [{ accountId: 'a1', accountName: 'Blog', provider: 'webhook', published: 4, failedAttempts: 9, newlyDead: 3 }],
    });
    expect(renderDigest(f, ctx).subject).toBe('Herald: 3 posts failed in the last 24 hours');
  });

  it('adds the accounts that need a person, and says only that when nothing died', () => {
    const counts = { deadJobs: 1, failedAttempts: 0, published: 0, accountsNeedingAttention: 2, circuitsOpened: 0 };
    expect(digestSubject(counts, day)).toBe('Herald: 1 post failed in the last 24 hours; 2 accounts need attention');
    expect(digestSubject({ ...counts, deadJobs: 0, accountsNeedingAttention: 1 }, day)).toBe('Herald: 1 account needs attention');
    expect(digestSubject({ ...counts, deadJobs: 0, accountsNeedingAttention: 0, circuitsOpened: 1 }, day)).toBe(
      'Herald: delivery trouble on 1 account in the last 24 hours',
    );
    expect(digestSubject({ ...counts, deadJobs: 0, accountsNeedingAttention: 0 }, day)).toBe('Herald: no failures in the last 24 hours');
  });

  it('names the span a window really covers: a DST day is still "24 hours"; a catch-up says days', () => {
    const h = (n: number) => ({ start: new Date(end.getTime() - n * 3_600_000), end });
    expect(windowPhrase(h(23))).toBe('in the last 24 hours');
    expect(windowPhrase(h(25))).toBe('in the last 24 hours');
    expect(windowPhrase(h(1))).toBe('in the last hour');
    expect(windowPhrase(h(6))).toBe('in the last 6 hours');
    expect(windowPhrase(h(72))).toBe('in the last 3 days');
  });
});

describe('digest content', () => {
  it('names each account with its platform, Mastodon included', () => {
    const toot = account({
      id: 'm1',
      name: 'Ada',
      provider: 'mastodon',
      status: 'needs_reauth',
      statusReason: 'the instance refused the token',
    });
    const f = facts({
      accounts: [account(), toot],
      activity: [{ accountId: 'm1', accountName: 'Ada', provider: 'mastodon', published: 2, failedAttempts: 1, newlyDead: 1 }],
      deadJobs: [
        deadJob(1, { accountId: 'm1', accountName: 'Ada', provider: 'mastodon', lastError: 'refused the status: Validation failed' }),
      ],
      deadTotal: 1,
    });
    const { text, html } = renderDigest(f, ctx);
    expect(text).toContain('Ada (Mastodon)');
    expect(text).not.toMatch(/\(mastodon\)/);
    expect(html).toContain('Ada (Mastodon)');
  });

  it('puts accounts that need a person first, then the accounts, then each dead job with its link, then the top errors', () => {
    const f = facts({
      accounts: [
        account({
          id: 'a2',
          name: 'Company page',
          provider: 'linkedin',
          status: 'needs_reauth',
          statusReason: 'the platform refused the credentials: 401',
        }),
        account(),
      ],
      activity: [{ accountId: 'a1', accountName: 'Blog', provider: 'webhook', published: 12, failedAttempts: 5, newlyDead: 2 }],
      deadJobs: [deadJob(1), deadJob(2)],
      deadTotal: 2,
      topErrors: [
        { message: 'HTTP 400: bad payload', count: 2 },
        { message: 'HTTP 503', count: 3 },
      ],
    });
    const m = renderDigest(f, ctx);
    const order = [
      'NEEDS YOU',
      'Company page (LinkedIn) needs re-authentication',
      'ACCOUNTS',
      'Blog (webhook): 12 published, 5 failed attempts, 2 newly dead-lettered',
      'NEWLY DEAD-LETTERED (2)',
      'MOST FREQUENT ERRORS',
    ];
    const positions = order.map((s) => m.text.indexOf(s));
    expect(positions.every((p) => p >= 0)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    for (const j of f.deadJobs) {
      expect(m.text).toContain(`Open: https://herald.example.com/settings/failed-posts/${j.jobId}`);
      expect(m.html).toContain(`href="https://herald.example.com/settings/failed-posts/${j.jobId}"`);
    }
    expect(m.text).toContain('"post number 1"');
    expect(m.text).toContain('Last error: HTTP 400: bad payload');
    expect(m.text).toContain('- 3 × HTTP 503');
    expect(m.text).toContain('https://herald.example.com/settings/failed-posts?account=a1');
    // Times in the workspace's zone: 08:00Z is 10:00 in Paris in May.
    expect(m.text).toContain('Failures from 2027-05-04 10:00 to 2027-05-05 10:00 (Europe/Paris).');
    expect(m.empty).toBe(false);
  });

  it(`lists at most ${DIGEST_ITEM_LIMIT} dead jobs, then "and N more" with a link to the list`, () => {
    const jobs = Array.from({ length: DIGEST_ITEM_LIMIT }, (_, i) => deadJob(i));
    const m = renderDigest(facts({ deadJobs: jobs, deadTotal: 73 }), ctx);
    expect(m.text.match(/^ {2}Open: /gm)).toHaveLength(DIGEST_ITEM_LIMIT);
    expect(m.text).toContain('…and 23 more: https://herald.example.com/settings/failed-posts');
    expect(m.html).toContain('…and 23 more');
    expect(m.subject).toBe('Herald: 73 posts failed in the last 24 hours');
  });

  it('repeats accounts that need a person every day, even when nothing else happened', () => {
    const m = renderDigest(
      facts({ accounts: [account({ status: 'disabled', statusReason: 'disabled automatically after 50 consecutive failed attempts' })] }),
      ctx,
    );
    expect(m.empty).toBe(false);
    expect(m.text).toContain('Blog (webhook) is disabled (disabled automatically after 50 consecutive failed attempts)');
  });

  it('counts a LinkedIn token about to expire as needing a person', () => {
    const m = renderDigest(
      facts({
        accounts: [
          account({
            provider: 'linkedin',
            warnings: [
              'the access token expires on 2027-05-09T00:00:00.000Z (in 4 days) and cannot be refreshed; reconnect the account before then',
            ],
          }),
        ],
      }),
      ctx,
    );
    expect(m.counts.accountsNeedingAttention).toBe(1);
    expect(m.text).toContain('the access token expires on');
  });

  it('is empty when no job died, no account needs a person and no circuit opened (retried attempts alone are not news)', () => {
    const m = renderDigest(
      facts({ activity: [{ accountId: 'a1', accountName: 'Blog', provider: 'webhook', published: 3, failedAttempts: 2, newlyDead: 0 }] }),
      ctx,
    );
    expect(m.empty).toBe(true);
    expect(m.text).toContain('No post failed in the last 24 hours: 3 published; 2 failed attempts retried.');
  });

  it('reports a circuit that opened in the window', () => {
    const m = renderDigest(facts({ accounts: [account({ circuitOpenedAt: new Date(end.getTime() - 3_600_000) })] }), ctx);
    expect(m.empty).toBe(false);
    expect(m.text).toContain('circuit opened at 2027-05-05 09:00');
  });

  it('escapes HTML in post text, names and errors in the HTML part, and keeps the text part as written', () => {
    const evil = '<script>alert("x")</script><img src=x onerror=alert(1)> & \'quotes\'';
    const f = facts({
      accounts: [account({ name: `Blog ${evil}`, status: 'needs_reauth', statusReason: evil })],
      activity: [{ accountId: 'a1', accountName: `Blog ${evil}`, provider: 'webhook', published: 0, failedAttempts: 1, newlyDead: 1 }],
      deadJobs: [deadJob(1, { text: evil, lastError: evil, accountName: `Blog ${evil}` })],
      deadTotal: 1,
      topErrors: [{ message: evil, count: 1 }],
    });
    const m = renderDigest(f, { ...ctx, workspaceName: evil });
    expect(m.html).not.toContain('<script');
    expect(m.html).not.toContain('<img');
    expect(m.html).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;');
    expect(m.text).toContain('<script>alert("x")</script>');
    expect(m.subject).not.toContain('<');
  });

  it('property: no user string can open a tag or an attribute in the HTML part, or reach the subject', () => {
    const userText = fc.string({
      unit: fc.constantFrom('<', '>', '"', "'", '&', 'a', ' ', '\n', '\r', 'é', '😀', '/', '=', 'x'),
      maxLength: 60,
    });
    fc.assert(
      fc.property(userText, userText, userText, userText, (name, text, error, workspace) => {
        const marker = `<zz-${name}${text}`;
        const f = facts({
          accounts: [account({ name: marker + name, status: 'needs_reauth', statusReason: error })],
          activity: [{ accountId: 'a1', accountName: marker + name, provider: 'webhook', published: 1, failedAttempts: 1, newlyDead: 1 }],
          deadJobs: [deadJob(1, { text: marker + text, lastError: marker + error, accountName: marker })],
          deadTotal: 1,
          topErrors: [{ message: marker + error, count: 1 }],
        });
        const m = renderDigest(f, { ...ctx, workspaceName: marker + workspace });
        expect(m.html).not.toContain('<zz-');
        // Every tag in the HTML is one of the template's own.
        for (const tag of m.html.match(/<\/?([a-zA-Z0-9!-]+)/g) ?? []) {
          expect([
            '<!DOCTYPE',
            '<html',
            '<head',
            '<meta',
            '<title',
            '</title',
            '</head',
            '<body',
            '<div',
            '</div',
            '<p',
            '</p',
            '<h1',
            '</h1',
            '<h2',
            '</h2',
            '<ul',
            '</ul',
            '<li',
            '</li',
            '<strong',
            '</strong',
            '<a',
            '</a',
            '<br',
            '<code',
            '</code',
            '</body',
            '</html',
          ]).toContain(tag);
        }
        expect(m.subject).not.toContain('zz-');
      }),
      { numRuns: 200, seed: 7 },
    );
  });
});
