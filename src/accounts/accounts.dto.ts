import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsNotEmpty, IsObject, IsOptional, IsString, Max, MaxLength, Min, ValidateIf, ValidateNested } from 'class-validator';
import { PROVIDERS, Provider } from '../connectors/connector.interface';

// Decorators run bottom-up and the pipe stops at the first failure: type checks sit last.

@ApiSchema({ name: 'RetryPolicyInput' })
export class RetryPolicyDto {
  @ApiPropertyOptional({ description: 'first backoff ceiling, ms', example: 2000 })
  @IsOptional()
  @Max(86_400_000)
  @Min(1)
  @IsInt()
  baseDelayMs?: number;

  @ApiPropertyOptional({ description: 'largest backoff ceiling, ms', example: 3_600_000 })
  @IsOptional()
  @Max(7 * 86_400_000)
  @Min(1)
  @IsInt()
  maxDelayMs?: number;

  @ApiPropertyOptional({ example: 16 })
  @IsOptional()
  @Max(1000)
  @Min(1)
  @IsInt()
  maxAttempts?: number;
}

@ApiSchema({ name: 'CreateAccount' })
export class CreateAccountDto {
  @ApiProperty({ enum: PROVIDERS })
  @IsIn(PROVIDERS)
  @IsString()
  provider!: Provider;

  @ApiPropertyOptional({
    example: 'Company blog',
    maxLength: 200,
    description:
      "the account's name in Herald; required, except for mastodon, where it defaults to the account's display name (or @name@instance)",
  })
  // Required for every platform but Mastodon, whose connector names the account after the token's own.
  @ValidateIf((o: { provider?: unknown; name?: unknown }) => o.provider !== 'mastodon' || o.name !== undefined)
  @MaxLength(200)
  @IsNotEmpty()
  @IsString()
  name?: string;

  @ApiProperty({
    description:
      'bluesky: { identifier, appPassword, service? }; linkedin: { accessToken, refreshToken?, expiresAt?, authorUrn }; mastodon: { instanceUrl, accessToken } (the token is checked with the instance before anything is saved); webhook: { url, headers? }',
    type: 'object',
    additionalProperties: true,
    example: { url: 'https://blog.example.com/hooks/herald' },
  })
  @IsObject()
  config!: Record<string, unknown>;

  @ApiPropertyOptional({ type: RetryPolicyDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => RetryPolicyDto)
  retryPolicy?: RetryPolicyDto;

  @ApiPropertyOptional({ description: 'attempts in flight at once for this account', example: 5 })
  @IsOptional()
  @Max(100)
  @Min(1)
  @IsInt()
  maxInFlight?: number;
}

@ApiSchema({ name: 'UpdateAccount' })
export class UpdateAccountDto {
  @ApiPropertyOptional({ maxLength: 200 })
  @IsOptional()
  @MaxLength(200)
  @IsNotEmpty()
  @IsString()
  name?: string;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description: 'new settings or credentials (re-entering them re-activates the account)',
  })
  @IsOptional()
  @IsObject()
  config?: Record<string, unknown>;

  @ApiPropertyOptional({ enum: ['active', 'disabled'] })
  @IsOptional()
  @IsIn(['active', 'disabled'])
  @IsString()
  status?: 'active' | 'disabled';

  @ApiPropertyOptional({ type: RetryPolicyDto, nullable: true, description: 'null restores the defaults' })
  @IsOptional()
  @ValidateNested()
  @Type(() => RetryPolicyDto)
  retryPolicy?: RetryPolicyDto | null;

  @ApiPropertyOptional({ example: 5 })
  @IsOptional()
  @Max(100)
  @Min(1)
  @IsInt()
  maxInFlight?: number;
}
