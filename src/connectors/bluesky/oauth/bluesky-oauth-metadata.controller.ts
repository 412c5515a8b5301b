import { Controller, Get, Header } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Public } from '../../../access/auth-context';
import { invalidInput } from '../../../common/errors';
import { CLIENT_METADATA_PATH, JWKS_PATH } from './bluesky-oauth-client';
import { BlueskyOAuth } from './bluesky-oauth.service';

/**
 * Herald's Bluesky OAuth client as authorization servers see it: the client metadata document
 * (its URL is the `client_id`) and the public key set its client assertions are checked against.
 * Public by nature (no key, no session), and never a secret: the JWKS holds the public half only.
 * A PUBLIC_URL that cannot be a client_id (http, localhost...) answers 400 saying why. Not a
 * page: no session, no page headers; it lives beside the client it describes.
 */
@ApiExcludeController()
@Public()
@Controller()
export class BlueskyOAuthMetadataController {
  constructor(private readonly oauth: BlueskyOAuth) {}

  @Get(CLIENT_METADATA_PATH.slice(1))
  @Header('Cache-Control', 'public, max-age=600')
  metadata(): unknown {
    this.requireAvailable();
    return this.oauth.clientMetadata();
  }

  @Get(JWKS_PATH.slice(1))
  @Header('Cache-Control', 'public, max-age=600')
  jwks(): Promise<unknown> {
    this.requireAvailable();
    return this.oauth.jwks();
  }

  private requireAvailable(): void {
    const availability = this.oauth.availability;
    if (!availability.ok) throw invalidInput(availability.reason);
  }
}
