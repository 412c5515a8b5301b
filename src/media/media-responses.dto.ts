import { ApiProperty } from '@nestjs/swagger';

/** Response shapes of the media routes added with deletion and the quota (OpenAPI). */

export class MediaItemDto {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ enum: ['image/png', 'image/jpeg', 'image/webp', 'image/gif'] })
  mimeType!: string;

  @ApiProperty({ description: 'bytes stored' })
  byteSize!: number;

  @ApiProperty({ type: Number, nullable: true, description: 'pixels, as displayed (EXIF orientation applied)' })
  width!: number | null;

  @ApiProperty({ type: Number, nullable: true })
  height!: number | null;

  @ApiProperty()
  alt!: string;

  @ApiProperty({ description: 'SHA-256 of the bytes, hex' })
  sha256!: string;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;
}

export class MediaPageDto {
  @ApiProperty({ type: [MediaItemDto] })
  data!: MediaItemDto[];

  @ApiProperty({ type: String, nullable: true, description: 'pass as `cursor` for the next page; null on the last page' })
  nextCursor!: string | null;
}

export class MediaUsageDto {
  @ApiProperty({ description: 'bytes of the workspace\'s stored images' })
  bytes!: number;

  @ApiProperty({ description: 'number of stored images' })
  count!: number;

  @ApiProperty({ description: 'MEDIA_QUOTA_BYTES' })
  quotaBytes!: number;

  @ApiProperty({ description: 'MEDIA_QUOTA_COUNT' })
  quotaCount!: number;
}
