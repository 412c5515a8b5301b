import { Controller, Get, Query, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { AuditService } from '../audit/audit.service';
import { AUDIT_KINDS, AuditKind } from '../audit/audit.types';
import { PageExceptionFilter } from './page-exception.filter';
import { field, isUuid } from './page-input';
import { PageRenderer } from './page-renderer';
import { PageRequest, requirePage } from './session/page-request';
import { PageSessionGuard } from './session/page-session.guard';
import { Public } from '../workspaces/auth';

const KIND_LABELS: Record<AuditKind, string> = {
  account: 'Accounts',
  post: 'Posts',
  failed_post: 'Failed posts',
  person: 'People',
  invitation: 'Invitations',
  api_key: 'API keys',
  notifications: 'Notifications',
  media: 'Images',
  workspace: 'Workspaces',
};

/** Activity (owners): the audit trail, newest first, filterable by kind and by who did it. */
@ApiExcludeController()
@Public()
@UseGuards(PageSessionGuard)
@UseFilters(PageExceptionFilter)
@Controller('settings/activity')
export class ActivityPageController {
  constructor(
    private readonly pages: PageRenderer,
    private readonly audit: AuditService,
  ) {}

  @Get()
  async list(@Req() req: PageRequest, @Res() res: Response, @Query() query: Record<string, unknown>): Promise<void> {
    const session = requirePage(req);
    const kindRaw = field(query, 'kind');
    const kind = (AUDIT_KINDS as readonly string[]).includes(kindRaw) ? (kindRaw as AuditKind) : undefined;
    const actor = field(query, 'actor');
    const actorId = isUuid(actor) ? actor.toLowerCase() : undefined;
    const cursor = field(query, 'cursor') || undefined;
    const page = await this.audit.list(session.auth.workspaceId, { kind, actorId }, 50, cursor);
    const base = new URLSearchParams({ ...(kind ? { kind } : {}), ...(actorId ? { actor: actorId } : {}) });
    const more = page.nextCursor ? new URLSearchParams(base) : null;
    more?.set('cursor', page.nextCursor ?? '');
    await this.pages.render(
      res,
      'activity',
      { title: 'Activity', section: 'activity', session },
      {
        events: page.data.map((e) => ({
          ...e,
          kindLabel: KIND_LABELS[e.kind],
          changes: e.after || e.before ? JSON.stringify({ before: e.before, after: e.after }) : null,
          actorUrl: e.actor.id ? `/settings/activity?actor=${e.actor.id}` : null,
        })),
        empty: page.data.length === 0,
        kinds: AUDIT_KINDS.map((k) => ({ value: k, label: KIND_LABELS[k], selected: k === kind })),
        actorFilter: actorId ?? null,
        filtered: kind !== undefined || actorId !== undefined,
        nextUrl: more ? `/settings/activity?${more.toString()}` : null,
      },
    );
  }
}
