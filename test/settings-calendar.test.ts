import request from 'supertest';
import { bootTestApp, TestApp } from './support/app';
import { withClient } from './support/database';
import { killJobs } from './support/dlq';
import { createPost, createWebhookAccount } from './support/engine';
import { makeImage } from './support/media';
import { invitePerson } from './support/people';
import { csrfOf, loggedInAgent, PageAgent } from './support/settings-http';
import { bearer } from './support/config';

/**
 * The calendar and the composer's rules over HTTP (issue 20), worker off: posts placed on the
 * days of the person's zone with each account's state, drafts listed, the month view, a post
 * whose delivery started shown (not edited) with what already went out, a viewer without edit
 * links, and the composer working as a plain urlencoded form (no script, no image).
 */
describe('settings page: calendar and safe editing, over HTTP', () => {
  let t: TestApp;
  let agent: PageAgent;
  let csrf: string;
  let blog: string;
  let news: string;

  beforeAll(async () => {
    t = await bootTestApp({ config: { allowPrivateUrls: true } });
    blog = (await createWebhookAccount(t, t.adminKey, 'http://127.0.0.1:9/blog', { name: 'Company blog' })).id;
    news = (await createWebhookAccount(t, t.adminKey, 'http://127.0.0.1:9/news', { name: 'Newsletter' })).id;
    ({ agent, csrf } = await loggedInAgent(t));
  });
  afterAll(async () => {
    await t.close();
  });

  const sql = (text: string, params: unknown[]) => withClient(t.databaseUrl, (db) => db.query(text, params));

  it("places posts on the days of the person's zone, with each account's state and a link to why a delivery failed", async () => {
    // 2030-03-05 23:30 UTC is already March 6 in Asia/Tokyo (UTC+09:00), 08:30.
    const late = await createPost(t, t.adminKey, {
      text: 'Late in UTC, early in Tokyo',
      targets: [{ accountId: blog }, { accountId: news }],
      scheduledAt: '2030-03-05T23:30:00Z',
    });
    const failedJob = (await t.http().get(`/v1/posts/${late.id}`).set(bearer(t.adminKey)).expect(200)).body.jobs.find(
      (j: { accountId: string }) => j.accountId === blog,
    ).id as string;
    await killJobs(t.databaseUrl, [failedJob]);
    const week = await agent.get('/settings/calendar?view=week&date=2030-03-06&zone=Asia/Tokyo').expect(200);
    expect(week.text).toContain('Week of 4 Mar 2030');
    expect(week.text).toContain('Asia/Tokyo (UTC+09:00)');
    const day = /aria-label="Wednesday, 6 March 2030"[\s\S]*?<\/li>\s*<\/ul>/.exec(week.text)?.[0] ?? '';
    expect(day).toContain('<time>08:30</time>');
    expect(day).toContain('Late in UTC, early in Tokyo');
    expect(day).toContain(`href="/settings/failed-posts/${failedJob}"`);
    expect(day).toMatch(/Newsletter <span class="provider">Blog webhook<\/span>: <span class="state state-scheduled">waiting<\/span>/);
    // In UTC the same post is on Tuesday, at 23:30.
    const utc = await agent.get('/settings/calendar?view=week&date=2030-03-06&zone=UTC').expect(200);
    expect(/aria-label="Tuesday, 5 March 2030"[\s\S]*?<\/li>\s*<\/ul>/.exec(utc.text)?.[0] ?? '').toContain('<time>23:30</time>');

    const month = await agent.get('/settings/calendar?view=month&date=2030-03-20&zone=Asia/Tokyo').expect(200);
    expect(month.text).toContain('March 2030');
    expect(month.text).toContain('Late in UTC, early in Tokyo');
    const next = /<a href="([^"]+)" rel="next">/.exec(month.text)?.[1] ?? '';
    expect(next.replace(/&amp;/g, '&').replace(/&#x3D;/g, '=')).toBe('/settings/calendar?view=month&date=2030-04-01&zone=Asia%2FTokyo');
  });

  it('lists drafts, which have no day', async () => {
    const res = await t
      .http()
      .post('/v1/posts')
      .set(bearer(t.adminKey))
      .send({ status: 'draft', text: 'Undated idea', targets: [{ accountId: news }] });
    expect(res.status).toBe(201);
    const page = await agent.get('/settings/calendar').expect(200);
    const drafts = page.text.slice(page.text.indexOf('id="drafts-title"'));
    expect(drafts).toContain(`<a href="/settings/posts/${res.body.id}/edit">Undated idea</a>`);
    expect(drafts).toContain('For Newsletter');
  });

  it('shows a post whose delivery started instead of editing it: what already went out, where to fix what failed', async () => {
    const post = await createPost(t, t.adminKey, {
      text: 'Half out',
      targets: [{ accountId: blog }, { accountId: news }],
      scheduledAt: '2030-04-01T10:00:00Z',
    });
    const byAccount = Object.fromEntries(
      (await t.http().get(`/v1/posts/${post.id}`).set(bearer(t.adminKey)).expect(200)).body.jobs.map(
        (j: { accountId: string; id: string }) => [j.accountId, j.id],
      ),
    );
    await sql(
      `UPDATE job_state SET status = 'succeeded', attempt_count = 1, remote_url = 'https://blog.example/half-out' WHERE job_id = $1`,
      [byAccount[blog]],
    );
    await killJobs(t.databaseUrl, [byAccount[news]]);
    const page = await agent.get(`/settings/posts/${post.id}/edit`).expect(200);
    expect(page.text).toContain(
      'Its delivery has started, so it can no longer be changed here. Already published: <strong>Company blog</strong>.',
    );
    expect(page.text).toContain('href="https://blog.example/half-out"');
    expect(page.text).toContain(`href="/settings/failed-posts/${byAccount[news]}">see why, edit and send again</a>`);
    expect(page.text).not.toContain('name="text"');
    // A form sent anyway (a page loaded before the delivery started) changes nothing.
    const sent = await agent
      .post(`/settings/posts/${post.id}/edit`)
      .type('form')
      .send({ _csrf: csrf, text: 'Changed late', action: 'schedule', date: '2030-04-01', time: '11:00', zone: 'UTC' });
    expect(sent.status).toBe(409);
    expect(sent.text).toContain('its delivery started meanwhile, so this edit was not saved');
    expect((await t.http().get(`/v1/posts/${post.id}`).set(bearer(t.adminKey)).expect(200)).body.text).toBe('Half out');
  });

  it('works as a plain form without the script: schedules in the zone given, and says why a time is refused', async () => {
    const form = await agent.get('/settings/compose?zone=Europe/Paris').expect(200);
    expect(form.text).toContain('Europe/Paris (UTC+0');
    // A time the clocks skip in Paris.
    const gap = await agent
      .post('/settings/compose')
      .type('form')
      .send({
        _csrf: csrfOf(form.text),
        text: 'Spring',
        accounts: blog,
        date: '2030-03-31',
        time: '02:30',
        zone: 'Europe/Paris',
        action: 'schedule',
      });
    expect(gap.status).toBe(400);
    expect(gap.text).toContain('2030-03-31 02:30 does not exist in Europe/Paris (the clocks skip it): choose another time');
    expect(gap.text).toContain('>Spring</textarea>');
    const ok = await agent.post('/settings/compose').type('form').send({
      _csrf: csrf,
      text: 'Spring, an hour later',
      accounts: blog,
      date: '2030-03-31',
      time: '03:30',
      zone: 'Europe/Paris',
      action: 'schedule',
    });
    expect(ok.status).toBe(303);
    expect(ok.headers.location).toBe('/settings/calendar?view=week&date=2030-03-31&zone=Europe%2FParis');
    const list = (await t.http().get('/v1/posts?limit=100').set(bearer(t.adminKey)).expect(200)).body.data as {
      text: string;
      scheduledAt: string;
    }[];
    expect(list.find((p) => p.text === 'Spring, an hour later')?.scheduledAt).toBe('2030-03-31T01:30:00.000Z');
  });

  it('takes an image with its alt text in the multipart form, and reads no body without a session', async () => {
    const form = await agent.get('/settings/compose').expect(200);
    const noAlt = await agent
      .post('/settings/compose')
      .field('_csrf', csrfOf(form.text))
      .field('text', 'With a picture')
      .field('action', 'upload')
      .attach('file', await makeImage('png'), { filename: 'a.png', contentType: 'image/png' });
    expect(noAlt.status).toBe(400);
    expect(noAlt.text).toContain('the image was not added: describe it in “Alt text for the new image” (alt text is required)');
    const added = await agent
      .post('/settings/compose')
      .field('_csrf', csrf)
      .field('text', 'With a picture')
      .field('newAlt', 'A pink rectangle')
      .field('action', 'upload')
      .attach('file', await makeImage('png'), { filename: 'a.png', contentType: 'image/png' });
    expect(added.status).toBe(200);
    expect(added.text).toContain('Image added.');
    expect(added.text).toContain('alt="A pink rectangle"');
    expect(added.text).toContain('>With a picture</textarea>');
    // No session: refused (to the login) before anything is read or stored.
    const media = async () => (await t.http().get('/v1/media?limit=100').set(bearer(t.adminKey)).expect(200)).body.data.length as number;
    const before = await media();
    const anonymous = await request(t.app.getHttpServer())
      .post('/settings/compose')
      .field('newAlt', 'x')
      .attach('file', await makeImage('png'), { filename: 'a.png', contentType: 'image/png' });
    expect(anonymous.status).toBe(303);
    expect(anonymous.headers.location).toMatch(/^\/settings\/login/);
    expect(await media()).toBe(before);
  });

  it('shows a viewer the calendar without edit links, and refuses the composer', async () => {
    const viewer = await invitePerson(t, t.adminKey, 'calendar-viewer@example.test', 'viewer', 'Cal Viewer');
    const page = await viewer.agent.get('/settings/calendar?view=week&date=2030-03-06&zone=Asia/Tokyo').expect(200);
    expect(page.text).toContain('Late in UTC, early in Tokyo');
    expect(page.text).not.toContain('/edit"');
    expect(page.text).not.toContain('Write a post');
    expect((await viewer.agent.get('/settings/compose')).status).toBe(403);
  });
});
