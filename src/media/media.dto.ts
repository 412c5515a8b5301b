import { ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsOptional, IsString, MaxLength } from 'class-validator';
import { MAX_ALT_LENGTH } from './media.types';

/** The text fields of the multipart upload (the image itself is the `file` field). */
export class UploadMediaDto {
  @ApiPropertyOptional({ maxLength: MAX_ALT_LENGTH, description: 'alt text (required before the image can be posted)' })
  @IsOptional()
  @MaxLength(MAX_ALT_LENGTH)
  @IsString()
  alt?: string;
}

@ApiSchema({ name: 'UpdateMedia' })
export class UpdateMediaDto {
  @ApiPropertyOptional({ maxLength: MAX_ALT_LENGTH })
  @MaxLength(MAX_ALT_LENGTH)
  @IsString()
  alt!: string;
}
