import { Body, Controller, Delete, Get, Header, HttpCode, Param, Patch, Post, Query, Res, UploadedFile, UseInterceptors } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiBody,
  ApiConflictResponse,
  ApiConsumes,
  ApiExcludeEndpoint,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { PageQuery } from '../common/pagination';
import { ParseIdPipe } from '../common/parse-id.pipe';
import { Auth, AuthContext, Public } from '../workspaces/auth';
import { MediaPageDto, MediaUsageDto } from './media-responses.dto';
import { UpdateMediaDto, UploadMediaDto } from './media.dto';
import { MediaUploadInterceptor, UploadedImage } from './media-upload.interceptor';
import { MediaService } from './media.service';

const mediaId = new ParseIdPipe('media');

@ApiTags('media')
@ApiBearerAuth()
@Controller('v1/media')
export class MediaController {
  constructor(private readonly media: MediaService) {}

  @Post()
  @UseInterceptors(MediaUploadInterceptor)
  @ApiConsumes('multipart/form-data')
  @ApiBody({
    schema: { type: 'object', required: ['file'], properties: { file: { type: 'string', format: 'binary' }, alt: { type: 'string' } } },
  })
  @ApiOperation({ summary: 'Upload an image (PNG, JPEG, WebP or GIF, ≤ 5 MB; the type is read from the bytes). Answers its id.' })
  upload(@Auth() auth: AuthContext, @UploadedFile() file: UploadedImage | undefined, @Body() body: UploadMediaDto) {
    return this.media.upload(auth.workspaceId, file?.buffer, body.alt ?? '');
  }

  @Get()
  @ApiOperation({ summary: 'The workspace\'s images, newest first (details only, never the bytes).' })
  @ApiOkResponse({ type: MediaPageDto })
  list(@Auth() auth: AuthContext, @Query() query: PageQuery) {
    return this.media.list(auth.workspaceId, query.limit, query.cursor);
  }

  // Declared before ':id', so "usage" is not taken for an id.
  @Get('usage')
  @ApiOperation({ summary: 'What the workspace\'s images take, and the quota (MEDIA_QUOTA_BYTES, MEDIA_QUOTA_COUNT).' })
  @ApiOkResponse({ type: MediaUsageDto })
  usage(@Auth() auth: AuthContext) {
    return this.media.usage(auth.workspaceId);
  }

  @Get(':id')
  @ApiOperation({ summary: 'The image\'s details and a fresh signed link to it.' })
  get(@Auth() auth: AuthContext, @Param('id', mediaId) id: string) {
    return this.media.get(auth.workspaceId, id);
  }

  @Patch(':id')
  @ApiOperation({ summary: 'Set the alt text.' })
  update(@Auth() auth: AuthContext, @Param('id', mediaId) id: string, @Body() body: UpdateMediaDto) {
    return this.media.setAlt(auth.workspaceId, id, body.alt);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({
    summary:
      'Delete an image: its bytes, its signed links and its share of the quota. Refused (409, naming them) while posts not yet published, or dead jobs that could be requeued, still need it.',
  })
  @ApiNoContentResponse({ description: 'deleted' })
  @ApiConflictResponse({ description: 'still needed by the posts named in the message' })
  @ApiNotFoundResponse({ description: 'no such image in this workspace' })
  async remove(@Auth() auth: AuthContext, @Param('id', mediaId) id: string): Promise<void> {
    await this.media.delete(auth.workspaceId, id);
  }
}

/** The signed links (webhook payloads' media URLs): no API key, the signature authorizes. */
@Public()
@Controller('media')
export class PublicMediaController {
  constructor(private readonly media: MediaService) {}

  @Get(':id')
  @ApiExcludeEndpoint()
  @Header('X-Content-Type-Options', 'nosniff')
  @Header('Content-Security-Policy', "default-src 'none'; sandbox")
  async serve(
    @Param('id', mediaId) id: string,
    @Query('exp') exp: string | undefined,
    @Query('sig') sig: string | undefined,
    @Res() res: Response,
  ): Promise<void> {
    const found = await this.media.serve(id, exp, sig, new Date());
    res.setHeader('Content-Type', found.mimeType);
    res.setHeader('Cache-Control', `private, max-age=${found.maxAgeSeconds}, immutable`);
    res.setHeader('ETag', `"${found.sha256}"`);
    res.setHeader('Content-Length', String(found.bytes.length));
    res.status(200).end(found.bytes);
  }
}
