import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Response } from 'express';
import { ConnectOutcome, ConnectService } from '../../accounts/connect/connect.service';
import { HERALD_CONFIG, HeraldConfig } from '../../config/config';
import { JobsService } from '../../jobs/jobs.service';
import type { Provider } from '../../vocabulary/vocabulary';
import { personMessage } from '../form-validation';
import { field, isUuid } from '../page-input';
import { PageRenderer } from '../page-renderer';
import { cookie, isHttps, PageRequest, requirePage } from '../session/page-request';
import type { Flash, PageSession } from '../../people/session.types';
import { SessionsService } from '../../people/sessions.service';

/** How one platform's connect pages speak: its name, the cookie that ties its callback to the browser, and the message after a connect. */
export interface ConnectPageSpec {
  provider: Provider;
  label: string;
  cookie: string;
  /** Only the platform's own routes (start and callback) receive the cookie. */
  cookiePath: string;
  /** The page a new connect starts from: a refusal of the start goes back there with its message. */
  connectPage: string;
  /** The form field that says who or where to sign in, for a platform that needs to know first (Bluesky's handle, Mastodon's instance). */
  identifierField?: string;
  /**
   * How the browser goes on to the authorization server: `redirect`, a 303 (its origin is one
   * the page's form-action policy lists: a form's redirects are held to that policy); `page`, a
   * page that goes on by itself and has a link (the server is whichever one the person's
   * account names, so no policy can list it in advance).
   */
  continueWith: 'redirect' | 'page';
  connectedText(name: string, postingAs: string): string;
}

/**
 * The page's part of "Connect with …", shared by the platforms' controllers: reading the start
 * form, the browser's cookie, going on to the platform, and the callback's answer (the flash for
 * the accounts page and a page of its own). The flow itself is ConnectService's
 * (src/accounts/connect/).
 */
@Injectable()
export class ConnectPages {
  constructor(
    @Inject(HERALD_CONFIG) private readonly config: HeraldConfig,
    private readonly connect: ConnectService,
    private readonly sessions: SessionsService,
    private readonly jobs: JobsService,
    private readonly pages: PageRenderer,
  ) {}

  /**
   * The start form's POST (the route's guard checked the session and the CSRF token, so no
   * other site can start a flow in a person's name): a connect (`name`, and the platform's
   * identifier field) or a reconnect (`accountId`). A refusal goes back to the form it came
   * from, with its message.
   */
  async start(req: PageRequest, res: Response, body: Record<string, unknown>, spec: ConnectPageSpec): Promise<void> {
    const session = requirePage(req);
    const accountId = field(body, 'accountId');
    const name = field(body, 'name');
    const identifier = spec.identifierField ? field(body, spec.identifierField) : '';
    // A refused new connect goes back to its form with what was typed (a name, a handle, an instance: nothing secret).
    const typed = new URLSearchParams({
      ...(name ? { name } : {}),
      ...(spec.identifierField && identifier ? { [spec.identifierField]: identifier } : {}),
    });
    const back = accountId
      ? `/settings/accounts/${accountId}/reconnect`
      : `${spec.connectPage}${typed.size > 0 ? `?${typed.toString()}` : ''}`;
    try {
      const target =
        accountId !== '' && isUuid(accountId)
          ? { accountId: accountId.toLowerCase() }
          : { name, ...(spec.identifierField ? { identifier } : {}) };
      const { url, host, browserToken, ttlMs } = await this.connect.start(session, spec.provider, target);
      this.keepBrowserToken(res, spec, browserToken, ttlMs);
      if (spec.continueWith === 'redirect') {
        res.redirect(303, url);
        return;
      }
      await this.pages.render(
        res,
        'connect-continue',
        { title: `Continue to ${spec.label}`, section: 'accounts', session },
        { url, host, label: spec.label, refreshTo: url },
      );
    } catch (err) {
      const known = personMessage(err);
      if (!known) throw err;
      await this.pages.redirect(res, session, back, { tone: 'error', text: known.message });
    }
  }

