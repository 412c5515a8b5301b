import request from 'supertest';
import { TestApp } from './app';
import { drainMail, mailCatcherAt, mailedLinkTo } from './mail';
import { csrfOf, PageAgent } from './settings-http';
import { bearer } from './config';

/**
 * People in tests, made the way people are made: the first one through POST /v1/people (and its
 * confirmation link when the answer asks for one), the others by invitation (with no SMTP server
 * configured, POST /v1/invitations answers the link, which is then opened and its form sent as a
 * browser would).
 */
export const TEST_PASSWORD = 'correct horse battery staple';

/**
 * The workspace's first person, made as a key holder makes them (POST /v1/people). A 201 made
 * them at once (the very first person of a server without mail); a 202 asks for the address to be
 * proven first, so the link is used as the person would use it: the one in the answer (no mail
 * server), or the mailed one (the app's SMTP_URL must be a catcher of this test file: ./mail.ts).
 * The person's id.
 */
export async function createFirstPerson(t: TestApp, ownerKey: string, email: string, name = 'First Owner'): Promise<string> {
  const res = await t.http().post('/v1/people').set(bearer(ownerKey)).send({ email, name, password: TEST_PASSWORD });
  if (res.status === 201) return res.body.id as string;
  if (res.status !== 202) throw new Error(`first person: ${res.status} ${JSON.stringify(res.body)}`);
  let link = res.body.link as string | null;
  if (link === null) {
    const smtp = mailCatcherAt(t.config.smtpUrl);
    if (!smtp) throw new Error(`the confirmation link of ${email} went to ${t.config.smtpUrl}, which no mail catcher of this file serves`);
    await drainMail(t);
    link = await mailedLinkTo(smtp, email.toLowerCase());
  }
  await confirmFirstPerson(t, link);
  const people = await t.http().get('/v1/people?limit=200').set(bearer(ownerKey)).expect(200);
  const person = (people.body.data as { id: string; email: string }[]).find((p) => p.email === email.toLowerCase());
  if (!person) throw new Error(`${email} is not among the people after confirming`);
  return person.id;
}

/** Opens a first person's confirmation link and sends its one button, as a browser would; the agent is logged in afterwards. */
export async function confirmFirstPerson(t: TestApp, link: string) {
  const url = new URL(link);
  const agent = request.agent(t.app.getHttpServer());
  const form = await agent.get(`${url.pathname}${url.search}`);
  if (form.status !== 200) throw new Error(`confirmation page: ${form.status} ${form.text.slice(0, 300)}`);
  const done = await agent
    .post('/settings/invitation')
    .type('form')
    .send({ _csrf: csrfOf(form.text), token: url.searchParams.get('token') ?? '' });
  if (done.status !== 303) throw new Error(`confirming the address: ${done.status} ${done.text.slice(0, 500)}`);
  return agent;
}

/**
 * A person invites from the Team page (invitations made by a person, not a key). Without a mail
 * server the page shows the link once: it is read from there.
 */
export async function inviteOnPage(agent: PageAgent, csrf: string, email: string, role: 'owner' | 'editor' | 'viewer'): Promise<string> {
  const res = await agent.post('/settings/team/invitations').type('form').send({ _csrf: csrf, email, role });
  const code = /<code id="invite-link">([^<]+)<\/code>/.exec(res.text)?.[1];
  if (res.status !== 200 || !code) throw new Error(`invitation on the page: ${res.status} ${res.text.slice(0, 500)}`);
  // Handlebars escapes "=" in the link.
  return code.replace(/&#x3D;/g, '=').replace(/&amp;/g, '&');
}

/** Invites `email` with `role` and accepts the link; the new person's id and a logged-in page agent. */
export async function invitePerson(
  t: TestApp,
  ownerKey: string,
  email: string,
  role: 'owner' | 'editor' | 'viewer',
  name = 'Invited Person',
): Promise<{ id: string; agent: ReturnType<typeof request.agent> }> {
  const res = await t.http().post('/v1/invitations').set(bearer(ownerKey)).send({ email, role });
  if (res.status !== 201 || typeof res.body.link !== 'string') throw new Error(`invitation: ${res.status} ${JSON.stringify(res.body)}`);
  const agent = await acceptInvitation(t, res.body.link as string, name);
  const people = await t.http().get('/v1/people?limit=200').set(bearer(ownerKey)).expect(200);
  const person = (people.body.data as { id: string; email: string }[]).find((p) => p.email === email.toLowerCase());
  if (!person) throw new Error(`${email} is not among the people after accepting`);
  return { id: person.id, agent };
}

/** Opens an invitation link and sets a name and password; the agent is logged in afterwards. */
export async function acceptInvitation(t: TestApp, link: string, name: string, password = TEST_PASSWORD) {
  const url = new URL(link);
  const agent = request.agent(t.app.getHttpServer());
  const form = await agent.get(`${url.pathname}${url.search}`);
  if (form.status !== 200) throw new Error(`invitation page: ${form.status} ${form.text.slice(0, 300)}`);
  const token = url.searchParams.get('token') ?? '';
  const done = await agent
    .post('/settings/invitation')
    .type('form')
    .send({ _csrf: csrfOf(form.text), token, name, password, confirm: password });
  if (done.status !== 303) throw new Error(`accepting the invitation: ${done.status} ${done.text.slice(0, 500)}`);
  return agent;
}

/** Logs a person in through the login form; the agent and the CSRF token of its pages. */
export async function personAgent(t: TestApp, email: string, password = TEST_PASSWORD) {
  const agent = request.agent(t.app.getHttpServer());
  const form = await agent.get('/settings/login');
  const res = await agent
    .post('/settings/login')
    .type('form')
    .send({ _csrf: csrfOf(form.text), email, password });
  if (res.status !== 303) throw new Error(`person login: ${res.status} ${res.text.slice(0, 300)}`);
  const page = await agent.get('/settings/accounts');
  return { agent, csrf: csrfOf(page.text) };
}
