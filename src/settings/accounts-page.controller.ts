import { Body, Controller, Get, Param, Post, Query, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { CreateAccountDto, UpdateAccountDto } from '../accounts/accounts.dto';
import { AccountsService } from '../accounts/accounts.service';
import { ConnectService } from '../accounts/connect/connect.service';
import { DomainError, ErrorCode } from '../common/errors';
import { ParseIdPipe } from '../common/parse-id.pipe';
import type { Provider } from '../vocabulary/vocabulary';
import { BulkRequeueDto } from '../dead-letter/dead-letter.dto';
import { DeadLetterService } from '../dead-letter/dead-letter.service';
import { JobsService } from '../jobs/jobs.service';
import { Public } from '../workspaces/auth';
import { AccountCard, AccountsPageService, PROVIDER_LABELS } from './accounts-page.service';
import { asDto, FormProblem, personMessage } from './form-validation';
import { reconnectedFlash } from './connect/connect-pages';
import { PageExceptionFilter } from './page-exception.filter';
import { APP_PASSWORD_PATTERN, field, looksLikeAppPassword } from './page-input';
import { PageRenderer } from './page-renderer';
import { PageRequest, requirePage } from './session/page-request';
import { PageSessionGuard } from './session/page-session.guard';
import type { PageSession } from '../people/session.types';

const accountId = new ParseIdPipe('account');
const CONNECTABLE: Provider[] = ['bluesky', 'linkedin', 'mastodon', 'webhook'];

/** The values a connect or reconnect form is shown again with after a refusal (never a secret). */
type FormValues = Record<string, string>;

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * The accounts page: one card per account with its health, and the forms to connect, check,
 * reconnect, disable/enable, remove and rotate. Every change goes through AccountsService, so the
 * connectors validate the page's input exactly as they validate the API's.
 */
@ApiExcludeController()
@Public()
@UseGuards(PageSessionGuard)
@UseFilters(PageExceptionFilter)
@Controller('settings/accounts')
export class AccountsPageController {
  constructor(
    private readonly pages: PageRenderer,
    private readonly cards: AccountsPageService,
    private readonly accounts: AccountsService,
    private readonly connectFlows: ConnectService,
    private readonly jobs: JobsService,
    private readonly dlq: DeadLetterService,
  ) {}

  @Get()
  async list(@Req() req: PageRequest, @Res() res: Response): Promise<void> {
    const session = requirePage(req);
    const cards = await this.cards.cards(session.auth.workspaceId);
    await this.pages.render(
      res,
      'accounts',
      { title: 'Accounts', section: 'accounts', session },
      { accounts: cards, empty: cards.length === 0 },
    );
  }

  // ---- connect ------------------------------------------------------------------------------

  /** The form; after a refused "Connect with …", the query carries back what was typed (name, handle or DID, instance). */
  @Get('connect/:provider')
  async connectForm(
    @Req() req: PageRequest,
    @Res() res: Response,
    @Param('provider') provider: string,
    @Query() query: Record<string, unknown>,
  ): Promise<void> {
    const session = requirePage(req);
    const values: FormValues = {};
    for (const key of ['name', 'identifier', 'instanceUrl']) {
      const value = field(query, key);
      if (value !== '' && value.length <= 2048) values[key] = value;
    }
    await this.showConnect(res, session, this.provider(provider), values);
  }

  @Post('connect/:provider')
  async connect(
    @Req() req: PageRequest,
    @Res() res: Response,
    @Param('provider') raw: string,
    @Body() body: Record<string, unknown>,
  ): Promise<void> {
    const session = requirePage(req);
    const provider = this.provider(raw);
    const name = field(body, 'name');
    const values: FormValues = { name };
    try {
      const config = this.configFrom(provider, body, values);
      // An empty name: the platform's own where it has one (a Mastodon account's display name); the others refuse it.
      const created = await this.accounts.create(
        session.auth,
        await asDto(CreateAccountDto, { provider, ...(name !== '' ? { name } : {}), config }),
      );
      if (created.secret) {
        // The signing secret is shown in this answer and stored nowhere the page can read again.
        await this.pages.render(
          res,
          'secret',
          { title: 'Signing secret', section: 'accounts', session },
          { account: created, secret: created.secret, created: true },
        );
        return;
      }
      const check = await this.accounts.verify(session.auth.workspaceId, created.id);
      await this.pages.redirect(res, session, '/settings/accounts', {
        tone: check.ok ? 'success' : 'error',
        text: check.ok
          ? `“${created.name}” connected. Check: ${check.message}.`
          : `“${created.name}” was saved, but the check failed: ${check.message}. Reconnect it with working credentials.`,
      });
    } catch (err) {
      const known = personMessage(err);
      if (!known) throw err;
      await this.showConnect(res, session, provider, values, known.message, known.status);
    }
  }

  private provider(raw: string): Provider {
    const p = CONNECTABLE.find((x) => x === raw);
    if (!p)
      throw new DomainError(
        ErrorCode.NotFound,
        `There is no ${raw.slice(0, 40)} connector; Herald connects Bluesky, LinkedIn, Mastodon and blog webhooks.`,
      );
    return p;
  }

  /** The API `config` of a connect or reconnect form; throws a message for a person on the page's own checks. */
  private configFrom(provider: Provider, body: unknown, values: FormValues): Record<string, unknown> {
    switch (provider) {
      case 'bluesky': {
        const identifier = field(body, 'identifier');
        const service = field(body, 'service');
        const appPassword = field(body, 'appPassword');
        Object.assign(values, { identifier, service });
        if (!looksLikeAppPassword(appPassword)) {
          throw new FormProblem(
            'That is not an app password. Create one in Bluesky (Settings → Privacy and security → App passwords): it looks like xxxx-xxxx-xxxx-xxxx. Your main password, and logins that need an email code, do not work here.',
          );
        }
        return { identifier, appPassword, ...(service ? { service } : {}) };
      }
      case 'webhook': {
        const url = field(body, 'url');
        values.url = url;
        return { url };
      }
      case 'mastodon': {
        const instanceUrl = field(body, 'instanceUrl');
        values.instanceUrl = instanceUrl;
        // "mastodon.social" is how people name an instance: the scheme is https unless given.
        const withScheme = instanceUrl !== '' && !/^[a-z][a-z0-9+.-]*:\/\//i.test(instanceUrl) ? `https://${instanceUrl}` : instanceUrl;
        return { instanceUrl: withScheme, accessToken: field(body, 'accessToken') };
      }
      case 'linkedin': {
        const authorUrn = field(body, 'authorUrn');
        const expiresOn = field(body, 'expiresOn');
        Object.assign(values, { authorUrn, expiresOn });
        let expiresAt: string | undefined;
        if (expiresOn !== '') {
          if (!/^\d{4}-\d{2}-\d{2}$/.test(expiresOn)) throw new FormProblem('The expiry date must be a date such as 2027-01-31.');
          expiresAt = `${expiresOn}T00:00:00Z`;
        }
        return { accessToken: field(body, 'accessToken'), authorUrn, ...(expiresAt ? { expiresAt } : {}) };
      }
    }
  }

  private async showConnect(
    res: Response,
    session: PageSession,
    provider: Provider,
    values: FormValues,
    error?: string,
    status = 400,
  ): Promise<void> {
    await this.pages.render(
      res,
      `connect-${provider}`,
      { title: `Connect ${PROVIDER_LABELS[provider]}`, section: 'accounts', session, status: error ? status : 200 },
      {
        values,
        error,
        appPasswordPattern: APP_PASSWORD_PATTERN,
        oauth: this.connectFlows.available('linkedin'),
        blueskyOAuth: this.connectFlows.available('bluesky'),
      },
    );
  }

  // ---- one account ---------------------------------------------------------------------------

  @Post(':id/check')
  async check(@Req() req: PageRequest, @Res() res: Response, @Param('id', accountId) id: string): Promise<void> {
    const session = requirePage(req);
    const account = await this.accounts.get(session.auth.workspaceId, id);
    const result = await this.accounts.verify(session.auth.workspaceId, id);
    const details = result.details ?? {};
    // A refused credential means one thing for a person: sign in again.
    const refused = details.httpStatus === 401 || details.httpStatus === 403 || details.errorClass === 'auth';
    await this.pages.redirect(res, session, `/settings/accounts#account-${id}`, {
      tone: result.ok ? 'success' : 'error',
      text: result.ok
        ? `“${account.name}”: ${result.message}.`
        : refused
          ? `“${account.name}” needs to be re-authenticated: ${result.message}.`
          : `“${account.name}”: the check failed: ${result.message}.`,
      ...(refused ? { followUp: { label: 'Reconnect', href: `/settings/accounts/${id}/reconnect` } } : {}),
    });
  }

  @Get(':id/reconnect')
  async reconnectForm(@Req() req: PageRequest, @Res() res: Response, @Param('id', accountId) id: string): Promise<void> {
    const session = requirePage(req);
    const card = await this.cards.card(session.auth.workspaceId, id);
    const account = await this.accounts.get(session.auth.workspaceId, id);
    const c = account.config;
    const str = (v: unknown) => (typeof v === 'string' ? v : '');
    const values: FormValues = {
      identifier: str(c.identifier),
      service: str(c.service),
      url: str(c.url),
      authorUrn: str(c.authorUrn),
      instanceUrl: str(c.instanceUrl),
    };
    await this.showReconnect(res, session, card, values);
  }

  @Post(':id/reconnect')
  async reconnect(
    @Req() req: PageRequest,
    @Res() res: Response,
    @Param('id', accountId) id: string,
    @Body() body: Record<string, unknown>,
  ): Promise<void> {
    const session = requirePage(req);
    const ws = session.auth.workspaceId;
    const card = await this.cards.card(ws, id);
    const values: FormValues = {};
    try {
      const config = this.configFrom(card.provider, body, values);
      const updated = await this.accounts.update(session.auth, id, await asDto(UpdateAccountDto, { config }));
      if (updated.secret) {
        // Moved to another origin: a new signing secret, shown in this answer only.
        await this.pages.render(
          res,
          'secret',
          { title: 'Signing secret', section: 'accounts', session },
          { account: updated, secret: updated.secret, created: false, moved: true },
        );
        return;
      }
      await this.pages.redirect(
        res,
        session,
        `/settings/accounts#account-${id}`,
        reconnectedFlash(updated.name, card.status !== 'active' ? card.paused : 0, card.dead, id),
      );
    } catch (err) {
      const known = personMessage(err);
      if (!known) throw err;
      await this.showReconnect(res, session, card, values, known.message, known.status);
    }
  }

  private async showReconnect(
    res: Response,
    session: PageSession,
    card: AccountCard,
    values: FormValues,
    error?: string,
    status = 400,
  ): Promise<void> {
    await this.pages.render(
      res,
      'reconnect',
      { title: `Reconnect ${card.name}`, section: 'accounts', session, status: error ? status : 200 },
      {
        account: card,
        values,
        error,
        appPasswordPattern: APP_PASSWORD_PATTERN,
        oauth: this.connectFlows.available('linkedin'),
        blueskyOAuth: this.connectFlows.available('bluesky'),
        isBluesky: card.provider === 'bluesky',
      },
    );
  }

  @Post(':id/disable')
  async disable(@Req() req: PageRequest, @Res() res: Response, @Param('id', accountId) id: string): Promise<void> {
    const session = requirePage(req);
    const updated = await this.accounts.update(session.auth, id, await asDto(UpdateAccountDto, { status: 'disabled' }));
    await this.pages.redirect(res, session, `/settings/accounts#account-${id}`, {
      tone: 'info',
      text: `“${updated.name}” is disabled. Its posts wait (paused) until you enable it.`,
    });
  }

  @Post(':id/enable')
  async enable(@Req() req: PageRequest, @Res() res: Response, @Param('id', accountId) id: string): Promise<void> {
    const session = requirePage(req);
    const before = await this.cards.card(session.auth.workspaceId, id);
    const updated = await this.accounts.update(session.auth, id, await asDto(UpdateAccountDto, { status: 'active' }));
    const resumed = before.status !== 'active' ? before.paused : 0;
    await this.pages.redirect(res, session, `/settings/accounts#account-${id}`, {
      tone: 'success',
      text: `“${updated.name}” is enabled.${resumed > 0 ? ` Its ${plural(resumed, 'waiting post')} ${resumed === 1 ? 'is' : 'are'} going out now.` : ''}`,
    });
  }

  @Get(':id/remove')
  async removeForm(@Req() req: PageRequest, @Res() res: Response, @Param('id', accountId) id: string): Promise<void> {
    const session = requirePage(req);
    const card = await this.cards.card(session.auth.workspaceId, id);
    await this.pages.render(res, 'remove', { title: `Remove ${card.name}`, section: 'accounts', session }, { account: card });
  }

  @Post(':id/remove')
  async remove(@Req() req: PageRequest, @Res() res: Response, @Param('id', accountId) id: string): Promise<void> {
    const session = requirePage(req);
    const card = await this.cards.card(session.auth.workspaceId, id);
    await this.accounts.remove(session.auth, id);
    await this.pages.redirect(res, session, '/settings/accounts', {
      tone: 'info',
      text: `“${card.name}” was removed.${card.waiting > 0 ? ` Its ${plural(card.waiting, 'waiting post')} ${card.waiting === 1 ? 'was' : 'were'} cancelled.` : ''}`,
    });
  }

  @Get(':id/rotate-secret')
  async rotateForm(@Req() req: PageRequest, @Res() res: Response, @Param('id', accountId) id: string): Promise<void> {
    const session = requirePage(req);
    const card = await this.cards.card(session.auth.workspaceId, id);
    if (!card.isWebhook) throw new DomainError(ErrorCode.NotFound, `“${card.name}” has no signing secret: only blog webhooks do.`);
    await this.pages.render(
      res,
      'rotate',
      { title: `New signing secret for ${card.name}`, section: 'accounts', session },
      { account: card },
    );
  }

  @Post(':id/rotate-secret')
  async rotate(@Req() req: PageRequest, @Res() res: Response, @Param('id', accountId) id: string): Promise<void> {
    const session = requirePage(req);
    const rotated = await this.accounts.rotateSecret(session.auth, id);
    await this.pages.render(
      res,
      'secret',
      { title: 'Signing secret', section: 'accounts', session },
      { account: rotated, secret: rotated.secret, created: false },
    );
  }

  /** "One click to requeue that account's failed posts" (offered after a reconnect). */
  @Post(':id/requeue-failed')
  async requeueFailed(@Req() req: PageRequest, @Res() res: Response, @Param('id', accountId) id: string): Promise<void> {
    const session = requirePage(req);
    const account = await this.accounts.get(session.auth.workspaceId, id);
    const result = await this.dlq.bulkRequeue(session.auth, await asDto(BulkRequeueDto, { filter: { accountId: id } }));
    const skipped =
      result.skipped.length > 0 ? ` ${plural(result.skipped.length, 'post')} could not be: ${result.skipped[0].message}.` : '';
    await this.pages.redirect(res, session, `/settings/accounts#account-${id}`, {
      tone: result.skipped.length > 0 ? 'error' : 'success',
      text: `${plural(result.requeued, 'failed post')} of “${account.name}” ${result.requeued === 1 ? 'is' : 'are'} back in the queue.${skipped}`,
    });
  }
}
