import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiNoContentResponse, ApiOperation, ApiParam, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { API_KEY_SCHEME, ApiErrors, ApiPageResponse, ApiV1Errors, BODY_ERRORS } from '../common/openapi';
import type { Page } from '../common/pagination';
import { ParseIdPipe } from '../common/parse-id.pipe';
import { Auth, AuthContext } from '../workspaces/auth';
import type { EventEndpointView, EventEndpointWithSecret } from '../accounts/event-endpoints.service';
import {
  CreateEventSubscriptionDto,
  EventDeliveryDto,
  EventSubscriptionDto,
  EventSubscriptionWithSecretDto,
  UpdateEventSubscriptionDto,
} from './event-subscriptions.dto';
import { EventDeliveryView, EventSubscriptionsService, MAX_LISTED_DELIVERIES } from './event-subscriptions.service';

const subscriptionId = new ParseIdPipe('event subscription');
const ID_PARAM = { name: 'id', format: 'uuid', description: 'the event subscription id' } as const;

class DeliveriesQuery {
  @IsOptional()
  @Max(MAX_LISTED_DELIVERIES)
  @Min(1)
  @IsInt()
  @Type(() => Number)
  limit?: number;
}

@ApiTags('events')
@ApiBearerAuth(API_KEY_SCHEME)
@ApiV1Errors()
@Controller('v1/event-subscriptions')
export class EventSubscriptionsController {
  constructor(private readonly subscriptions: EventSubscriptionsService) {}

  @Post()
  @ApiOperation({
    operationId: 'createEventSubscription',
    summary: "Subscribe an endpoint to Herald's events",
    description:
      "The URL is checked like a webhook account's (public addresses only unless HERALD_ALLOW_PRIVATE_URLS, https rules, header rules). The signing secret (`whsec_…`, Standard Webhooks) is in this answer only. Events are delivered by the same engine as posts: retries, Retry-After, a circuit breaker and an in-flight cap of the endpoint's own.",
  })
  @ApiBody({
    type: CreateEventSubscriptionDto,
    examples: { published: { value: { url: 'https://hooks.example.com/herald', events: ['post.published', 'post.failed'] } } },
  })
  @ApiResponse({ status: 201, description: 'The subscription, with `secret` shown this once', type: EventSubscriptionWithSecretDto })
  @ApiErrors(BODY_ERRORS, { 400: 'A field is invalid (the message names it), or the workspace has 20 subscriptions; nothing was saved.' })
  create(@Auth() auth: AuthContext, @Body() body: CreateEventSubscriptionDto): Promise<EventEndpointWithSecret> {
    return this.subscriptions.create(auth, body);
  }

  @Get()
  @ApiOperation({
    operationId: 'listEventSubscriptions',
    summary: "The workspace's event subscriptions, oldest first (at most 20: one page)",
  })
  @ApiPageResponse(EventSubscriptionDto)
  @ApiErrors([400])
  async list(@Auth() auth: AuthContext): Promise<Page<EventEndpointView>> {
    return { data: await this.subscriptions.list(auth.workspaceId), nextCursor: null };
  }

  @Get(':id')
  @ApiOperation({ operationId: 'getEventSubscription', summary: 'An event subscription: its events, status, circuit breaker, last error' })
  @ApiParam(ID_PARAM)
  @ApiResponse({ status: 200, description: 'The subscription', type: EventSubscriptionDto })
  @ApiErrors([404])
  get(@Auth() auth: AuthContext, @Param('id', subscriptionId) id: string): Promise<EventEndpointView> {
    return this.subscriptions.get(auth.workspaceId, id);
  }

  @Patch(':id')
  @ApiOperation({
    operationId: 'updateEventSubscription',
    summary: 'Change the URL, events, description or headers; pause or resume',
    description:
      '`paused: true` stops deliveries (they wait, paused); `paused: false` (or a new URL for an endpoint that needed one) makes it active again, closes its circuit and resumes its waiting deliveries. A URL on another origin drops the stored headers unless given again, and gets a new secret, shown in this answer once.',
  })
  @ApiParam(ID_PARAM)
  @ApiResponse({
    status: 200,
    description: 'The subscription as it is now; `secret` only when a new one was made',
    type: EventSubscriptionWithSecretDto,
  })
  @ApiErrors([...BODY_ERRORS, 404])
  update(
    @Auth() auth: AuthContext,
    @Param('id', subscriptionId) id: string,
    @Body() body: UpdateEventSubscriptionDto,
  ): Promise<EventEndpointWithSecret> {
    return this.subscriptions.update(auth, id, body);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ operationId: 'deleteEventSubscription', summary: 'Remove the subscription; its waiting deliveries are cancelled' })
  @ApiParam(ID_PARAM)
  @ApiNoContentResponse({ description: 'Removed' })
  @ApiErrors([404])
  async remove(@Auth() auth: AuthContext, @Param('id', subscriptionId) id: string): Promise<void> {
    await this.subscriptions.remove(auth, id);
  }

  @Post(':id/rotate-secret')
  @HttpCode(200)
  @ApiOperation({ operationId: 'rotateEventSubscriptionSecret', summary: 'New signing secret, shown in this answer only' })
  @ApiParam(ID_PARAM)
  @ApiResponse({ status: 200, description: 'The subscription with its new `secret`', type: EventSubscriptionWithSecretDto })
  @ApiErrors([404])
  rotateSecret(@Auth() auth: AuthContext, @Param('id', subscriptionId) id: string): Promise<EventEndpointWithSecret> {
    return this.subscriptions.rotateSecret(auth, id);
  }

  @Get(':id/deliveries')
  @ApiOperation({
    operationId: 'listEventDeliveries',
    summary: "The endpoint's latest deliveries, newest first: status, attempts, last HTTP status",
    description: 'Each delivery is a job: `GET /v1/jobs/{id}` shows every attempt.',
  })
  @ApiParam(ID_PARAM)
  @ApiQuery({ name: 'limit', required: false, schema: { type: 'integer', minimum: 1, maximum: MAX_LISTED_DELIVERIES, default: 50 } })
  @ApiPageResponse(EventDeliveryDto)
  @ApiErrors([400, 404])
  async deliveries(
    @Auth() auth: AuthContext,
    @Param('id', subscriptionId) id: string,
    @Query() query: DeliveriesQuery,
  ): Promise<Page<EventDeliveryView>> {
    return { data: await this.subscriptions.deliveries(auth.workspaceId, id, query.limit), nextCursor: null };
  }

  @Post(':id/deliveries/:deliveryId/retry')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'retryEventDelivery',
    summary: 'Send a failed delivery again',
    description: 'The same event (same id, same `webhook-id`), with a fresh attempt budget; the delivery keeps its history.',
  })
  @ApiParam(ID_PARAM)
  @ApiParam({ name: 'deliveryId', format: 'uuid', description: 'the delivery id' })
  @ApiResponse({ status: 200, description: 'The delivery, back in the queue', type: EventDeliveryDto })
  @ApiErrors([404, 409], { 409: 'The delivery has not failed (it is waiting, running or delivered), or the endpoint is paused.' })
  sendAgain(
    @Auth() auth: AuthContext,
    @Param('id', subscriptionId) id: string,
    @Param('deliveryId', new ParseIdPipe('delivery')) delivery: string,
  ): Promise<EventDeliveryView> {
    return this.subscriptions.sendAgain(auth, id, delivery);
  }
}
