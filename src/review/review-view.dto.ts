import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import type { CommentView, NewShareLinkView, ShareLinkView } from './review.types';

@ApiSchema({ name: 'CommentAuthor' })
class CommentAuthorDto {
  @ApiProperty({ enum: ['person', 'key', 'reviewer'], description: 'a person, an API key, or a reviewer through a review link' })
  kind!: 'person' | 'key' | 'reviewer';

  @ApiProperty({ type: String, format: 'uuid', nullable: true, description: "the person's or key's id; null for a reviewer" })
  id!: string | null;

  @ApiProperty({ description: "the person's or key's label as it was then, or the name a reviewer gave" })
  name!: string;

  @ApiProperty({ type: String, format: 'uuid', nullable: true, description: 'the review link a reviewer answered through' })
  shareLinkId!: string | null;
}

@ApiSchema({ name: 'Comment' })
export class CommentDto implements CommentView {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ format: 'uuid' })
  postId!: string;

  @ApiProperty({ type: CommentAuthorDto })
  author!: CommentAuthorDto;

  @ApiProperty({
    type: String,
    enum: ['approved', 'changes_requested'],
    nullable: true,
    description: "a reviewer's answer: approved or changes requested (null: a plain comment)",
  })
  verdict!: 'approved' | 'changes_requested' | null;

  @ApiProperty({ maxLength: 2000, description: 'the text; empty only for an approval without a word' })
  body!: string;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;
}

@ApiSchema({ name: 'ShareLinkCreator' })
class ShareLinkCreatorDto {
  @ApiProperty({ enum: ['person', 'key'] })
  kind!: 'person' | 'key';

  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ description: 'the name as it was then' })
  label!: string;
}

@ApiSchema({ name: 'ShareLink' })
export class ShareLinkDto implements ShareLinkView {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ type: [String], format: 'uuid', description: 'the posts the link shows, in order' })
  postIds!: string[];

  @ApiProperty({ enum: ['active', 'expired', 'revoked'] })
  status!: 'active' | 'expired' | 'revoked';

  @ApiProperty({ type: ShareLinkCreatorDto })
  createdBy!: ShareLinkCreatorDto;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;

  @ApiProperty({ format: 'date-time' })
  expiresAt!: string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  revokedAt!: string | null;
}

@ApiSchema({ name: 'NewShareLink' })
export class NewShareLinkDto extends ShareLinkDto implements NewShareLinkView {
  @ApiProperty({ description: "the link's token (256 random bits, base64url): shown this once, only its hash is kept", example: 'hQ3…' })
  token!: string;

  @ApiProperty({
    description: 'the review page to send: PUBLIC_URL/review/<token> (shown this once)',
    example: 'https://herald.example.com/review/hQ3…',
  })
  url!: string;
}
