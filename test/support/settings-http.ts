import request from 'supertest';
import type { TestApp } from './app';

/**
 * The settings page over plain HTTP (supertest with a cookie jar), for what a browser is not
 * needed to prove: cookies, sessions, CSRF, the wrong-key slow-down.
 */
export type PageAgent = ReturnType<typeof request.agent>;

/** The value of a hidden `_csrf` field in a page's HTML. */
export function csrfOf(html: string): string {
  const m = /name="_csrf" value="([^"]+)"/.exec(html);
  if (!m) throw new Error(`no CSRF field in the page: ${html.slice(0, 300)}`);
  return m[1];
}

/** The Set-Cookie line of one cookie, or undefined. */
export function setCookie(res: { headers: Record<string, unknown> }, name: string): string | undefined {
  const raw = res.headers['set-cookie'];
  const lines = Array.isArray(raw) ? (raw as string[]) : typeof raw === 'string' ? [raw] : [];
  return lines.find((l) => l.startsWith(`${name}=`));
}

/** Fills and sends the login form like a browser: the form's token, its cookie, the key. */
export async function submitLogin(agent: PageAgent, apiKey: string, next?: string) {
  const form = await agent.get('/settings/login');
  return agent
    .post('/settings/login')
    .type('form')
    .send({ _csrf: csrfOf(form.text), apiKey, ...(next !== undefined ? { next } : {}) });
}

/** An agent with a live session, and the CSRF token of its forms. */
export async function loggedInAgent(t: TestApp, apiKey = t.adminKey): Promise<{ agent: PageAgent; csrf: string }> {
  const agent = request.agent(t.app.getHttpServer());
  const res = await submitLogin(agent, apiKey);
  if (res.status !== 303) throw new Error(`login failed: ${res.status} ${res.text.slice(0, 300)}`);
  const page = await agent.get('/settings/accounts');
  return { agent, csrf: csrfOf(page.text) };
}
