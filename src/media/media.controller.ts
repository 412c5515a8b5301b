import {
  Body,
  Controller,
  Delete,
  Get,
  Header,
  HttpCode,
  Param,
  Patch,
  Post,
  Query,
  Res,
  UploadedFile,
  UseInterceptors,
} from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiBody,
  ApiConsumes,
  ApiNoContentResponse,
  ApiOperation,
  ApiParam,
  ApiQuery,
  ApiResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { API_KEY_SCHEME, ApiErrors, ApiPageResponse, ApiV1Errors, BODY_ERRORS } from '../common/openapi';
import { PageQuery } from '../common/pagination';
import { ParseIdPipe } from '../common/parse-id.pipe';
import { Auth, AuthContext, Public } from '../workspaces/auth';
import { MediaUsageDto } from './media-responses.dto';
import { MediaDto, MediaWithUrlDto } from './media-view.dto';
import { UpdateMediaDto, UploadMediaDto } from './media.dto';
import { MediaUploadInterceptor, UploadedImage } from './media-upload.interceptor';
import { MediaService } from './media.service';
import { MEDIA_MIME_TYPES } from './media.types';

const mediaId = new ParseIdPipe('media');
const ID_PARAM = { name: 'id', format: 'uuid', description: 'the media id' } as const;

@ApiTags('media')
@ApiBearerAuth(API_KEY_SCHEME)
@ApiV1Errors()
@Controller('v1/media')
export class MediaController {
  constructor(private readonly media: MediaService) {}

  @Post()
  @UseInterceptors(MediaUploadInterceptor)
  @ApiConsumes('multipart/form-data')
  @ApiBody({
    description: 'multipart/form-data with the image in `file` and its alt text in `alt`',
    schema: {
      type: 'object',
      required: ['file'],
      properties: {
        file: { type: 'string', format: 'binary', description: 'PNG, JPEG, WebP or GIF, at most 5 MB' },
        alt: { type: 'string', maxLength: 2000, description: 'alt text (required before the image can be posted)' },
      },
    },
  })
  @ApiOperation({
    operationId: 'uploadMedia',
    summary: 'Upload an image (PNG, JPEG, WebP or GIF, ≤ 5 MB)',
    description: "The type is read from the bytes, not from the file name or Content-Type. List the id in a post's `media`.",
  })
  @ApiResponse({ status: 201, description: 'The stored image', type: MediaDto })
  @ApiErrors([...BODY_ERRORS, 409], {
    400: "No `file` field, or the image's header or frames are damaged.",
    409: "The workspace's media quota (MEDIA_QUOTA_BYTES, MEDIA_QUOTA_COUNT) is used up: delete images first.",
    413: 'The image is larger than 5 MB, or has too many pixels or frames.',
    415: 'The bytes are not a PNG, JPEG, WebP or GIF image.',
  })
  upload(@Auth() auth: AuthContext, @UploadedFile() file: UploadedImage | undefined, @Body() body: UploadMediaDto) {
    return this.media.upload(auth, file?.buffer, body.alt ?? '');
  }

  @Get()
  @ApiOperation({ operationId: 'listMedia', summary: "The workspace's images, newest first (details only, never the bytes)" })
  @ApiPageResponse(MediaDto)
  @ApiErrors([400])
  list(@Auth() auth: AuthContext, @Query() query: PageQuery) {
    return this.media.list(auth.workspaceId, query.limit, query.cursor);
  }

  // Declared before ':id', so "usage" is not taken for an id.
  @Get('usage')
  @ApiOperation({
    operationId: 'getMediaUsage',
    summary: "What the workspace's images take, and the quota (MEDIA_QUOTA_BYTES, MEDIA_QUOTA_COUNT)",
  })
  @ApiResponse({ status: 200, description: 'Usage and quota', type: MediaUsageDto })
  usage(@Auth() auth: AuthContext) {
    return this.media.usage(auth.workspaceId);
  }

  @Get(':id')
  @ApiOperation({ operationId: 'getMedia', summary: "The image's details and a fresh signed link to it" })
  @ApiParam(ID_PARAM)
  @ApiResponse({ status: 200, description: 'The image', type: MediaWithUrlDto })
  @ApiErrors([404])
  get(@Auth() auth: AuthContext, @Param('id', mediaId) id: string) {
    return this.media.get(auth.workspaceId, id);
  }

  @Patch(':id')
  @ApiOperation({ operationId: 'updateMedia', summary: 'Set the alt text' })
  @ApiParam(ID_PARAM)
  @ApiResponse({ status: 200, description: 'The image', type: MediaDto })
  @ApiErrors([...BODY_ERRORS, 404])
  update(@Auth() auth: AuthContext, @Param('id', mediaId) id: string, @Body() body: UpdateMediaDto) {
    return this.media.setAlt(auth, id, body.alt);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({
    operationId: 'deleteMedia',
    summary: 'Delete an image: its bytes, its signed links and its share of the quota',
    description: 'Refused (409, naming them) while posts not yet published, or dead jobs that could be requeued, still need it.',
  })
  @ApiParam(ID_PARAM)
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiErrors([404, 409], { 409: 'Still needed by the posts or dead jobs named in the message.' })
  async remove(@Auth() auth: AuthContext, @Param('id', mediaId) id: string): Promise<void> {
    await this.media.delete(auth, id);
  }
}

/** The signed links (webhook payloads' media URLs): no API key, the signature authorizes. */
@ApiTags('media')
@Public()
@Controller('media')
export class PublicMediaController {
  constructor(private readonly media: MediaService) {}

  @Get(':id')
  @ApiOperation({
    operationId: 'downloadMedia',
    summary: 'The image bytes behind a signed link',
    description: 'The links come from GET /v1/media/{id} and from webhook payloads; no API key: the signature authorizes, until `exp`.',
  })
  @ApiParam(ID_PARAM)
  @ApiQuery({ name: 'exp', required: true, description: 'expiry, Unix seconds', schema: { type: 'string' } })
  @ApiQuery({ name: 'sig', required: true, description: 'signature', schema: { type: 'string' } })
  @ApiResponse({
    status: 200,
    description: 'The image',
    content: Object.fromEntries(MEDIA_MIME_TYPES.map((t) => [t, { schema: { type: 'string', format: 'binary' } }])),
  })
  @ApiErrors([403, 404], { 403: 'The signature does not match, or the link has expired.', 404: 'The image was deleted.' })
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
