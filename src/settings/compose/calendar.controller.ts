import { Controller, Get, Query, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import type { PostView } from '../../posts/post.types';
import { ListPostsQuery } from '../../posts/posts.dto';
import { PostsService } from '../../posts/posts.service';
import { Public } from '../../workspaces/auth';
import { AccountsPageService, PROVIDER_LABELS } from '../accounts-page.service';
import { asDto } from '../form-validation';
import { PageExceptionFilter } from '../page-exception.filter';
import { field } from '../page-input';
import { PageRenderer } from '../page-renderer';
import { PageRequest, requirePage } from '../session/page-request';
import { PageSessionGuard } from '../session/page-session.guard';
import { calendarRange, CalendarView, dayLabel, longDayLabel, placeOnDays } from './calendar';
import { zoneOf, zoneOptions } from './compose.controller';
import { parseDate, wallTimeOf, zoneLabel } from '../../common/zoned-time';

/** At most this many posts on one calendar page (a runaway bound; the page says when it was reached). */
const MAX_POSTS = 1_000;

const JOB_WORDS: Record<string, string> = {
  scheduled: 'waiting',
  in_progress: 'sending',
  succeeded: 'sent',
  paused: 'waiting (paused)',
  dead: 'failed',
  cancelled: 'cancelled',
  discarded: 'failed (discarded)',
};

const POST_WORDS: Record<PostView['status'], string> = {
  draft: 'Draft',
  pending_approval: 'Waiting for approval',
  expired: 'Expired: approved after its deadline',
  scheduled: 'Waiting',
  publishing: 'Sending',
  published: 'Sent',
  partially_failed: 'Partly failed',
  failed: 'Failed',
  cancelled: 'Cancelled',
};

const excerpt = (text: string, n = 80) => {
  const chars = [...text.replace(/\s+/g, ' ').trim()];
  return chars.length > n ? `${chars.slice(0, n).join('')}…` : chars.join('');
};

/**
 * The calendar (/settings/calendar): the posts of a week or a month in the person's time zone,
 * each with its accounts and their state, and the drafts (which have no day until scheduled).
 * A post moves to another day or time by editing it (the composer): no drag and drop, so the
 * keyboard and a phone work the same.
 */
@ApiExcludeController()
@Public()
@UseGuards(PageSessionGuard)
@UseFilters(PageExceptionFilter)
@Controller('settings/calendar')
export class CalendarController {
  constructor(
    private readonly pages: PageRenderer,
    private readonly posts: PostsService,
    private readonly accounts: AccountsPageService,
  ) {}

  @Get()
  async show(@Req() req: PageRequest, @Res() res: Response, @Query() query: Record<string, unknown>): Promise<void> {
    const session = requirePage(req);
    const ws = session.auth.workspaceId;
    const zone = zoneOf(req, query);
    const view: CalendarView = field(query, 'view') === 'month' ? 'month' : 'week';
    const now = new Date();
    const today = wallTimeOf(now, zone).date;
    const asked = field(query, 'date');
    const date = parseDate(asked) ? asked : today;
    const range = calendarRange(view, date, zone);

    const inRange: PostView[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.posts.list(
        ws,
        await asDto(ListPostsQuery, {
          from: range.from.toISOString(),
          to: range.to.toISOString(),
          limit: 100,
          ...(cursor ? { cursor } : {}),
        }),
      );
      inRange.push(...page.data);
      cursor = page.nextCursor ?? undefined;
    } while (cursor && inRange.length < MAX_POSTS);
    const drafts = await this.posts.list(ws, await asDto(ListPostsQuery, { status: 'draft', limit: 100 }));
    const accounts = await this.accounts.all(ws);
    const names = new Map(accounts.map((a) => [a.id, a]));
    const accountName = (id: string) => names.get(id)?.name ?? 'removed account';
    const editable = (p: PostView) =>
      p.status === 'draft' || (p.status === 'scheduled' && p.jobs.some((j) => j.status === 'scheduled' || j.status === 'paused'));

    const days = placeOnDays(range.days, inRange, (p) => new Date(p.scheduledAt!), zone).map((d) => ({
      date: d.date,
      label: dayLabel(d.date),
      longLabel: longDayLabel(d.date),
      inRange: d.inRange,
      today: d.date === today,
      empty: d.posts.length === 0,
      posts: d.posts.map(({ post: p, time }) => ({
        id: p.id,
        // Not `time`: that is a helper of the templates.
        clock: time,
        excerpt: excerpt(p.title ? `${p.title}: ${p.text}` : p.text),
        status: p.status,
        statusLabel: POST_WORDS[p.status],
        editable: editable(p),
        targets: p.jobs.map((j) => ({
          name: accountName(j.accountId),
          providerLabel: PROVIDER_LABELS[j.provider],
          status: j.status,
          state: JOB_WORDS[j.status] ?? j.status,
          failedUrl: j.status === 'dead' || j.status === 'discarded' ? `/settings/failed-posts/${j.id}` : null,
        })),
      })),
    }));
    const link = (v: CalendarView, d: string) => `/settings/calendar?view=${v}&date=${d}&zone=${encodeURIComponent(zone)}`;
    await this.pages.render(
      res,
      'calendar',
      { title: 'Calendar', section: 'calendar', session },
      {
        range,
        isWeek: view === 'week',
        isMonth: view === 'month',
        days,
        nothing: inRange.length === 0,
        capped: inRange.length >= MAX_POSTS,
        previousUrl: link(view, range.previous),
        nextUrl: link(view, range.next),
        todayUrl: link(view, today),
        weekUrl: link('week', date),
        monthUrl: link('month', date),
        date,
        zone,
        zoneLabel: zoneLabel(zone, now),
        zones: zoneOptions(zone),
        drafts: drafts.data.map((p) => ({
          id: p.id,
          excerpt: excerpt(p.title ? `${p.title}: ${p.text}` : p.text),
          accounts: (p.draftTargets ?? []).map((t) => accountName(t.accountId)).join(', '),
        })),
      },
    );
  }
}
