import { applyDecorators, INestApplication, Type } from '@nestjs/common';
import { ApiExtraModels, ApiProperty, ApiResponse, ApiSchema, DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import type { ErrorBody } from './http-exception.filter';

/**
 * OpenAPI building blocks shared by every controller: the one error shape, the list envelope,
 * the error answers an operation can give and the security scheme. docs/api-contract.md says
 * how a route is documented with them; the test suite checks every answer against the document.
 */

/** Name of the security scheme in the document (see createApp). */
export const API_KEY_SCHEME = 'api-key';

@ApiSchema({ name: 'Error' })
export class ErrorBodyDto implements ErrorBody {
  @ApiProperty({ description: 'the HTTP status, repeated', example: 400 })
  statusCode!: number;

  @ApiProperty({ description: 'the status text', example: 'Bad Request' })
  error!: string;

  @ApiProperty({
    description: 'what went wrong, for a person to act on; validation problems are joined with "; "',
    example: 'targets.0.accountId must be a UUID; text must be a string',
  })
  message!: string;
}

/** What each status means when an operation lists it; an operation may say more. */
const ERROR_MEANING: Readonly<Record<number, string>> = {
  400: 'The input is malformed or invalid (the message names the field); nothing was changed.',
  401: 'No API key, or one that is unknown or revoked.',
  403: 'The API key may not do this.',
  404: "No such resource in this workspace (another workspace's ids answer the same way).",
  409: 'The resource is not in a state that allows this now; the message says what it is.',
  413: 'The request body is too large.',
  415: 'The request body is not of a supported type.',
  422: 'The Idempotency-Key was used before with a different body.',
  429: 'Too many wrong API keys from this client: wait the Retry-After seconds (the same count as the settings page logins).',
  431: 'The request headers (the URL included) are larger than 16 KB.',
  503: 'Not ready.',
};

/** Error answers, in the one error shape. `descriptions` overrides the generic meaning. */
export function ApiErrors(statuses: readonly number[], descriptions: Readonly<Record<number, string>> = {}) {
  return applyDecorators(
    ...statuses.map((status) =>
      ApiResponse({
        status,
        description: descriptions[status] ?? ERROR_MEANING[status] ?? 'Error',
        type: ErrorBodyDto,
        ...(status === 429
          ? {
              headers: {
                'Retry-After': { description: 'Seconds to wait before the next try', schema: { type: 'string', pattern: '^[1-9][0-9]*$' } },
              },
            }
          : {}),
      }),
    ),
  );
}

/**
 * What every /v1 operation can answer before its own code runs, whatever its method: no or a bad
 * API key (401), too many wrong keys from the client (429), a body that is not JSON or nests too
 * deep (400), too large (413), not UTF-8 (415), headers over 16 KB (431). On the controller class; an operation adds its own.
 */
export function ApiV1Errors() {
  return ApiErrors([400, 401, 413, 415, 429, 431], {
    400: 'The input is malformed or invalid (the message names the field); nothing was changed.',
  });
}

/**
 * Statuses any operation with a JSON body can answer before it runs: malformed JSON (400),
 * a body over the limit (413), a charset other than UTF-8 (415).
 */
export const BODY_ERRORS = [400, 413, 415] as const;

/** One list page: `{ data, nextCursor }` (docs/api.md "Pagination"). */
export interface PageDtoClass<T> {
  new (): { data: T[]; nextCursor: string | null };
}

const pageClasses = new Map<Type<unknown>, PageDtoClass<unknown>>();

/**
 * The list envelope of `model`, as a named schema (`AccountPage`, `PostPage`, …) so a generated
 * client gets a type per list. One class per model, however many routes list it.
 */
export function PageOf<T>(model: Type<T>): PageDtoClass<T> {
  const known = pageClasses.get(model);
  if (known) return known as PageDtoClass<T>;
  class Page {
    @ApiProperty({ type: [model], description: "this page, in the list's order" })
    data!: T[];

    @ApiProperty({
      type: String,
      nullable: true,
      description: 'pass as `cursor` to get the next page; null on the last page',
      example: null,
    })
    nextCursor!: string | null;
  }
  // AccountDto (schema Account) → AccountPage.
  Object.defineProperty(Page, 'name', { value: `${model.name.replace(/Dto$/, '')}Page` });
  pageClasses.set(model, Page);
  return Page;
}

/** 200 with a page of `model`. */
export function ApiPageResponse<T>(model: Type<T>, description = 'One page of the list') {
  const page = PageOf(model);
  return applyDecorators(ApiExtraModels(model), ApiResponse({ status: 200, description, type: page }));
}

const OVERVIEW = `Schedule a post once; Herald publishes it to Bluesky, LinkedIn, Mastodon and blog webhooks, with
retries that honour \`Retry-After\`, a circuit breaker per account and a dead-letter queue.

- **Authentication**: every \`/v1\` operation takes \`Authorization: Bearer <API key>\`. Keys
  (\`hk_…\`) belong to one workspace; another workspace's ids answer 404, exactly like unknown ids.
- **Roles**: every key has a role, \`owner\`, \`editor\` or \`viewer\`; each operation says who may
  call it ("Who may"), and answers 403 (changing nothing) to a key of a lower role.
- **Errors**: every error is \`{ statusCode, error, message }\`, with a message a person can act on.
  Invalid input is 400 and changes nothing; unknown fields are refused; JSON bodies are limited to 1 MB (5 MB for \`POST /v1/posts/batch\`).
- **Lists**: \`{ data, nextCursor }\`; pass \`nextCursor\` as \`cursor\` for the next page
  (\`limit\` 1–200, default 50).
- **Idempotency**: \`POST /v1/posts\` takes an optional \`Idempotency-Key\`.
- **Times**: ISO 8601 with an offset (\`2026-12-01T09:00:00Z\`, \`2026-12-01T10:00:00+01:00\`).`;

const TAGS: ReadonlyArray<[string, string]> = [
  [
    'accounts',
    'Connected destinations: Bluesky, LinkedIn, Mastodon (any instance) and blog webhooks. Credentials are encrypted and never shown.',
  ],
  ['posts', 'Content and schedule; one publish job per target account.'],
  [
    'posting queue',
    "Weekly time slots (a workspace's, an account's own) that posts sent with `queue: true` take, the next free one for every target.",
  ],
  ['jobs', 'One delivery of a post to one account, with every attempt.'],
  ['dead-letter queue', 'Jobs that will not be retried automatically: inspect, edit, requeue or discard them.'],
  ['media', 'Images for posts, stored by Herald and served to receivers through signed links.'],
  ['workspaces', 'Workspaces and their API keys, each with a role (owner, editor, viewer).'],
  ['people', 'The people of a workspace, who log in to the settings page: invitations, roles, password resets.'],
  ['audit', 'Who changed what, and when: the audit trail of a workspace (owners).'],
  ['notifications', 'The daily digest and alert mails of a workspace.'],
  ['operations', 'Health checks and metrics for whoever runs Herald; no API key.'],
];

/**
 * The OpenAPI document of the running application. Operations without an explicit
 * operationId get `<Controller>_<method>`, which stays unique.
 */
export function createOpenApiDocument(app: INestApplication, publicUrl: string): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setTitle('Herald API')
    .setDescription(OVERVIEW)
    .setVersion('1')
    .addServer(publicUrl, 'this Herald (PUBLIC_URL)')
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'Herald API key',
        description:
          'A Herald API key (`hk_…`): printed at the first start, or HERALD_API_KEY, or made with POST /v1/api-keys. Not a JWT: an opaque random value, stored hashed.',
      },
      API_KEY_SCHEME,
    );
  for (const [name, description] of TAGS) builder.addTag(name, description);
  return SwaggerModule.createDocument(app, builder.build(), {
    operationIdFactory: (controllerKey: string, methodKey: string) => `${controllerKey.replace(/Controller$/, '')}_${methodKey}`,
  });
}
