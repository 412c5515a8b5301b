import { ApiProperty } from '@nestjs/swagger';
import { IsBoolean, IsIn, IsString, MaxLength, MinLength } from 'class-validator';
import { APPROVAL_MODES, ApprovalMode } from '../approval-policy/approval-policy';

/** PUT /v1/settings/approvals, and its answer (GET too). Both fields are required. */
export class ApprovalSettingsDto {
  @ApiProperty({
    enum: APPROVAL_MODES,
    example: 'editors',
    description:
      "`off` (default): no approval. `editors`: posts made by editors (people or API keys of role editor) need an owner's approval. `everyone`: every post needs the approval of an owner other than its author.",
  })
  @IsIn(APPROVAL_MODES, { message: `mode must be one of: ${APPROVAL_MODES.join(', ')}` })
  mode!: ApprovalMode;

  @ApiProperty({ description: 'Whether a decision made through a client review link counts (default false).' })
  @IsBoolean({ message: 'clientApproval must be true or false' })
  clientApproval!: boolean;
}

/** POST /v1/posts/{id}/reject. */
export class RejectPostDto {
  @ApiProperty({
    minLength: 1,
    maxLength: 2000,
    example: 'The date is wrong: the launch moved to Thursday.',
    description: 'Why the post goes back to its author (1 to 2,000 characters), shown to them with the draft.',
  })
  @IsString({ message: 'comment must be a text of 1 to 2,000 characters' })
  @MinLength(1, { message: 'comment must be a text of 1 to 2,000 characters' })
  @MaxLength(2000, { message: 'comment: at most 2,000 characters' })
  comment!: string;
}

/** Who took an approval step. */
export class ApprovalActorDto {
  @ApiProperty({ enum: ['person', 'key', 'reviewer'] })
  kind!: 'person' | 'key' | 'reviewer';

  @ApiProperty({ description: "The person's or key's id; for a reviewer, the client review link's id" })
  id!: string;

  @ApiProperty({ example: 'Ada Lovelace <ada@example.com>', description: 'The name as it was then (a reviewer: the name they gave)' })
  label!: string;
}

/** One step of a post's approval. */
export class ApprovalDecisionDto {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({
    enum: ['submitted', 'resubmitted', 'approved', 'rejected', 'expired'],
    description:
      '`resubmitted`: an approved post was edited before it went out and needs approval again; `expired`: approved after its deadline, nothing published.',
  })
  step!: string;

  @ApiProperty({ type: String, nullable: true, description: "A rejection's comment" })
  comment!: string | null;

  @ApiProperty({ type: ApprovalActorDto })
  by!: ApprovalActorDto;

  @ApiProperty({ format: 'date-time' })
  at!: string;
}

/** GET /v1/posts/{id}/approvals. */
export class ApprovalHistoryDto {
  @ApiProperty({ type: [ApprovalDecisionDto] })
  data!: ApprovalDecisionDto[];
}
