import { Body, Controller, Get, Param, Post, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { ParseIdPipe } from '../common/parse-id.pipe';
import { QueueSettingsDto } from '../posting-queue/posting-queue.dto';
import { PostingQueueService } from '../posting-queue/posting-queue.service';
import { WEEKDAYS } from '../posting-queue/queue-slots';
import type { PageSession } from '../people/session.types';
import { Public } from '../workspaces/auth';
import { AccountsPageService, PROVIDER_LABELS } from './accounts-page.service';
import { zoneOptions } from './compose/compose.controller';
import { asDto, FormProblem, personMessage } from './form-validation';
import { PageExceptionFilter } from './page-exception.filter';
import { PageRenderer } from './page-renderer';
import { DAY_NAMES, QueueFormValues, readQueueValues, slotsOf, valuesOf } from './queue-form';
import { PageRequest, requirePage } from './session/page-request';
import { PageSessionGuard } from './session/page-session.guard';

const accountId = new ParseIdPipe('account');

/** "3 slots a week in Europe/Berlin", "no slots". */
const summary = (s: { timezone: string; slots: readonly unknown[] }) =>
  s.slots.length === 0 ? 'no slots' : `${s.slots.length} slot${s.slots.length === 1 ? '' : 's'} a week in ${s.timezone}`;

/**
 * The posting queue's slots on the page (/settings/queue): the workspace's weekly slots, and an
 * account's own, which replace them for that account; through PostingQueueService, the rules of
 * `PUT /v1/settings/queue` and `PUT /v1/accounts/{id}/queue`. Posts take the slots from the
 * composer's "Add to queue"; the calendar shows the free ones.
 */
@ApiExcludeController()
@Public()
@UseGuards(PageSessionGuard)
@UseFilters(PageExceptionFilter)
@Controller('settings/queue')
export class QueuePageController {
  constructor(
    private readonly pages: PageRenderer,
    private readonly queue: PostingQueueService,
    private readonly accounts: AccountsPageService,
  ) {}

  @Get()
  async show(@Req() req: PageRequest, @Res() res: Response): Promise<void> {
    const session = requirePage(req);
    await this.showWorkspace(res, session, valuesOf(await this.queue.getWorkspace(session.auth.workspaceId)));
  }

  @Post()
  async save(@Req() req: PageRequest, @Res() res: Response, @Body() body: Record<string, unknown>): Promise<void> {
    const session = requirePage(req);
    const values = readQueueValues(body);
    try {
      const saved = await this.queue.putWorkspace(session.auth, await this.dtoOf(values));
      await this.pages.redirect(res, session, '/settings/queue', {
        tone: 'success',
        text: `Saved: the queue has ${summary(saved)}.`,
      });
    } catch (err) {
      const known = personMessage(err);
      if (!known) throw err;
      await this.showWorkspace(res, session, values, known.message, known.status);
    }
  }

  @Get('accounts/:id')
  async showAccount(@Req() req: PageRequest, @Res() res: Response, @Param('id', accountId) id: string): Promise<void> {
    const session = requirePage(req);
    const current = await this.queue.getAccount(session.auth.workspaceId, id);
    await this.showAccountForm(res, session, id, valuesOf(current));
  }

  @Post('accounts/:id')
  async saveAccount(
    @Req() req: PageRequest,
    @Res() res: Response,
    @Param('id', accountId) id: string,
    @Body() body: Record<string, unknown>,
  ): Promise<void> {
    const session = requirePage(req);
    const values = readQueueValues(body);
    try {
      const saved = await this.queue.putAccount(session.auth, id, await this.dtoOf(values));
      await this.pages.redirect(res, session, '/settings/queue', {
        tone: 'success',
        text: `Saved: the account has its own ${summary(saved)}, instead of the workspace's.`,
      });
    } catch (err) {
      const known = personMessage(err);
      if (!known) throw err;
      await this.showAccountForm(res, session, id, values, known.message, known.status);
    }
  }

  @Post('accounts/:id/reset')
  async resetAccount(@Req() req: PageRequest, @Res() res: Response, @Param('id', accountId) id: string): Promise<void> {
    const session = requirePage(req);
    await this.queue.removeAccount(session.auth, id);
    await this.pages.redirect(res, session, '/settings/queue', {
      tone: 'success',
      text: "Saved: the account follows the workspace's slots.",
    });
  }

  /** The form's slots, checked by the page (naming the day), then by the API's own rules. */
  private async dtoOf(values: QueueFormValues): Promise<QueueSettingsDto> {
    const read = slotsOf(values);
    if (!read.ok) throw new FormProblem(read.problem);
    return asDto(QueueSettingsDto, { timezone: values.timezone, slots: read.slots });
  }

  private async showWorkspace(res: Response, session: PageSession, values: QueueFormValues, error?: string, status = 400): Promise<void> {
    const ws = session.auth.workspaceId;
    const accounts = await Promise.all(
      (await this.accounts.all(ws)).map(async (a) => {
        const q = await this.queue.getAccount(ws, a.id);
        return { id: a.id, name: a.name, providerLabel: PROVIDER_LABELS[a.provider], own: q.source === 'account', summary: summary(q) };
      }),
    );
    await this.pages.render(
      res,
      'queue',
      { title: 'Posting queue', section: 'queue', session, status: error ? status : 200 },
      { form: this.form(values, '/settings/queue'), accounts, error },
    );
  }

  private async showAccountForm(
    res: Response,
    session: PageSession,
    id: string,
    values: QueueFormValues,
    error?: string,
    status = 400,
  ): Promise<void> {
    const ws = session.auth.workspaceId;
    const account = (await this.accounts.all(ws)).find((a) => a.id === id);
    const current = await this.queue.getAccount(ws, id);
    await this.pages.render(
      res,
      'queue-account',
      { title: `Posting queue of ${account?.name ?? 'an account'}`, section: 'queue', session, status: error ? status : 200 },
      {
        account: { id, name: account?.name ?? 'an account', providerLabel: account ? PROVIDER_LABELS[account.provider] : '' },
        own: current.source === 'account',
        form: this.form(values, `/settings/queue/accounts/${id}`),
        error,
      },
    );
  }

  private form(values: QueueFormValues, action: string) {
    return {
      action,
      timezone: values.timezone,
      zones: zoneOptions(values.timezone || 'UTC'),
      days: WEEKDAYS.map((d) => ({ key: d, name: DAY_NAMES[d], value: values.days[d] })),
    };
  }
}
