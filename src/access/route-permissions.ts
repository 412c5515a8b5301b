import type { Permission } from './roles';

/**
 * THE table of who may use which route: every route of the API (/v1), of the MCP server (/mcp,
 * whose tools each name the /v1 route they stand for and are held to its entry) and of the
 * settings page (/settings), by method and Express path, with the permission it needs (roles.ts
 * says which roles have it). The API-key guard and the page's session guard both read it, the OpenAPI
 * document states it on every operation, docs/api.md and docs/settings.md print it, and
 * test/roles.test.ts calls every route in it with every role.
 *
 * A route that is not here is refused to everyone (403) and fails that test by name: adding a
 * route means deciding who may use it, here.
 *
 * Rules of thumb: reading is `read` (the audit trail excepted: owners); what editors do is
 * `edit` (accounts but their removal, posts, failed posts, images); people, keys, notification
 * recipients and removing an account are `own`.
 */
export const ROUTE_PERMISSIONS = {
  // ---- the API --------------------------------------------------------------------------
  'POST /v1/workspaces': 'instance',
  'POST /v1/api-keys': 'own',
  'GET /v1/api-keys': 'read',
  'DELETE /v1/api-keys/:id': 'own',

  'GET /v1/people': 'read',
  'POST /v1/people': 'own',
  'PATCH /v1/people/:id': 'own',
  'DELETE /v1/people/:id': 'own',
  'POST /v1/people/:id/password-reset': 'own',
  'GET /v1/invitations': 'read',
  'POST /v1/invitations': 'own',
  'DELETE /v1/invitations/:id': 'own',
  'GET /v1/audit': 'own',

  'POST /v1/accounts': 'edit',
  'GET /v1/accounts': 'read',
  'GET /v1/accounts/:id': 'read',
  'PATCH /v1/accounts/:id': 'edit',
  'DELETE /v1/accounts/:id': 'own',
  'POST /v1/accounts/:id/verify': 'edit',
  'POST /v1/accounts/:id/rotate-secret': 'edit',

  'POST /v1/posts': 'edit',
  'POST /v1/posts/batch': 'edit',
  'GET /v1/posts': 'read',
  'GET /v1/posts/:id': 'read',
  'PATCH /v1/posts/:id': 'edit',
  'DELETE /v1/posts/:id': 'edit',
  'GET /v1/posts/:id/comments': 'read',
  'POST /v1/posts/:id/comments': 'edit',
  // A client review link shows posts to someone without an account: an editor's or an owner's to make and revoke.
  'POST /v1/posts/:id/share-links': 'edit',
  'GET /v1/share-links': 'read',
  'DELETE /v1/share-links/:id': 'edit',
  // Approvals: an editor submits; owners decide (under mode everyone, not on their own posts: the service's 403).
  'POST /v1/posts/:id/submit': 'edit',
  'POST /v1/posts/:id/approve': 'own',
  'POST /v1/posts/:id/reject': 'own',
  'GET /v1/posts/:id/approvals': 'read',

  'GET /v1/jobs/:id': 'read',
  'POST /v1/jobs/:id/retry': 'edit',

  'GET /v1/dlq': 'read',
  'POST /v1/dlq/requeue': 'edit',
  'GET /v1/dlq/:jobId': 'read',
  'PATCH /v1/dlq/:jobId': 'edit',
  'POST /v1/dlq/:jobId/requeue': 'edit',
  'DELETE /v1/dlq/:jobId': 'edit',

  'GET /v1/settings/notifications': 'read',
  'PUT /v1/settings/notifications': 'own',
  'GET /v1/settings/approvals': 'read',
  'PUT /v1/settings/approvals': 'own',
  // A preview sends and records nothing.
  'POST /v1/digest/preview': 'read',

  // The posting queue's slots decide when queued posts go out: an editor's, like scheduling.
  'GET /v1/settings/queue': 'read',
  'PUT /v1/settings/queue': 'edit',
  'GET /v1/accounts/:id/queue': 'read',
  'PUT /v1/accounts/:id/queue': 'edit',
  'DELETE /v1/accounts/:id/queue': 'edit',
  // Event subscriptions: owners, like notification recipients (where the workspace's news goes).
  'POST /v1/event-subscriptions': 'own',
  'GET /v1/event-subscriptions': 'own',
  'GET /v1/event-subscriptions/:id': 'own',
  'PATCH /v1/event-subscriptions/:id': 'own',
  'DELETE /v1/event-subscriptions/:id': 'own',
  'POST /v1/event-subscriptions/:id/rotate-secret': 'own',
  'GET /v1/event-subscriptions/:id/deliveries': 'own',
  'POST /v1/event-subscriptions/:id/deliveries/:deliveryId/retry': 'own',

  'POST /v1/media': 'edit',
  'GET /v1/media': 'read',
  'GET /v1/media/usage': 'read',
  'GET /v1/media/:id': 'read',
  'PATCH /v1/media/:id': 'edit',
  'DELETE /v1/media/:id': 'edit',

  // ---- the MCP server (src/mcp, docs/mcp.md) ------------------------------------------------
  // Any key may connect and list the tools; each tool is then held to the /v1 route it stands
  // for, with this same table (a viewer's key reads, and is refused create_post as POST /v1/posts is).
  'POST /mcp': 'read',
  // Stateless: no stream to open and no session to end; 405, as the SDK's stateless servers answer.
  'GET /mcp': 'read',
  'DELETE /mcp': 'read',

  // ---- the settings page ----------------------------------------------------------------
  'GET /settings': 'public',
  'GET /settings/login': 'public',
  'POST /settings/login': 'public',
  'POST /settings/logout': 'read',
  'GET /settings/assets/:hash/:name': 'public',
  'GET /settings/invitation': 'public',
  'POST /settings/invitation': 'public',
  'GET /settings/forgot-password': 'public',
  'POST /settings/forgot-password': 'public',
  'GET /settings/reset-password': 'public',
  'POST /settings/reset-password': 'public',
  // A notification recipient's confirmation link: the token (single-use, expiring) decides.
  'GET /settings/confirm-recipient': 'public',
  'POST /settings/confirm-recipient': 'public',

  'GET /settings/accounts': 'read',
  'GET /settings/accounts/connect/:provider': 'edit',
  'POST /settings/accounts/connect/:provider': 'edit',
  'POST /settings/accounts/:id/check': 'edit',
  'GET /settings/accounts/:id/reconnect': 'edit',
  'POST /settings/accounts/:id/reconnect': 'edit',
  'POST /settings/accounts/:id/disable': 'edit',
  'POST /settings/accounts/:id/enable': 'edit',
  'GET /settings/accounts/:id/remove': 'own',
  'POST /settings/accounts/:id/remove': 'own',
  'GET /settings/accounts/:id/rotate-secret': 'edit',
  'POST /settings/accounts/:id/rotate-secret': 'edit',
  'POST /settings/accounts/:id/requeue-failed': 'edit',
  'POST /settings/linkedin/start': 'edit',
  // LinkedIn's redirect back: the state (bound to a session whose role allowed the start) decides.
  'GET /settings/linkedin/callback': 'public',
  'POST /settings/bluesky/start': 'edit',
  // The authorization server's redirect back: the state (bound to the page session and the browser) decides.
  'GET /settings/bluesky/callback': 'public',
  'POST /settings/mastodon/start': 'edit',
  // The instance's redirect back: the state (bound to the page session and the browser) decides.
  'GET /settings/mastodon/callback': 'public',

  'GET /settings/failed-posts': 'read',
  'POST /settings/failed-posts/bulk': 'edit',
  'GET /settings/failed-posts/:jobId': 'read',
  'POST /settings/failed-posts/:jobId/edit': 'edit',
  'POST /settings/failed-posts/:jobId/requeue': 'edit',
  'POST /settings/failed-posts/:jobId/requeue-waiting': 'edit',
  'POST /settings/failed-posts/:jobId/discard': 'edit',

  'GET /settings/posts': 'read',
  'GET /settings/approvals': 'read',
  'POST /settings/approvals': 'own',
  'POST /settings/approvals/:id/approve': 'own',
  'POST /settings/approvals/:id/reject': 'own',
  'POST /settings/posts/:id/cancel': 'edit',
  // The composer: writing, editing and scheduling are an editor's; the calendar is for everyone.
  'GET /settings/compose': 'edit',
  'POST /settings/compose': 'edit',
  'GET /settings/posts/:id/edit': 'edit',
  'POST /settings/posts/:id/edit': 'edit',
  'GET /settings/import': 'edit',
  'POST /settings/import': 'edit',
  'POST /settings/import/confirm': 'edit',
  'GET /settings/calendar': 'read',
  // The posting queue's slots: seen by everyone, changed by editors (as PUT /v1/settings/queue).
  'GET /settings/queue': 'read',
  'POST /settings/queue': 'edit',
  'GET /settings/queue/accounts/:id': 'read',
  'POST /settings/queue/accounts/:id': 'edit',
  'POST /settings/queue/accounts/:id/reset': 'edit',

  'GET /settings/events': 'own',
  'POST /settings/events': 'own',
  'POST /settings/events/:id/deliveries/:deliveryId/retry': 'own',
  'POST /settings/events/:id/pause': 'own',
  'POST /settings/events/:id/resume': 'own',
  'POST /settings/events/:id/remove': 'own',
  'GET /settings/notifications': 'read',
  'POST /settings/notifications': 'own',
  'POST /settings/notifications/preview': 'read',

  'GET /settings/team': 'read',
  'POST /settings/team/first-person': 'own',
  'POST /settings/team/invitations': 'own',
  'POST /settings/team/invitations/:id/revoke': 'own',
  'POST /settings/team/people/:id/role': 'own',
  'POST /settings/team/people/:id/reset': 'own',
  'GET /settings/team/people/:id/remove': 'own',
  'POST /settings/team/people/:id/remove': 'own',
  'GET /settings/profile': 'read',
  'POST /settings/profile/password': 'read',
  'GET /settings/activity': 'own',
  // A post's comments and client review links, beside the post.
  'GET /settings/posts/:id/review': 'read',
  'POST /settings/posts/:id/comments': 'edit',
  'POST /settings/posts/:id/share-links': 'edit',
  'POST /settings/share-links/:id/revoke': 'edit',

  // ---- the client review page (outside /settings: no session; the link's token decides) ----
  'GET /review/:token': 'public',
  'POST /review/:token': 'public',
} as const satisfies Record<string, Permission>;

export type RouteKey = keyof typeof ROUTE_PERMISSIONS;

/** `GET /v1/accounts/:id` for a method and an Express route path. */
export function routeKeyOf(method: string, path: string): string {
  return `${method.toUpperCase()} ${path}`;
}

/** The permission a route needs; undefined for a route missing from the table (refused). */
export function permissionFor(method: string, path: string): Permission | undefined {
  // Express answers HEAD with the GET route; `@Get()` of a controller also matches its path with
  // a trailing slash (`/settings/accounts/`), which is the same route.
  const key = routeKeyOf(method.toUpperCase() === 'HEAD' ? 'GET' : method, path.length > 1 ? path.replace(/\/$/, '') : path);
  return Object.prototype.hasOwnProperty.call(ROUTE_PERMISSIONS, key) ? ROUTE_PERMISSIONS[key as RouteKey] : undefined;
}
