import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { Role, ROLES } from '../access/roles';
import type { InvitationView, NewInvitationView, PersonView } from './person.types';

@ApiSchema({ name: 'Person' })
export class PersonDto implements PersonView {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ example: 'ada@example.com', description: 'the login address' })
  email!: string;

  @ApiProperty({ example: 'Ada Lovelace' })
  name!: string;

  @ApiProperty({ enum: ROLES, enumName: 'Role' })
  role!: Role;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;
}

const INVITATION_STATUSES = ['pending', 'accepted', 'revoked', 'expired'] as const;

@ApiSchema({ name: 'Invitation' })
export class InvitationDto implements InvitationView {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ example: 'grace@example.com' })
  email!: string;

  @ApiProperty({ enum: ROLES, enumName: 'Role' })
  role!: Role;

  @ApiProperty({ description: 'who invited, as they were named then', example: 'Ada Lovelace <ada@example.com>' })
  invitedBy!: string;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;

  @ApiProperty({ format: 'date-time', description: 'the link works until then (7 days)' })
  expiresAt!: string;

  @ApiProperty({
    enum: INVITATION_STATUSES,
    enumName: 'InvitationStatus',
    description: 'revoked: withdrawn, or its inviter may no longer grant its role (removed, another role, a revoked key)',
  })
  status!: InvitationView['status'];

  @ApiProperty({
    description: "the workspace's first person (POST /v1/people), who becomes a login once the link confirms the address",
  })
  firstPerson!: boolean;
}

@ApiSchema({ name: 'NewInvitation' })
export class NewInvitationDto implements NewInvitationView {
  @ApiProperty({ type: InvitationDto })
  invitation!: InvitationDto;

  @ApiProperty({ description: 'true when the link went out by mail (SMTP_URL is set)' })
  mailed!: boolean;

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'the one-use link, only when no mail server is configured: pass it on yourself. Shown this once',
  })
  link!: string | null;
}

@ApiSchema({ name: 'PasswordResetSent' })
export class PasswordResetSentDto {
  @ApiProperty({ description: 'true when the link went out by mail; otherwise it is in the mail outbox files (HERALD_DATA_DIR/outbox)' })
  mailed!: boolean;
}
