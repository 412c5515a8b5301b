import { Injectable } from '@nestjs/common';
import type { AuthContext } from '../access/auth-context';
import {
  EventEndpointChanges,
  EventEndpointsService,
  EventEndpointView,
  EventEndpointWithSecret,
  NewEventEndpoint,
} from '../accounts/event-endpoints.service';
import { notFound } from '../common/errors';
import { DeadLetterService } from '../dead-letter/dead-letter.service';
import { JobReads } from '../queue/job-reads.service';
import type { EventDeliveryRow } from '../queue/job-reads.types';
import type { ErrorClass, JobStatus } from '../vocabulary/vocabulary';

/** Deliveries listed per endpoint (the page shows the latest; the API takes `limit` up to this). */
export const MAX_LISTED_DELIVERIES = 200;

/** One delivery of an event to an endpoint, as the API and the page show it. */
export interface EventDeliveryView {
  id: string;
  eventId: string;
  eventType: string;
  status: JobStatus;
  attempts: number;
  httpStatus: number | null;
  networkError: string | null;
  errorClass: ErrorClass | null;
  lastError: string | null;
  deadReason: string | null;
  nextAttemptAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface EndpointWithDeliveries {
  endpoint: EventEndpointView;
  deliveries: EventDeliveryView[];
}

/**
 * POST/GET/PATCH/DELETE /v1/event-subscriptions and the page's section (docs/events.md): the
 * endpoints are the accounts module's (EventEndpointsService), their deliveries the queue's jobs
 * (JobReads), and "send again" is the dead-letter queue's requeue of that job (its rule, its
 * audit trail, its 409s), limited to the endpoint's own deliveries.
 */
@Injectable()
export class EventSubscriptionsService {
  constructor(
    private readonly endpoints: EventEndpointsService,
    private readonly reads: JobReads,
    private readonly deadLetter: DeadLetterService,
  ) {}

  create(auth: AuthContext, input: NewEventEndpoint): Promise<EventEndpointWithSecret> {
    return this.endpoints.create(auth, input);
  }

  list(workspaceId: string): Promise<EventEndpointView[]> {
    return this.endpoints.list(workspaceId);
  }

  get(workspaceId: string, id: string): Promise<EventEndpointView> {
    return this.endpoints.get(workspaceId, id);
  }

  update(auth: AuthContext, id: string, changes: EventEndpointChanges): Promise<EventEndpointWithSecret> {
    return this.endpoints.update(auth, id, changes);
  }

  remove(auth: AuthContext, id: string): Promise<void> {
    return this.endpoints.remove(auth, id);
  }

  rotateSecret(auth: AuthContext, id: string): Promise<EventEndpointWithSecret> {
    return this.endpoints.rotateSecret(auth, id);
  }

  /** The endpoint's latest deliveries, newest first (404 for an unknown endpoint). */
  async deliveries(workspaceId: string, id: string, limit = 50): Promise<EventDeliveryView[]> {
    await this.endpoints.get(workspaceId, id);
    return (await this.reads.eventDeliveries(workspaceId, id, Math.min(limit, MAX_LISTED_DELIVERIES))).map(toDeliveryView);
  }

  /** Every endpoint of the workspace with its latest deliveries (the page). */
  async overview(workspaceId: string, perEndpoint: number): Promise<EndpointWithDeliveries[]> {
    const endpoints = await this.endpoints.list(workspaceId);
    return Promise.all(
      endpoints.map(async (endpoint) => ({
        endpoint,
        deliveries: (await this.reads.eventDeliveries(workspaceId, endpoint.id, perEndpoint)).map(toDeliveryView),
      })),
    );
  }

  /**
   * "Send again": a failed (dead) delivery back into the queue with a fresh attempt budget and
   * the same event id (receivers deduplicate on it), by the dead-letter queue's requeue rule;
   * 409 when it is not dead or the endpoint is paused; 404 for another endpoint's delivery.
   */
  async sendAgain(auth: AuthContext, id: string, deliveryId: string): Promise<EventDeliveryView> {
    await this.endpoints.get(auth.workspaceId, id);
    const found = await this.reads.eventDelivery(auth.workspaceId, id, deliveryId);
    if (!found) throw notFound('delivery', deliveryId);
    await this.deadLetter.requeue(auth, deliveryId, {});
    return toDeliveryView((await this.reads.eventDelivery(auth.workspaceId, id, deliveryId))!);
  }
}

export function toDeliveryView(r: EventDeliveryRow): EventDeliveryView {
  return {
    id: r.id,
    eventId: r.eventId,
    eventType: r.eventType,
    status: r.status,
    attempts: r.attemptCount,
    httpStatus: r.lastHttpStatus,
    networkError: r.lastNetworkError,
    errorClass: r.errorClass,
    lastError: r.lastError,
    deadReason: r.deadReason,
    nextAttemptAt: r.status === 'scheduled' ? r.runAt.toISOString() : null,
    createdAt: r.createdAt.toISOString(),
    updatedAt: r.updatedAt.toISOString(),
  };
}
