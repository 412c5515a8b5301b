import { Inject, Injectable, Logger } from '@nestjs/common';
import { HERALD_CONFIG, HeraldConfig } from '../config/config';
import { notFound, unauthorized } from '../common/errors';
import { decodeCursor, DEFAULT_PAGE_SIZE, Page, toPage } from '../common/pagination';
import { ApiKeyEntity, ApiKeyRole } from './api-key.entity';
import { bearerToken, generateApiKey, hashApiKey, keyPrefix, sameKeyHash } from './api-key.util';
import { ApiKeysRepository } from './api-keys.repository';
import type { AuthContext } from './auth';
import { WorkspaceEntity } from './workspace.entity';
import { WorkspacesRepository } from './workspaces.repository';

export interface ApiKeyView {
  id: string;
  name: string;
  prefix: string;
  role: ApiKeyRole;
  createdAt: string;
}

export interface WorkspaceView {
  id: string;
  name: string;
  createdAt: string;
}

export function toApiKeyView(k: ApiKeyEntity): ApiKeyView {
  return { id: k.id, name: k.name, prefix: k.prefix, role: k.role, createdAt: k.createdAt.toISOString() };
}

export function toWorkspaceView(w: WorkspaceEntity): WorkspaceView {
  return { id: w.id, name: w.name, createdAt: w.createdAt.toISOString() };
}

@Injectable()
export class ApiKeysService {
  private readonly logger = new Logger('ApiKeys');

  constructor(
    @Inject(HERALD_CONFIG) private readonly config: HeraldConfig,
    private readonly keys: ApiKeysRepository,
    private readonly workspaces: WorkspacesRepository,
  ) {}

  /** Resolves an `Authorization` header to its workspace, or throws 401. */
  async authenticate(authorization: string | undefined): Promise<AuthContext> {
    const token = bearerToken(authorization);
    if (!token) throw unauthorized('Missing API key: send the header "Authorization: Bearer <api key>"');
    const hash = hashApiKey(token);
    const key = await this.keys.findByHash(hash);
    // The lookup is by hash (an attacker cannot steer it); compare in constant time anyway.
    if (!key || !sameKeyHash(key.keyHash, hash) || key.revokedAt !== null) {
      throw unauthorized('Invalid or revoked API key');
    }
    return { workspaceId: key.workspaceId, apiKeyId: key.id, role: key.role };
  }

  /**
   * The context of a key while it is not revoked, else null. The settings page calls it on each
   * request, so revoking a key (DELETE /v1/api-keys/:id) also ends the page sessions opened with it.
   */
  async activeKey(id: string): Promise<AuthContext | null> {
    const key = await this.keys.findById(id);
    if (!key || key.revokedAt !== null) return null;
    return { workspaceId: key.workspaceId, apiKeyId: key.id, role: key.role };
  }

  async createKey(workspaceId: string, name: string | undefined): Promise<ApiKeyView & { key: string }> {
    const key = generateApiKey();
    const row = await this.keys.create({
      workspaceId,
      name: name ?? 'API key',
      keyHash: hashApiKey(key),
      prefix: keyPrefix(key),
      role: 'member',
    });
    return { ...toApiKeyView(row), key };
  }

  async list(workspaceId: string, limit = DEFAULT_PAGE_SIZE, cursor?: string): Promise<Page<ApiKeyView>> {
    const rows = await this.keys.listActive(workspaceId, decodeCursor(cursor), limit);
    return toPage(rows, limit, toApiKeyView);
  }

  async revoke(workspaceId: string, id: string): Promise<void> {
    if (!(await this.keys.revoke(workspaceId, id))) throw notFound('API key', id);
  }

  async createWorkspace(name: string): Promise<{ workspace: WorkspaceView; apiKey: ApiKeyView & { key: string } }> {
    const key = generateApiKey();
    return this.workspaces.transaction(async (manager) => {
      const workspace = await this.workspaces.create({ name }, manager);
      const row = await this.keys.create(
        { workspaceId: workspace.id, name: 'First key', keyHash: hashApiKey(key), prefix: keyPrefix(key), role: 'member' },
        manager,
      );
      return { workspace: toWorkspaceView(workspace), apiKey: { ...toApiKeyView(row), key } };
    });
  }

  /**
   * At start: make sure someone can log in.
   * - With HERALD_API_KEY: that key is the bootstrap workspace's one admin key. A value not
   *   seen before is added and *replaces* every other admin key (the previous HERALD_API_KEY,
   *   or the key printed at the first start): rotating the variable must lock the old value
   *   out, or a leaked key would keep admin rights forever. A value that is already revoked
   *   (through the API, or replaced by a newer value) stays revoked: a host restarting with an
   *   outdated value must not undo a rotation. Idempotent across restarts and concurrent
   *   starts (advisory lock + unique hash).
   * - Without it, and no key at all in the database: create the bootstrap workspace and a
   *   key, and print the key once on the console (not in the structured log).
   */
  async ensureBootstrapKey(print: (text: string) => void): Promise<void> {
    const configured = this.config.bootstrapApiKey;
    const generated = await this.workspaces.withBootstrapLock(async (manager) => {
      if (configured) {
        const hash = hashApiKey(configured);
        const existing = await this.keys.findByHash(hash, manager);
        if (existing) {
          if (existing.revokedAt) {
            this.logger.warn(
              'HERALD_API_KEY is revoked (through the API, or replaced by a newer HERALD_API_KEY) and stays revoked: set a new value to get an admin key',
            );
          }
          return null;
        }
      } else if ((await this.keys.countActive(manager)) > 0) {
        return null;
      }
      const workspace =
        (await this.workspaces.findBootstrap(manager)) ??
        (await this.workspaces.create({ name: 'Default workspace', isBootstrap: true }, manager));
      const key = configured ?? generateApiKey();
      const row = await this.keys.create(
        {
          workspaceId: workspace.id,
          name: configured ? 'HERALD_API_KEY' : 'Bootstrap key',
          keyHash: hashApiKey(key),
          prefix: keyPrefix(key),
          role: 'admin',
        },
        manager,
      );
      this.logger.log(`Bootstrap API key ready for workspace ${workspace.id}`);
      if (configured) {
        const replaced = await this.keys.revokeOtherAdminKeys(workspace.id, row.id, manager);
        if (replaced.length > 0) {
          this.logger.warn(`HERALD_API_KEY changed: the previous bootstrap key (id ${replaced.join(', ')}) is revoked`);
        }
      }
      return configured ? null : key;
    });
    if (generated) {
      print(
        [
          '',
          '  Herald created your first API key. It is shown this once; store it now:',
          '',
          `    ${generated}`,
          '',
          `  Use it as "Authorization: Bearer <key>" on ${this.config.publicUrl}/v1, or log in at ${this.config.publicUrl}/settings.`,
          '',
        ].join('\n') + '\n',
      );
    }
  }
}