  /**
   * The platform's redirect back (`query`: `code` and `state`, or `error`). The session cookie
   * does not come with this cross-site navigation: the state (bound to the session and this
   * browser's cookie) says whose flow it is.
   */
  async callbackFrom(req: PageRequest, res: Response, query: Record<string, unknown>, spec: ConnectPageSpec): Promise<void> {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(query)) if (typeof value === 'string' && value.length <= 4096) params.set(name, value);
    await this.callback(res, spec, () =>
      this.connect.callback(spec.provider, params, cookie(req, spec.cookie), (id) => this.sessions.resolveById(id)),
    );
  }

  /**
   * Keeps the flow's browser value in a cookie until the callback. SameSite=Lax: the platform's
   * redirect back is a cross-site top-level GET, which carries Lax cookies but not the Strict
   * session cookie.
   */
  private keepBrowserToken(res: Response, spec: ConnectPageSpec, browserToken: string, ttlMs: number): void {
    res.cookie(spec.cookie, browserToken, {
      httpOnly: true,
      secure: isHttps(this.config, res.req),
      sameSite: 'lax',
      path: spec.cookiePath,
      maxAge: ttlMs,
    });
  }

  /**
   * Answers the platform's redirect back with ConnectService's outcome (`run`): a success leaves
   * its message for the accounts page, and the answer is a page of its own that goes on to the
   * accounts page with a same-site navigation (where the session cookie is sent again).
   */
  private async callback(res: Response, spec: ConnectPageSpec, run: () => Promise<ConnectOutcome<PageSession>>): Promise<void> {
    let outcome: ConnectOutcome<PageSession>;
    try {
      outcome = await run();
    } catch (err) {
      const known = personMessage(err);
      if (!known) throw err;
      outcome = { ok: false, status: known.status, message: `${known.message}. Nothing was changed.`, session: null, stateUsed: true };
    }
    let message: string;
    if (outcome.ok) {
      const { account, session } = outcome;
      if (outcome.kind === 'connected') {
        await this.sessions.flash(session, { tone: 'success', text: spec.connectedText(account.name, outcome.postingAs) });
        message = `${spec.label} account “${account.name}” connected.`;
      } else {
        const dead = (await this.jobs.accountActivity(session.auth.workspaceId, [account.id])).get(account.id)?.dead ?? 0;
        await this.sessions.flash(session, reconnectedFlash(account.name, outcome.resumed, dead, account.id));
        message = `${spec.label} account “${account.name}” reconnected.`;
      }
    } else {
      message = outcome.message;
    }
    // Only a matching state uses the browser's cookie up: a forged link must not spoil the
    // person's own flow in progress.
    if (outcome.stateUsed) res.clearCookie(spec.cookie, { path: spec.cookiePath });
    if (!outcome.ok) new Logger(`${spec.label}Connect`).warn(`${spec.label} connect refused: ${outcome.message}`);
    await this.pages.render(
      res,
      'connect-done',
      {
        title: `${spec.label} ${outcome.ok ? 'connected' : 'not connected'}`,
        section: null,
        session: null,
        status: outcome.ok ? 200 : outcome.status,
      },
      { ok: outcome.ok, message, loggedIn: outcome.session !== null, refreshTo: outcome.ok ? '/settings/accounts' : null },
    );
  }
}

/** The message after new credentials were saved: what resumed, and one click to requeue the failed posts. */
export function reconnectedFlash(name: string, resumed: number, dead: number, accountId: string): Flash {
  const posts = (n: number) => `${n} post${n === 1 ? '' : 's'}`;
  const going =
    resumed === 1
      ? ' The post waiting for it is going out now.'
      : resumed > 1
        ? ` The ${resumed} posts waiting for it are going out now.`
        : '';
  const text = `“${name}” reconnected.${going}`;
  if (dead === 0) return { tone: 'success', text };
  return {
    tone: 'success',
    text: `${text} It has ${posts(dead)} in the failed posts.`,
    followUp: { label: `Requeue its ${posts(dead)}`, action: `/settings/accounts/${accountId}/requeue-failed` },
  };
}
