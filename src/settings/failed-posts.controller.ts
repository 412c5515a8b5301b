import { Body, Controller, Get, Param, Post, Query, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { ParseIdPipe } from '../common/parse-id.pipe';
import { ERROR_CLASSES, PROVIDERS } from '../vocabulary/vocabulary';
import { BulkRequeueDto, EditDeadJobDto, ListDlqQuery } from '../dead-letter/dead-letter.dto';
import { DeadLetterService } from '../dead-letter/dead-letter.service';
import type { DlqDetailView } from '../dead-letter/dead-letter.types';
import { limitsFor } from '../posts/platform-rules';
import { Public } from '../workspaces/auth';
import { AccountsPageService, PROVIDER_LABELS } from './accounts-page.service';
import { asDto, personMessage } from './form-validation';
import { PageExceptionFilter } from './page-exception.filter';
import { deadSince, DEAD_WITHIN, field, fields, isUuid, rawField } from './page-input';
import { PageRenderer } from './page-renderer';
import { PageRequest, requirePage } from './session/page-request';
import { PageSessionGuard } from './session/page-session.guard';
import type { PageSession } from '../people/session.types';

const jobId = new ParseIdPipe('failed post');
/** The classes a failed post can have failed with: every outcome class but success. */
const FAILURE_CLASSES = ERROR_CLASSES.filter((c) => c !== 'success');
const PAGE_SIZE = 50;
/** "All that match" touches at most this many posts per click (the message says when more remain). */
const MAX_BULK = 1_000;

/** The list's filters as the page's query string carries them. */
interface Filters {
  account: string;
  provider: string;
  errorClass: string;
  within: string;
  q: string;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

function filtersFrom(source: unknown): Filters {
  const account = field(source, 'account');
  const provider = field(source, 'provider');
  const errorClass = field(source, 'errorClass');
  const within = field(source, 'within');
  return {
    account: isUuid(account) ? account.toLowerCase() : '',
    provider: (PROVIDERS as readonly string[]).includes(provider) ? provider : '',
    errorClass: (FAILURE_CLASSES as readonly string[]).includes(errorClass) ? errorClass : '',
    within: within in DEAD_WITHIN ? within : '',
    q: field(source, 'q').slice(0, 200),
  };
}

function queryString(f: Filters, extra: Record<string, string> = {}): string {
  const entries = Object.entries({ ...f, ...extra }).filter(([, v]) => v !== '');
  return entries.length ? `?${new URLSearchParams(entries).toString()}` : '';
}

/** The DLQ filter the API takes, from the page's filters. */
function dlqFilter(f: Filters, now: Date) {
  return {
    ...(f.account ? { accountId: f.account } : {}),
    ...(f.provider ? { provider: f.provider } : {}),
    ...(f.errorClass ? { errorClass: f.errorClass } : {}),
    ...(f.within ? { from: deadSince(f.within, now) } : {}),
    ...(f.q ? { q: f.q } : {}),
  };
}

/**
 * The failed posts (the dead-letter queue): the list with filters and bulk actions, one post
 * with its attempt history, the edit form and requeue/discard. Every change goes through
 * DeadLetterService (the API's rules, the audit trail with the session's API key).
 * The URLs are fixed: the digest mail links to them.
 */
@ApiExcludeController()
@Public()
@UseGuards(PageSessionGuard)
@UseFilters(PageExceptionFilter)
@Controller('settings/failed-posts')
export class FailedPostsController {
  constructor(
    private readonly pages: PageRenderer,
    private readonly dlq: DeadLetterService,
    private readonly accounts: AccountsPageService,
  ) {}

  @Get()
  async list(@Req() req: PageRequest, @Res() res: Response, @Query() query: Record<string, unknown>): Promise<void> {
    const session = requirePage(req);
    const filters = filtersFrom(query);
    const cursor = field(query, 'cursor');
    const dto = await asDto(ListDlqQuery, { ...dlqFilter(filters, new Date()), limit: PAGE_SIZE, ...(cursor ? { cursor } : {}) });
    const page = await this.dlq.list(session.auth.workspaceId, dto);
    const accounts = await this.accounts.all(session.auth.workspaceId);
    const filtered = Object.values(filters).some((v) => v !== '');
    await this.pages.render(
      res,
      'failed-posts',
      { title: 'Failed posts', section: 'failed', session },
      {
        entries: page.data.map((e) => ({ ...e, providerLabel: PROVIDER_LABELS[e.provider], excerpt: excerpt(e.text) })),
        empty: page.data.length === 0,
        filtered,
        filters,
        nextUrl: page.nextCursor ? `/settings/failed-posts${queryString(filters, { cursor: page.nextCursor })}` : null,
        firstUrl: cursor ? `/settings/failed-posts${queryString(filters)}` : null,
        accountOptions: accounts.map((a) => ({ id: a.id, name: a.name, selected: a.id === filters.account })),
        providerOptions: PROVIDERS.map((p) => ({ value: p, label: PROVIDER_LABELS[p], selected: p === filters.provider })),
        classOptions: FAILURE_CLASSES.map((c) => ({ value: c, selected: c === filters.errorClass })),
        withinOptions: [
          { value: '24h', label: 'Last 24 hours' },
          { value: '7d', label: 'Last 7 days' },
          { value: '30d', label: 'Last 30 days' },
        ].map((o) => ({ ...o, selected: o.value === filters.within })),
      },
    );
  }

  /** Requeue or discard the selected posts, or every post that matches the filters. */
  @Post('bulk')
  async bulk(@Req() req: PageRequest, @Res() res: Response, @Body() body: Record<string, unknown>): Promise<void> {
    const session = requirePage(req);
    const filters = filtersFrom(body);
    const back = `/settings/failed-posts${queryString(filters)}`;
    const action = field(body, 'action');
    const all = action.endsWith('-all');
    const ids = fields(body, 'ids').filter(isUuid);
    if (!all && ids.length === 0) {
      await this.pages.redirect(res, session, back, {
        tone: 'error',
        text: 'Select at least one failed post first (or use the “all that match” buttons).',
      });
      return;
    }
    try {
      if (action === 'requeue-selected' || action === 'requeue-all') {
        const dto = await asDto(BulkRequeueDto, all ? { filter: dlqFilter(filters, new Date()) } : { ids: ids.slice(0, MAX_BULK) });
        const result = await this.dlq.bulkRequeue(session.auth, dto);
        const skipped = result.skipped.length
          ? ` ${plural(result.skipped.length, 'post')} stayed: ${result.skipped[0].message}${result.skipped.length > 1 ? ' (and others)' : ''}.`
          : '';
        await this.pages.redirect(res, session, back, {
          tone: result.skipped.length ? 'error' : 'success',
          text: `${plural(result.requeued, 'post')} back in the queue.${skipped}${result.more ? ' More posts match: run it again for the rest.' : ''}`,
        });
        return;
      }
      if (action === 'discard-selected' || action === 'discard-all') {
        const targets = all ? await this.matchingIds(session, filters) : { ids: ids.slice(0, MAX_BULK), more: false };
        let discarded = 0;
        const problems: string[] = [];
        for (const id of targets.ids) {
          try {
            await this.dlq.discard(session.auth, id);
            discarded++;
          } catch (err) {
            const known = personMessage(err);
            if (!known) throw err;
            problems.push(known.message);
          }
        }
        await this.pages.redirect(res, session, back, {
          tone: problems.length ? 'error' : 'success',
          text: `${plural(discarded, 'post')} discarded (kept with their history, out of this list).${problems.length ? ` ${plural(problems.length, 'post')} stayed: ${problems[0]}.` : ''}${targets.more ? ' More posts match: run it again for the rest.' : ''}`,
        });
        return;
      }
    } catch (err) {
      const known = personMessage(err);
      if (!known) throw err;
      await this.pages.redirect(res, session, back, { tone: 'error', text: known.message });
      return;
    }
    await this.pages.redirect(res, session, back, { tone: 'error', text: 'Unknown action; nothing was changed.' });
  }

  private async matchingIds(session: PageSession, filters: Filters): Promise<{ ids: string[]; more: boolean }> {
    const ids: string[] = [];
    let cursor: string | undefined;
    const now = new Date();
    do {
      const dto = await asDto(ListDlqQuery, { ...dlqFilter(filters, now), limit: 200, ...(cursor ? { cursor } : {}) });
      const page = await this.dlq.list(session.auth.workspaceId, dto);
      ids.push(...page.data.map((e) => e.id));
      cursor = page.nextCursor ?? undefined;
    } while (cursor && ids.length < MAX_BULK);
    return { ids: ids.slice(0, MAX_BULK), more: cursor !== undefined || ids.length > MAX_BULK };
  }

  @Get(':jobId')
  async detail(@Req() req: PageRequest, @Res() res: Response, @Param('jobId', jobId) id: string): Promise<void> {
    const session = requirePage(req);
    const job = await this.dlq.get(session.auth.workspaceId, id);
    await this.showDetail(res, session, job, {
      text: job.payload.text,
      title: job.payload.title ?? '',
      link: job.payload.link ?? '',
      thread: (job.payload.thread ?? []).map((p) => ({ text: p.text, link: p.link ?? '' })),
    });
  }

  /** Saves the edit (the API's rules: the platform's limit included); "save and requeue" sends it too. */
  @Post(':jobId/edit')
  async edit(
    @Req() req: PageRequest,
    @Res() res: Response,
    @Param('jobId', jobId) id: string,
    @Body() body: Record<string, unknown>,
  ): Promise<void> {
    const session = requirePage(req);
    const current = await this.dlq.get(session.auth.workspaceId, id);
    const parts = current.payload.thread ?? [];
    // A thread's parts already published have no fields in the form: their values stay as they are.
    const publishedParts = new Set((current.parts ?? []).filter((p) => p.published).map((p) => p.part));
    const values: FormValues = {
      text: rawField(body, 'text'),
      title: field(body, 'title'),
      link: field(body, 'link'),
      thread: parts.map((p, i) =>
        publishedParts.has(i + 2)
          ? { text: p.text, link: p.link ?? '' }
          : { text: rawField(body, `thread-${i}-text`), link: field(body, `thread-${i}-link`) },
      ),
    };
    try {
      const firstEditable = !publishedParts.has(1);
      const threadEdits = parts
        .map((_, i) => i)
        .filter((i) => !publishedParts.has(i + 2))
        .map((i) => ({ index: i, text: values.thread[i].text, link: values.thread[i].link === '' ? null : values.thread[i].link }));
      const dto = await asDto(EditDeadJobDto, {
        ...(firstEditable
          ? { text: values.text, title: values.title === '' ? null : values.title, link: values.link === '' ? null : values.link }
          : {}),
        ...(threadEdits.length > 0 ? { thread: threadEdits } : {}),
      });
      await this.dlq.edit(session.auth, id, dto);
    } catch (err) {
      const known = personMessage(err);
      if (!known) throw err;
      const job = await this.dlq.get(session.auth.workspaceId, id);
      await this.showDetail(res, session, job, values, known.message, known.status);
      return;
    }
    if (field(body, 'then') === 'requeue') {
      await this.requeueAndRedirect(res, session, id, false, 'Saved. ');
      return;
    }
    await this.pages.redirect(res, session, `/settings/failed-posts/${id}`, {
      tone: 'success',
      text: 'Saved. Requeue it to send the new version.',
    });
  }

  @Post(':jobId/requeue')
  async requeue(
    @Req() req: PageRequest,
    @Res() res: Response,
    @Param('jobId', jobId) id: string,
    @Body() body: Record<string, unknown>,
  ): Promise<void> {
    await this.requeueAndRedirect(res, requirePage(req), id, field(body, 'force') === 'yes', '');
  }

  private async requeueAndRedirect(res: Response, session: PageSession, id: string, force: boolean, prefix: string): Promise<void> {
    try {
      const job = await this.dlq.requeue(session.auth, id, force ? { force: true } : {});
      await this.pages.redirect(res, session, `/settings/failed-posts/${id}`, {
        tone: 'success',
        text: `${prefix}${job.status === 'paused' ? 'Requeued: it waits (paused) until its account is fixed.' : 'Requeued: it is going out now.'}`,
      });
    } catch (err) {
      const known = personMessage(err);
      if (!known) throw err;
      const notActive = known.status === 409 && /needs re-authentication|is disabled/.test(known.message);
      await this.pages.redirect(res, session, `/settings/failed-posts/${id}`, {
        tone: 'error',
        text: `${prefix}Not requeued: ${known.message}.`,
        ...(notActive
          ? {
              followUp: {
                label: 'Requeue anyway (it waits until the account is fixed)',
                action: `/settings/failed-posts/${id}/requeue-waiting`,
              },
            }
          : {}),
      });
    }
  }

  /** "Requeue anyway": the job waits as paused until its account is fixed (the API's force). */
  @Post(':jobId/requeue-waiting')
  async requeueWaiting(@Req() req: PageRequest, @Res() res: Response, @Param('jobId', jobId) id: string): Promise<void> {
    await this.requeueAndRedirect(res, requirePage(req), id, true, '');
  }

  @Post(':jobId/discard')
  async discard(@Req() req: PageRequest, @Res() res: Response, @Param('jobId', jobId) id: string): Promise<void> {
    const session = requirePage(req);
    try {
      await this.dlq.discard(session.auth, id);
      await this.pages.redirect(res, session, '/settings/failed-posts', {
        tone: 'success',
        text: 'Discarded. It is kept with its history, out of the failed posts.',
      });
    } catch (err) {
      const known = personMessage(err);
      if (!known) throw err;
      await this.pages.redirect(res, session, `/settings/failed-posts/${id}`, { tone: 'error', text: `Not discarded: ${known.message}.` });
    }
  }

  private async showDetail(
    res: Response,
    session: PageSession,
    job: DlqDetailView,
    values: FormValues,
    error?: string,
    status = 400,
  ): Promise<void> {
    // The account's own limits (a Mastodon instance's), when it still exists.
    const account = (await this.accounts.all(session.auth.workspaceId)).find((a) => a.id === job.accountId);
    const limits = limitsFor(job.provider, account?.config ?? null);
    await this.pages.render(
      res,
      'failed-post',
      { title: 'Failed post', section: 'failed', session, status: error ? status : 200 },
      {
        job,
        values,
        error,
        editable: job.status === 'dead',
        providerLabel: PROVIDER_LABELS[job.provider],
        limit: limits.maxText,
        unit: limits.textUnit,
        urlLength: limits.charactersPerUrl,
        unitLabel:
          limits.charactersPerUrl !== null
            ? `characters as the instance counts them (links as ${limits.charactersPerUrl})`
            : limits.textUnit === 'graphemes'
              ? 'characters (graphemes)'
              : 'characters',
        keyChanges: job.requeueIdempotencyKey !== job.idempotencyKey,
        // A receiver's answer chose this URL: only http(s) becomes a link.
        remoteUrl: job.remoteUrl && /^https?:\/\//i.test(job.remoteUrl) ? job.remoteUrl : null,
        attempts: [...job.attempts].reverse(),
        ...threadView(job, values),
      },
    );
  }
}

/** What the edit form shows and posts back: the first part, and a thread's further parts. */
interface FormValues {
  text: string;
  title: string;
  link: string;
  thread: { text: string; link: string }[];
}

/**
 * A thread on the failed post's page: every part in order, the published ones read-only with
 * where they are, the others as fields of the edit form (each with its live counter).
 */
function threadView(job: DlqDetailView, values: FormValues) {
  const parts = job.parts;
  if (!parts) return { thread: null, firstPublished: false };
  const safeUrl = (u: string | null) => (u && /^https?:\/\//i.test(u) ? u : null);
  return {
    firstPublished: parts[0]?.published ?? false,
    firstPart: parts[0] ? { remoteId: parts[0].remoteId, remoteUrl: safeUrl(parts[0].remoteUrl) } : null,
    partsTotal: parts.length,
    publishedCount: parts.filter((p) => p.published).length,
    thread: parts.slice(1).map((p, i) => ({
      index: i,
      number: p.part,
      published: p.published,
      remoteId: p.remoteId,
      remoteUrl: safeUrl(p.remoteUrl),
      text: p.published ? p.text : (values.thread[i]?.text ?? p.text),
      link: p.published ? '' : (values.thread[i]?.link ?? ''),
    })),
  };
}

function excerpt(text: string): string {
  const chars = [...text];
  return chars.length > 140 ? `${chars.slice(0, 140).join('')}…` : text;
}
