import request from 'supertest';
import { bootTestApp, TestApp } from './support/app';
import { drainMail, MailCatcher, mailConfig, mailedLinkTo, newWorkspace, startMailCatcher, Workspace } from './support/mail';
import { acceptInvitation, confirmFirstPerson, personAgent, TEST_PASSWORD } from './support/people';
import { csrfOf } from './support/settings-http';
import { bearer } from './support/config';

/**
 * A workspace's first person and the addresses of other workspaces (issue 28, defect 8): an
 * address becomes a login only once its mailbox is proven by a link (the very first person of a
 * server without mail excepted: nobody could prove anything there), no answer tells a workspace
 * that an address logs in elsewhere, and a first person waiting for their link holds no address
 * another workspace may want to invite.
 */

type Answer = { status: number; body: Record<string, unknown> };
const firstPerson = (t: TestApp, key: string, email: string, name = 'First Owner') =>
  t.http().post('/v1/people').set(bearer(key)).send({ email, name, password: TEST_PASSWORD });
const people = async (t: TestApp, key: string) =>
  ((await t.http().get('/v1/people').set(bearer(key)).expect(200)).body.data as { email: string; role: string }[]).map(
    (p) => `${p.email} ${p.role}`,
  );
/** An answer with what differs from one address or workspace to another blanked out. */
function shape(res: Answer): Answer {
  const invitation = res.body.invitation as Record<string, unknown>;
  return {
    status: res.status,
    body: {
      ...res.body,
      link: res.body.link === null ? null : '<link>',
      invitation: { ...invitation, id: '<id>', email: '<email>', invitedBy: '<key>', createdAt: '<at>', expiresAt: '<at>' },
    },
  };
}
/** Opens a confirmation link and sends its button; the page's answer. */
async function confirm(t: TestApp, link: string) {
  const u = new URL(link);
  const agent = request.agent(t.app.getHttpServer());
  const form = await agent.get(u.pathname + u.search).expect(200);
  return agent
    .post('/settings/invitation')
    .type('form')
    .send({ _csrf: csrfOf(form.text), token: u.searchParams.get('token') });
}

describe('the first person of a workspace, with a mail server', () => {
  let smtp: MailCatcher;
  let t: TestApp;
  let a: Workspace;

  beforeAll(async () => {
    smtp = await startMailCatcher();
    // An http PUBLIC_URL: supertest speaks plain http, and the page's cookies are Secure under an https one.
    t = await bootTestApp({ config: mailConfig(smtp.url, { publicUrl: 'http://herald.example.com' }) });
    a = await newWorkspace(t, 'A');
  });
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
  });
  const mailedLink = async (to: string) => {
    await drainMail(t);
    return mailedLinkTo(smtp, to);
  };

  it('makes the first person a login only once the mailed link is used', async () => {
    const res = await firstPerson(t, a.key, 'Ada@Example.test', 'Ada Owner');
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({
      mailed: true,
      link: null,
      invitation: { email: 'ada@example.test', role: 'owner', status: 'pending', firstPerson: true },
    });
    expect(await people(t, a.key)).toEqual([]);
    await expect(personAgent(t, 'ada@example.test')).rejects.toThrow(/401/);

    const link = await mailedLink('ada@example.test');
    const u = new URL(link);
    const browser = request.agent(t.app.getHttpServer());
    const page = await browser.get(u.pathname + u.search).expect(200);
    expect(page.text).toContain('Confirm your address');
    // Opening the link does nothing by itself (links in mails only open pages).
    expect(await people(t, a.key)).toEqual([]);
    const done = await browser
      .post('/settings/invitation')
      .type('form')
      .send({ _csrf: csrfOf(page.text), token: u.searchParams.get('token') });
    expect(done.status).toBe(303);
    expect((await browser.get('/settings/accounts')).text).toContain('Ada Owner &lt;ada@example.test&gt;');
    expect(await people(t, a.key)).toEqual(['ada@example.test owner']);
    // The password chosen when the person was added is theirs from now on.
    await personAgent(t, 'ada@example.test', TEST_PASSWORD);
    const audit = (await t.http().get('/v1/audit?kind=person').set(bearer(a.key)).expect(200)).body.data as { summary: string }[];
    expect(audit.map((e) => e.summary)).toContainEqual(expect.stringMatching(/^Ada Owner <ada@example.test> confirmed their address/));
  });

  it('answers a workspace the same whether or not the address logs in elsewhere, and makes no login for it', async () => {
    const b = await newWorkspace(t, 'B');
    const c = await newWorkspace(t, 'C');
    const taken = await firstPerson(t, b.key, 'ada@example.test');
    const fresh = await firstPerson(t, c.key, 'nobody.yet@example.test');
    expect(shape(taken)).toEqual(shape(fresh));
    expect(taken.status).toBe(202);
    expect(await people(t, b.key)).toEqual([]);

    // The mailbox's owner is told, on the page the mailed link opens; the workspace is not.
    const done = await confirm(t, await mailedLink('ada@example.test'));
    expect(done.status).toBe(409);
    expect(done.text).toContain('This address already logs in to Herald');
    expect(await people(t, b.key)).toEqual([]);
    expect(await people(t, a.key)).toEqual(['ada@example.test owner']);
  });

  it('lets a workspace invite an address that another workspace made its pending first person', async () => {
    const d = await newWorkspace(t, 'D');
    expect((await firstPerson(t, d.key, 'finn@example.test')).status).toBe(202);
    const pendingLink = await mailedLink('finn@example.test');

    const invited = await t.http().post('/v1/invitations').set(bearer(a.key)).send({ email: 'finn@example.test', role: 'editor' });
    expect(invited.status).toBe(201);
    await acceptInvitation(t, await mailedLink('finn@example.test'), 'Finn Editor');
    expect(await people(t, a.key)).toContain('finn@example.test editor');

    // D's link, used later by the same mailbox: the address logs in already.
    expect((await confirm(t, pendingLink)).status).toBe(409);
    expect(await people(t, d.key)).toEqual([]);
  });
});

describe('the first person of a workspace, without a mail server', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await bootTestApp({
      config: { allowPrivateUrls: true, notifications: { enabled: false, pollIntervalMs: 1000, sweepIntervalSeconds: 60 } },
    });
  });
  afterAll(() => t?.close());

  it("makes the server's very first person at once; another workspace's first person only through the link it hands over", async () => {
    const first = await firstPerson(t, t.adminKey, 'olga@example.test', 'Olga Owner');
    expect(first.status).toBe(201);
    await personAgent(t, 'olga@example.test');

    const w = await newWorkspace(t, 'W');
    const res = await firstPerson(t, w.key, 'wes@example.test', 'Wes Owner');
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({
      mailed: false,
      link: expect.stringContaining('/settings/invitation?token='),
      invitation: { status: 'pending' },
    });
    expect(await people(t, w.key)).toEqual([]);
    await expect(personAgent(t, 'wes@example.test')).rejects.toThrow(/401/);
    await confirmFirstPerson(t, res.body.link as string);
    expect(await people(t, w.key)).toEqual(['wes@example.test owner']);
    await personAgent(t, 'wes@example.test');

    // An address that logs in elsewhere gets the same answer as any other.
    const x = await newWorkspace(t, 'X');
    const y = await newWorkspace(t, 'Y');
    expect(shape(await firstPerson(t, x.key, 'olga@example.test'))).toEqual(shape(await firstPerson(t, y.key, 'yara@example.test')));
    expect(await people(t, x.key)).toEqual([]);
  });
});
