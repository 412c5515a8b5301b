import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { MEDIA_MIME_TYPES } from './media.types';
import type { MediaView } from './media.service';

/** The answers of /v1/media as OpenAPI schemas; they implement MediaView, so the two cannot drift apart. */
@ApiSchema({ name: 'Media' })
export class MediaDto implements MediaView {
  @ApiProperty({ format: 'uuid', description: "list it in a post's `media`" })
  id!: string;

  @ApiProperty({ enum: MEDIA_MIME_TYPES, description: 'read from the bytes, not from the file name or Content-Type' })
  mimeType!: string;

  @ApiProperty({ type: 'integer', example: 48213 })
  byteSize!: number;

  @ApiProperty({ type: 'integer', nullable: true, example: 1200 })
  width!: number | null;

  @ApiProperty({ type: 'integer', nullable: true, example: 630 })
  height!: number | null;

  @ApiProperty({ description: 'alt text; required before the image can be posted', example: 'The Herald logo on a blue background' })
  alt!: string;

  @ApiProperty({ description: 'SHA-256 of the bytes, hex', example: '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08' })
  sha256!: string;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;
}

@ApiSchema({ name: 'MediaWithUrl' })
export class MediaWithUrlDto extends MediaDto {
  @ApiProperty({ format: 'uri', description: 'a signed link to the image that expires (MEDIA_URL_TTL_SECONDS)' })
  url!: string;
}
