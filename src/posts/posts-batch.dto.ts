import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsObject } from 'class-validator';
import { ErrorBodyDto } from '../common/openapi';
import type { ErrorBody } from '../common/http-exception.filter';
import { PostDto } from './post-view.dto';
import type { PostView } from './post.types';
import { CreatePostDto } from './posts.dto';

/** Most posts one POST /v1/posts/batch takes (docs/api.md "Bulk"). */
export const MAX_BATCH_POSTS = 100;

/**
 * The batch's envelope. Only the envelope is validated here: each item is checked on its own
 * (PostsBatchService, with CreatePostDto's rules) so that one bad item is that item's 400 in the
 * answer, not the whole batch's. An item that is not a JSON object is the envelope's problem.
 */
@ApiSchema({ name: 'CreatePostsBatch' })
export class CreatePostsBatchDto {
  @ApiProperty({
    type: [CreatePostDto],
    minItems: 1,
    maxItems: MAX_BATCH_POSTS,
    description: `1 to ${MAX_BATCH_POSTS} posts, each as POST /v1/posts takes it (a draft, a scheduled post, or a queued one)`,
  })
  @ArrayMaxSize(MAX_BATCH_POSTS, { message: `posts has more than ${MAX_BATCH_POSTS} items; send at most ${MAX_BATCH_POSTS} per batch` })
  @ArrayMinSize(1, { message: 'posts is empty; send 1 to 100 posts' })
  @IsObject({ each: true, message: 'posts must be an array of post objects' })
  @IsArray()
  posts!: Record<string, unknown>[];
}

/** What a batch answers for one item. */
export interface BatchItemResult {
  index: number;
  status: number;
  post?: PostView;
  error?: ErrorBody;
}

/** The batch's answer: one result per item, in the order sent. */
export interface BatchResult {
  created: number;
  failed: number;
  results: BatchItemResult[];
}

@ApiSchema({ name: 'PostsBatchItemResult' })
export class BatchItemResultDto implements BatchItemResult {
  @ApiProperty({ description: 'the item’s position in `posts`, from 0', example: 0 })
  index!: number;

  @ApiProperty({
    description:
      'what POST /v1/posts would have answered for this item: 201 (created: `post`), or a 4xx (nothing created for it: `error`): 400 invalid, 403 not allowed, 409 a conflict',
    example: 201,
  })
  status!: number;

  @ApiPropertyOptional({ type: PostDto, description: 'the created post (status 201)' })
  post?: PostView;

  @ApiPropertyOptional({ type: ErrorBodyDto, description: 'the error POST /v1/posts would have answered for this item (status 4xx)' })
  error?: ErrorBody;
}

@ApiSchema({ name: 'PostsBatchResult' })
export class BatchResultDto implements BatchResult {
  @ApiProperty({ description: 'how many items were created' })
  created!: number;

  @ApiProperty({ description: 'how many items were refused (nothing was created for them)' })
  failed!: number;

  @ApiProperty({ type: [BatchItemResultDto], description: 'one result per item, in the order sent' })
  results!: BatchItemResult[];
}
