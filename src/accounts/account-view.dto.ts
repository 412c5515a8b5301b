import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { PROVIDERS, Provider, VerifyResult } from '../connectors/connector.interface';
import type { CircuitStateName } from '../retry/circuit-breaker';
import type { AccountStatus } from '../account-state/account-state';
import type { RetryPolicyOverride } from '../retry/backoff';
import type { AccountView } from './account.types';

/**
 * The answers of /v1/accounts as OpenAPI schemas. Each class implements the view the service
 * returns, so a field added to the view does not compile until it is documented here.
 */

export const ACCOUNT_STATUSES: readonly AccountStatus[] = ['active', 'needs_reauth', 'disabled'];
const CIRCUIT_STATES: readonly CircuitStateName[] = ['closed', 'open', 'half_open'];

@ApiSchema({ name: 'Circuit' })
export class CircuitDto {
  @ApiProperty({
    enum: CIRCUIT_STATES,
    enumName: 'CircuitState',
    description: 'open: due jobs wait without an attempt until openUntil; half_open: one probe is allowed',
  })
  state!: CircuitStateName;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'end of the cooldown while open' })
  openUntil!: string | null;

  @ApiProperty({ type: 'integer', description: 'transient failures in a row (any success resets it)', example: 0 })
  consecutiveFailures!: number;
}

@ApiSchema({ name: 'RetryPolicy' })
export class RetryPolicyViewDto implements RetryPolicyOverride {
  @ApiPropertyOptional({ type: 'integer', description: 'first backoff ceiling, ms', example: 2000 })
  baseDelayMs?: number;

  @ApiPropertyOptional({ type: 'integer', description: 'largest backoff ceiling, ms', example: 3_600_000 })
  maxDelayMs?: number;

  @ApiPropertyOptional({ type: 'integer', description: 'attempts before the job is dead', example: 16 })
  maxAttempts?: number;
}

@ApiSchema({ name: 'Account' })
export class AccountDto implements AccountView {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ enum: PROVIDERS, enumName: 'Provider' })
  provider!: Provider;

  @ApiProperty({ example: 'Company blog' })
  name!: string;

  @ApiProperty({
    enum: ACCOUNT_STATUSES,
    enumName: 'AccountStatus',
    description:
      'needs_reauth: the platform refused the credentials; disabled: by a person, or after too many failures in a row. Jobs of an account that is not active wait as paused.',
  })
  status!: AccountStatus;

  @ApiProperty({ type: String, nullable: true, description: 'why the account is not active' })
  statusReason!: string | null;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description:
      "the non-secret settings: webhook { url, headerNames }; bluesky { identifier, service }; linkedin { authorUrn, tokenExpiresAt, hasRefreshToken, … }; mastodon { instanceUrl, accountId, username, displayName, profileUrl, limits: { maxCharacters, charactersReservedPerUrl, maxMediaAttachments, imageMatrixLimit } | null, limitsReadAt } (the instance's limits, read when the account is connected or checked). Credentials are never shown.",
    example: { url: 'https://blog.example.com/hooks/herald', headerNames: [] },
  })
  config!: Record<string, unknown>;

  @ApiProperty({ type: CircuitDto })
  circuit!: CircuitDto;

  @ApiProperty({ type: RetryPolicyViewDto, nullable: true, description: 'per-account overrides of the retry policy; null: the defaults' })
  retryPolicy!: RetryPolicyViewDto | null;

  @ApiProperty({ type: 'integer', description: 'attempts in flight at once for this account', example: 5 })
  maxInFlight!: number;

  @ApiProperty({ type: String, nullable: true })
  lastError!: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  lastSuccessAt!: string | null;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;

  @ApiProperty({
    type: [String],
    description: 'things to act on, e.g. a LinkedIn token about to expire that cannot be refreshed',
    example: [],
  })
  warnings!: string[];
}

/** POST /v1/accounts, rotate-secret, and a PATCH that moves a webhook to another origin: the account, and for webhooks the signing secret, shown this once. */
@ApiSchema({ name: 'AccountWithSecret' })
export class AccountWithSecretDto extends AccountDto {
  @ApiPropertyOptional({
    description: 'webhook accounts: the Standard Webhooks signing secret; it is never shown again',
    example: 'whsec_…',
  })
  secret?: string;
}

@ApiSchema({ name: 'VerifyResult' })
export class VerifyResultDto implements VerifyResult {
  @ApiProperty({ description: 'whether the platform accepted the credentials' })
  ok!: boolean;

  @ApiProperty({ example: 'the receiver answered 200' })
  message!: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'what the platform said, e.g. the Bluesky handle' })
  details?: Record<string, unknown>;
}
