import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsInt, IsNotEmpty, IsOptional, IsString, IsUUID, Max, MaxLength, Min } from 'class-validator';
import { PageQuery } from '../common/pagination';
import { DEFAULT_EXPIRY_DAYS, MAX_EXPIRY_DAYS, MAX_POSTS_PER_LINK, MIN_EXPIRY_DAYS } from './share-link';
import { MAX_COMMENT } from './reviewer-decision';

// class-validator checks decorators bottom-up and the pipe stops at the first failure, so the
// type check sits closest to the property.

@ApiSchema({ name: 'CreateComment' })
export class CreateCommentDto {
  @ApiProperty({ minLength: 1, maxLength: MAX_COMMENT, example: 'Could we say "launch" instead of "release"?' })
  @MaxLength(MAX_COMMENT)
  @IsNotEmpty()
  @IsString()
  body!: string;
}

@ApiSchema({ name: 'CreateShareLink' })
export class CreateShareLinkDto {
  @ApiPropertyOptional({
    type: [String],
    format: 'uuid',
    maxItems: MAX_POSTS_PER_LINK - 1,
    description: `further posts the link shows besides the post of the path (at most ${MAX_POSTS_PER_LINK} in all)`,
  })
  @IsOptional()
  @IsUUID('all', { each: true })
  @ArrayMaxSize(MAX_POSTS_PER_LINK - 1)
  @IsArray()
  postIds?: string[];

  @ApiPropertyOptional({ type: 'integer', minimum: MIN_EXPIRY_DAYS, maximum: MAX_EXPIRY_DAYS, default: DEFAULT_EXPIRY_DAYS })
  @IsOptional()
  @Max(MAX_EXPIRY_DAYS)
  @Min(MIN_EXPIRY_DAYS)
  @IsInt()
  expiresInDays?: number;
}

export class ListShareLinksQuery extends PageQuery {
  @ApiPropertyOptional({ format: 'uuid', description: 'only the links that show this post' })
  @IsOptional()
  @IsUUID('all')
  @Type(() => String)
  postId?: string;
}
