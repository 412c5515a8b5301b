import { Injectable } from '@nestjs/common';
import { AccountsService } from '../accounts/accounts.service';
import type { AccountView } from '../accounts/account.types';
import { invalidInput } from '../common/errors';
import { parseDate, wallTimeOf } from '../common/zoned-time';
import type { PostView } from '../posts/post.types';
import { ListPostsQuery } from '../posts/posts.dto';
import { PostsService } from '../posts/posts.service';
import { calendarRange, dayLabel, placeOnDays } from '../settings/compose/calendar';
import type { CalendarWeekInput } from './calendar-week.dto';
import { asQuery } from './tool-input';

/** At most this many posts in one week, as on the page (a runaway bound; `capped` says when it was reached). */
const MAX_POSTS = 1_000;
/** The drafts listed beside the week, as on the page. */
const MAX_DRAFTS = 100;
const EXCERPT = 200;

const excerpt = (text: string) => {
  const chars = [...text.replace(/\s+/g, ' ').trim()];
  return chars.length > EXCERPT ? `${chars.slice(0, EXCERPT).join('')}…` : chars.join('');
};

export interface CalendarTarget {
  accountId: string;
  account: string;
  provider: string;
  jobId: string;
  /** The job's status: scheduled, in_progress, succeeded, paused, dead, cancelled, discarded. */
  status: string;
}

export interface CalendarPost {
  id: string;
  /** HH:MM in the week's time zone. */
  time: string;
  scheduledAt: string;
  status: PostView['status'];
  title: string | null;
  excerpt: string;
  /** Editable (PATCH /v1/posts/{id}) while none of its jobs has started. */
  editable: boolean;
  targets: CalendarTarget[];
}

export interface CalendarWeek {
  timezone: string;
  /** "Week of 7 Dec 2026". */
  title: string;
  /** The week's first instant (Monday 00:00 in the zone) and the next week's. */
  from: string;
  to: string;
  /** A day of the previous and of the next week, for the next call's `date`. */
  previous: string;
  next: string;
  days: { date: string; label: string; today: boolean; posts: CalendarPost[] }[];
  drafts: { id: string; title: string | null; excerpt: string; accounts: string[] }[];
  /** True when the week holds more posts than one answer lists (MAX_POSTS). */
  capped: boolean;
}

/**
 * What the settings page's calendar shows for a week (settings/compose/calendar.controller.ts), as
 * data: the same days (calendar.ts lays them out, Monday first, in the person's zone), the same
 * posts read through PostsService, their accounts by name, and the drafts beside the week.
 */
@Injectable()
export class CalendarWeekService {
  constructor(
    private readonly posts: PostsService,
    private readonly accounts: AccountsService,
  ) {}

  async week(workspaceId: string, input: CalendarWeekInput, now: Date): Promise<CalendarWeek> {
    const zone = input.timezone ?? 'UTC';
    const today = wallTimeOf(now, zone).date;
    const date = input.date ?? today;
    if (!parseDate(date)) throw invalidInput('date must be a day as YYYY-MM-DD, e.g. 2026-12-07');
    const range = calendarRange('week', date, zone);

    const inRange: PostView[] = [];
    let cursor: string | undefined;
    do {
      const query = { from: range.from.toISOString(), to: range.to.toISOString(), limit: 100, ...(cursor ? { cursor } : {}) };
      const page = await this.posts.list(workspaceId, await asQuery(ListPostsQuery, query));
      inRange.push(...page.data);
      cursor = page.nextCursor ?? undefined;
    } while (cursor && inRange.length < MAX_POSTS);
    const drafts = await this.posts.list(workspaceId, await asQuery(ListPostsQuery, { status: 'draft', limit: MAX_DRAFTS }));
    const names = new Map((await this.allAccounts(workspaceId)).map((a) => [a.id, a.name]));
    const accountName = (id: string) => names.get(id) ?? 'removed account';
    const editable = (p: PostView) =>
      p.status === 'draft' || (p.status === 'scheduled' && p.jobs.some((j) => j.status === 'scheduled' || j.status === 'paused'));

    const days = placeOnDays(range.days, inRange.slice(0, MAX_POSTS), (p) => new Date(p.scheduledAt!), zone).map((d) => ({
      date: d.date,
      label: dayLabel(d.date),
      today: d.date === today,
      posts: d.posts.map(({ post: p, time }) => ({
        id: p.id,
        time,
        scheduledAt: p.scheduledAt!,
        status: p.status,
        title: p.title,
        excerpt: excerpt(p.text),
        editable: editable(p),
        targets: p.jobs.map((j) => ({
          accountId: j.accountId,
          account: accountName(j.accountId),
          provider: j.provider,
          jobId: j.id,
          status: j.status,
        })),
      })),
    }));
    return {
      timezone: zone,
      title: range.title,
      from: range.from.toISOString(),
      to: range.to.toISOString(),
      previous: range.previous,
      next: range.next,
      days,
      drafts: drafts.data.map((p) => ({
        id: p.id,
        title: p.title,
        excerpt: excerpt(p.text),
        accounts: (p.draftTargets ?? []).map((t) => accountName(t.accountId)),
      })),
      capped: inRange.length >= MAX_POSTS,
    };
  }

  /** Every account of the workspace (names for the targets), page by page. */
  private async allAccounts(workspaceId: string): Promise<AccountView[]> {
    const all: AccountView[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.accounts.list(workspaceId, 200, cursor);
      all.push(...page.data);
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    return all;
  }
}
