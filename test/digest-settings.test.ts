import { bootTestApp, TestApp } from './support/app';
import { preconfirmRecipients } from './support/mail';
import { bearer } from './support/config';

/** GET|PUT /v1/settings/notifications and POST /v1/digest/preview (docs/notifications.md). */
describe('notification settings API', () => {
  let t: TestApp;
  let otherKey: string;

  beforeAll(async () => {
    t = await bootTestApp({ config: { notifications: { enabled: false, pollIntervalMs: 1000, sweepIntervalSeconds: 60 } } });
    const ws = await t.http().post('/v1/workspaces').set(bearer(t.adminKey)).send({ name: 'Other team' }).expect(201);
    otherKey = ws.body.apiKey.key;
  });
  afterAll(async () => {
    await t.close();
  });

  const get = (key = t.adminKey) => t.http().get('/v1/settings/notifications').set(bearer(key));
  const put = (body: unknown, key = t.adminKey) =>
    t
      .http()
      .put('/v1/settings/notifications')
      .set(bearer(key))
      .send(body as object);

  it('answers the defaults before anything was saved: digest off, 08:00 UTC, alerts on, mail to the outbox folder', async () => {
    const res = await get().expect(200);
    expect(res.body).toEqual({
      digest: { enabled: false, recipients: [], hour: 8, timezone: 'UTC', sendWhenEmpty: false },
      alerts: { enabled: true },
      recipientStatus: [],
      alertLimits: { perAccountPerDay: 4, perWorkspacePerDay: 20, heldLastDay: [] },
      delivery: 'outbox',
      lastDigest: null,
    });
  });

  it('saves the digest settings and answers them back; GET then shows the same', async () => {
    const body = {
      digest: {
        enabled: true,
        recipients: ['ops@example.com', 'Ann.Lee@example.org'],
        hour: 7,
        timezone: 'Europe/Paris',
        sendWhenEmpty: true,
      },
    };
    const saved = await put(body).expect(200);
    expect(saved.body.digest).toEqual(body.digest);
    const again = await get().expect(200);
    expect(again.body.digest).toEqual(body.digest);
  });

  it('keeps the fields a PUT leaves out', async () => {
    await put({ digest: { enabled: true, recipients: ['ops@example.com'], hour: 9, timezone: 'Asia/Tokyo', sendWhenEmpty: false } }).expect(
      200,
    );
    const res = await put({ digest: { hour: 18 }, alerts: { enabled: false } }).expect(200);
    expect(res.body.digest).toEqual({
      enabled: true,
      recipients: ['ops@example.com'],
      hour: 18,
      timezone: 'Asia/Tokyo',
      sendWhenEmpty: false,
    });
    expect(res.body.alerts).toEqual({ enabled: false });
  });

  it.each([
    [{ digest: { timezone: 'Mars/Olympus_Mons' } }, 'digest.timezone "Mars/Olympus_Mons" is not an IANA time zone name'],
    [{ digest: { timezone: '+01:00' } }, 'digest.timezone "+01:00" is not an IANA time zone name'],
    [{ digest: { hour: 24 } }, 'digest.hour must be a whole number from 0 to 23'],
    [{ digest: { hour: 7.5 } }, 'digest.hour must be a whole number from 0 to 23'],
    [{ digest: { recipients: ['not-an-address'] } }, 'digest.recipients.0 "not-an-address" is not a valid email address'],
    [
      { digest: { recipients: ['a@example.com', 'Bob <b@example.com>'] } },
      'digest.recipients.1 "Bob <b@example.com>" is not a valid email address',
    ],
    [{ digest: { recipients: ['a@example.com\r\nBcc: evil@example.com'] } }, 'is not a valid email address'],
    // Quoted local parts (which isEmail accepts, control characters inside included) and backslashes: refused.
    [
      { digest: { recipients: ['"ops\u0007alert"@example.com'] } },
      'digest.recipients.0 ""ops alert"@example.com" is not a valid email address (name@example.com): it contains a control character',
    ],
    [
      { digest: { recipients: ['"ann"@example.com'] } },
      'digest.recipients.0 ""ann"@example.com" is not a valid email address (name@example.com): quoted local parts are not accepted',
    ],
    [{ digest: { recipients: ['a\\b@example.com'] } }, 'is not a valid email address (name@example.com)'],
    [{ digest: { recipients: ['a@example.com', 'A@Example.com'] } }, 'digest.recipients.1 "A@Example.com" is listed twice'],
    [{ digest: { recipients: Array.from({ length: 21 }, (_, i) => `r${i}@example.com`) } }, 'digest.recipients lists at most 20 addresses'],
    [{ digest: { enabled: true, recipients: [] } }, 'digest.recipients must list at least one address while digest.enabled is true'],
    [{ digest: { enabled: 'yes' } }, 'digest.enabled must be true or false'],
    [{ digest: { colour: 'blue' } }, 'digest.colour is not allowed (unknown field)'],
    [{ weekly: true }, 'weekly is not allowed (unknown field)'],
  ])('refuses %j with a 400 naming the problem, and changes nothing', async (body, message) => {
    const before = (await get().expect(200)).body;
    const res = await put(body).expect(400);
    expect(res.body).toMatchObject({ statusCode: 400, error: 'Bad Request' });
    expect(res.body.message).toContain(message);
    expect((await get().expect(200)).body).toEqual(before);
  });

  it('accepts exactly 20 recipients', async () => {
    const recipients = Array.from({ length: 20 }, (_, i) => `r${i}@example.com`);
    const res = await put({ digest: { recipients } }).expect(200);
    expect(res.body.digest.recipients).toEqual(recipients);
  });

  it("keeps each workspace's settings to itself", async () => {
    await put({ digest: { enabled: true, recipients: ['mine@example.com'] } }).expect(200);
    const other = await get(otherKey).expect(200);
    expect(other.body.digest.recipients).toEqual([]);
    await put({ digest: { enabled: true, recipients: ['theirs@example.com'], timezone: 'America/New_York' } }, otherKey).expect(200);
    expect((await get().expect(200)).body.digest.recipients).toEqual(['mine@example.com']);
  });

  it('needs an API key', async () => {
    await t.http().get('/v1/settings/notifications').expect(401);
    await t
      .http()
      .put('/v1/settings/notifications')
      .send({ digest: { hour: 3 } })
      .expect(401);
    await t.http().post('/v1/digest/preview').expect(401);
  });

  it('previews the digest that would be sent now: subject, HTML and text, recording nothing', async () => {
    // Confirmed beforehand (an unconfirmed address gets nothing, so the preview would name nobody).
    await preconfirmRecipients(t.databaseUrl, t.adminKey, ['ops@example.com']);
    await put({ digest: { enabled: true, recipients: ['ops@example.com'], sendWhenEmpty: false, timezone: 'UTC' } }).expect(200);
    const res = await t.http().post('/v1/digest/preview').set(bearer(t.adminKey)).expect(200);
    expect(res.body.subject).toBe('Herald: no failures in the last 24 hours');
    expect(res.body.empty).toBe(true);
    expect(res.body.wouldSend).toBe(false);
    expect(res.body.recipients).toEqual(['ops@example.com']);
    expect(res.body.html).toMatch(/^<!DOCTYPE html>/);
    expect(res.body.text).toContain('No post failed in the last 24 hours');
    expect(Date.parse(res.body.window.end) - Date.parse(res.body.window.start)).toBe(24 * 3_600_000);
    expect(res.body.counts).toEqual({ deadJobs: 0, failedAttempts: 0, published: 0, accountsNeedingAttention: 0, circuitsOpened: 0 });

    await put({ digest: { sendWhenEmpty: true } }).expect(200);
    const wanted = await t.http().post('/v1/digest/preview').set(bearer(t.adminKey)).expect(200);
    expect(wanted.body.wouldSend).toBe(true);
    expect((await get().expect(200)).body.lastDigest).toBeNull();
  });

  it('documents both routes in the OpenAPI document', async () => {
    const doc = await t.http().get('/docs-json').expect(200);
    expect(Object.keys(doc.body.paths['/v1/settings/notifications'])).toEqual(expect.arrayContaining(['get', 'put']));
    expect(doc.body.paths['/v1/digest/preview'].post.responses['200']).toBeDefined();
    expect(doc.body.paths['/v1/settings/notifications'].put.responses['400']).toBeDefined();
  });
});
