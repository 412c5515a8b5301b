import { Injectable, Logger } from '@nestjs/common';
import { SecretBox, SecretDecryptionError } from '../../../common/crypto/secret-box';
import { OAuthConnectError } from '../../oauth-connect.interface';
import { errorMessage, parseJson } from '../mastodon-answers';
import { MastodonAppsRepository, StoredApp } from './mastodon-apps.repository';
import { MastodonOAuthClient } from './mastodon-oauth.client';
import { appRegistrationBody, MASTODON_SCOPES, parseAppRegistration, registrationUsable } from './mastodon-oauth';

/** A registration ready to use: its secret open. */
export interface MastodonApp {
  clientId: string;
  clientSecret: string;
}

/**
 * Herald's app registration on each instance (`POST /api/v1/apps`), made the first time a person
 * connects an account of that instance and kept in mastodon_apps for every later connect: one
 * registration per instance and redirect URI, whoever connects. Registered again when the kept
 * one can no longer finish a flow (its secret expires within one, per `client_secret_expires_at`,
 * or it was registered with other scopes) or no longer opens (HERALD_SECRET_KEY changed).
 *
 * Two people connecting the same new instance at once both register (an HTTP call, never inside
 * a transaction); the database keeps the first one's (mastodon-apps.repository.ts) and the other
 * flow goes on with it. The losing registration stays at the instance unused: it has no token
 * and nothing refers to it.
 */
@Injectable()
export class MastodonApps {
  private readonly log = new Logger('MastodonOAuth');

  constructor(
    private readonly repo: MastodonAppsRepository,
    private readonly client: MastodonOAuthClient,
    private readonly box: SecretBox,
  ) {}

  /** The registration a new flow on `instanceUrl` uses, registered now if there is none usable. Throws OAuthConnectError. */
  async forFlow(instanceUrl: string, redirectUri: string, now = new Date()): Promise<MastodonApp> {
    const kept = await this.repo.find(instanceUrl, redirectUri);
    if (kept && registrationUsable(kept, MASTODON_SCOPES, now)) {
      const opened = this.open(kept);
      if (opened) return opened;
    }
    const fresh = await this.register(instanceUrl, redirectUri);
    const row: StoredApp = {
      instanceUrl,
      redirectUri,
      scopes: MASTODON_SCOPES.join(' '),
      clientId: fresh.clientId,
      sealedSecret: this.box.encrypt(fresh.clientSecret, context(instanceUrl, redirectUri, fresh.clientId)),
      secretExpiresAt: fresh.secretExpiresAt,
    };
    const keptNow = kept ? await this.repo.replace(kept.clientId, row) : await this.repo.insertIfAbsent(row);
    const host = new URL(instanceUrl).host;
    if (keptNow) {
      this.log.log(`Herald is registered as an app on ${host}${kept ? ' again (the earlier registration could no longer be used)' : ''}`);
      return { clientId: fresh.clientId, clientSecret: fresh.clientSecret };
    }
    // Another flow registered the instance meanwhile: its registration is the instance's now.
    const winner = await this.repo.find(instanceUrl, redirectUri);
    const opened = winner ? this.open(winner) : null;
    if (!opened)
      throw new OAuthConnectError(`Herald's registration on ${host} changed while you were connecting; start again.`, 'platform');
    return opened;
  }

  /** The registration a flow was started with, if it is still the kept one (null: replaced since, start again). */
  async forCallback(instanceUrl: string, redirectUri: string, clientId: string): Promise<MastodonApp | null> {
    const kept = await this.repo.find(instanceUrl, redirectUri);
    if (!kept || kept.clientId !== clientId) return null;
    return this.open(kept);
  }

  private open(app: StoredApp): MastodonApp | null {
    try {
      return {
        clientId: app.clientId,
        clientSecret: this.box.decrypt(app.sealedSecret, context(app.instanceUrl, app.redirectUri, app.clientId)),
      };
    } catch (err) {
      // Sealed under another HERALD_SECRET_KEY: the registration is registered again.
      if (err instanceof SecretDecryptionError) return null;
      throw err;
    }
  }

  /** `POST /api/v1/apps`, with a person's reading of every way it can fail. */
  private async register(
    instanceUrl: string,
    redirectUri: string,
  ): Promise<{ clientId: string; clientSecret: string; secretExpiresAt: Date | null }> {
    const host = new URL(instanceUrl).host;
    const res = await this.client.registerApp(instanceUrl, appRegistrationBody(redirectUri, MASTODON_SCOPES));
    if (res.kind === 'network_error') {
      throw new OAuthConnectError(`${host} could not be reached (${res.message}). Check the address; nothing was changed.`);
    }
    if (res.status === 429) {
      throw new OAuthConnectError(`${host} is limiting new app registrations (HTTP 429). Try again in a few minutes.`, 'platform');
    }
    const app = res.status === 200 ? parseAppRegistration(res.bodyText) : null;
    if (app) return app;
    if (res.status === 404 || res.status === 405 || (res.status === 200 && !app)) {
      throw new OAuthConnectError(
        `${host} does not look like a Mastodon instance: it did not take Herald's app registration (POST /api/v1/apps answered HTTP ${res.status}${res.status === 200 ? ' without client credentials' : ''}). Check the address; nothing was changed.`,
      );
    }
    const said = errorMessage(parseJson(res.bodyText));
    throw new OAuthConnectError(
      `${host} refused Herald's app registration (HTTP ${res.status}${said ? `: ${said.slice(0, 200)}` : ''}). Nothing was changed.`,
      res.status >= 500 ? 'platform' : 'refused',
    );
  }
}

/** The authenticated context a secret is sealed with: its row and its client id. */
function context(instanceUrl: string, redirectUri: string, clientId: string): string {
  return `mastodon_apps:${instanceUrl}:${redirectUri}:${clientId}`;
}
