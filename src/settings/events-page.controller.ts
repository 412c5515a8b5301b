import { Body, Controller, Get, Param, Post, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { CreateEventSubscriptionDto } from '../event-subscriptions/event-subscriptions.dto';
import { EventSubscriptionsService } from '../event-subscriptions/event-subscriptions.service';
import { ParseIdPipe } from '../common/parse-id.pipe';
import { EVENT_TYPES } from '../vocabulary/vocabulary';
import { Public } from '../workspaces/auth';
import type { PageSession } from '../people/session.types';
import { asDto, personMessage } from './form-validation';
import { PageExceptionFilter } from './page-exception.filter';
import { field } from './page-input';
import { PageRenderer } from './page-renderer';
import { PageRequest, requirePage } from './session/page-request';
import { PageSessionGuard } from './session/page-session.guard';

const endpointId = new ParseIdPipe('event subscription');
const deliveryId = new ParseIdPipe('delivery');

/** Deliveries shown per endpoint: the latest; the API lists up to 200. */
const SHOWN_DELIVERIES = 10;

interface FormValues {
  url: string;
  description: string;
  events: string[];
}

/**
 * Event webhooks (owners): each endpoint with its latest deliveries and their outcomes (HTTP status,
 * attempts, time), "Send again" for a failed one, pause, resume and remove, and a form to add one
 * (the signing secret shown once). Everything through EventSubscriptionsService, the rules of
 * /v1/event-subscriptions.
 */
@ApiExcludeController()
@Public()
@UseGuards(PageSessionGuard)
@UseFilters(PageExceptionFilter)
@Controller('settings/events')
export class EventsPageController {
  constructor(
    private readonly pages: PageRenderer,
    private readonly subscriptions: EventSubscriptionsService,
  ) {}

  @Get()
  async show(@Req() req: PageRequest, @Res() res: Response): Promise<void> {
    await this.showPage(res, requirePage(req), { url: '', description: '', events: ['post.published', 'post.failed'] });
  }

  @Post()
  async create(@Req() req: PageRequest, @Res() res: Response, @Body() body: Record<string, unknown>): Promise<void> {
    const session = requirePage(req);
    const raw = body.events;
    const events = (Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]).map(String);
    const values: FormValues = { url: field(body, 'url'), description: field(body, 'description'), events };
    try {
      const dto = await asDto(CreateEventSubscriptionDto, {
        url: values.url,
        events: values.events,
        ...(values.description ? { description: values.description } : {}),
      });
      const created = await this.subscriptions.create(session.auth, dto);
      await this.pages.render(
        res,
        'event-secret',
        { title: 'Event subscription added', section: 'events', session },
        { url: created.url, secret: created.secret },
      );
    } catch (err) {
      const known = personMessage(err);
      if (!known) throw err;
      await this.showPage(res, session, values, known.message, known.status);
    }
  }

  @Post(':id/deliveries/:deliveryId/retry')
  async sendAgain(
    @Req() req: PageRequest,
    @Res() res: Response,
    @Param('id', endpointId) id: string,
    @Param('deliveryId', deliveryId) delivery: string,
  ) {
    const session = requirePage(req);
    await this.act(res, session, async () => {
      const d = await this.subscriptions.sendAgain(session.auth, id, delivery);
      return `The ${d.eventType} event is queued to be sent again.`;
    });
  }

  @Post(':id/pause')
  async pause(@Req() req: PageRequest, @Res() res: Response, @Param('id', endpointId) id: string) {
    const session = requirePage(req);
    await this.act(res, session, async () => {
      const s = await this.subscriptions.update(session.auth, id, { paused: true });
      return `Paused: nothing is sent to ${s.url} until it is resumed.`;
    });
  }

  @Post(':id/resume')
  async resume(@Req() req: PageRequest, @Res() res: Response, @Param('id', endpointId) id: string) {
    const session = requirePage(req);
    await this.act(res, session, async () => {
      const s = await this.subscriptions.update(session.auth, id, { paused: false });
      return `Resumed: waiting events go to ${s.url} now.`;
    });
  }

  @Post(':id/remove')
  async remove(@Req() req: PageRequest, @Res() res: Response, @Param('id', endpointId) id: string) {
    const session = requirePage(req);
    await this.act(res, session, async () => {
      await this.subscriptions.remove(session.auth, id);
      return 'Removed. Its waiting deliveries were cancelled.';
    });
  }

  /** An action, then back to the list with what happened (or why it did not). */
  private async act(res: Response, session: PageSession, work: () => Promise<string>): Promise<void> {
    try {
      await this.pages.redirect(res, session, '/settings/events', { tone: 'success', text: await work() });
    } catch (err) {
      const known = personMessage(err);
      if (!known) throw err;
      await this.pages.redirect(res, session, '/settings/events', { tone: 'error', text: known.message });
    }
  }

  private async showPage(res: Response, session: PageSession, values: FormValues, error?: string, status = 400): Promise<void> {
    const endpoints = await this.subscriptions.overview(session.auth.workspaceId, SHOWN_DELIVERIES);
    await this.pages.render(
      res,
      'events',
      { title: 'Event webhooks', section: 'events', session, status: error ? status : 200 },
      {
        error,
        values,
        eventTypes: EVENT_TYPES.map((t) => ({ value: t, checked: values.events.includes(t) })),
        empty: endpoints.length === 0,
        endpoints: endpoints.map(({ endpoint, deliveries }) => ({
          ...endpoint,
          eventList: endpoint.events.join(', '),
          needsPerson: endpoint.status === 'needs_reauth',
          circuitOpen: endpoint.circuit.state !== 'closed',
          deliveries: deliveries.map((d) => ({
            ...d,
            failed: d.status === 'dead',
            statusLabel: deliveryLabel(d.status, d.attempts),
            outcome: d.httpStatus !== null ? `HTTP ${d.httpStatus}` : (d.networkError ?? '—'),
          })),
        })),
      },
    );
  }
}

/** A delivery's state in a person's words (the API says the job's status). */
function deliveryLabel(status: string, attempts: number): string {
  switch (status) {
    case 'succeeded':
      return 'delivered';
    case 'dead':
      return 'failed';
    case 'scheduled':
      return attempts > 0 ? 'retrying' : 'waiting';
    case 'in_progress':
      return 'sending';
    default:
      return status; // paused, cancelled, discarded
  }
}
