import { ApiProperty, ApiSchema } from '@nestjs/swagger';

/** The answer of GET /v1/media/usage (OpenAPI); the media shape itself is MediaDto (media-view.dto.ts). */

@ApiSchema({ name: 'MediaUsage' })
export class MediaUsageDto {
  @ApiProperty({ description: "bytes of the workspace's stored images" })
  bytes!: number;

  @ApiProperty({ description: 'number of stored images' })
  count!: number;

  @ApiProperty({ description: 'MEDIA_QUOTA_BYTES' })
  quotaBytes!: number;

  @ApiProperty({ description: 'MEDIA_QUOTA_COUNT' })
  quotaCount!: number;
}
