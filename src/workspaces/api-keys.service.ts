import { Inject, Injectable, Logger } from '@nestjs/common';
import type { AuthContext } from '../access/auth-context';
import { mayGrant, mayRevokeKey, Role } from '../access/roles';
import { AuditService } from '../audit/audit.service';
import { SYSTEM_ACTOR } from '../audit/audit.types';
import { HERALD_CONFIG, HeraldConfig } from '../config/config';
import type { EmbeddedRead } from '../database/statement';
import { forbidden, notFound, unauthorized } from '../common/errors';
import { decodeCursor, DEFAULT_PAGE_SIZE, Page, toPage } from '../common/pagination';
import { ApiKeyEntity } from './api-key.entity';
import { bearerToken, generateApiKey, hashApiKey, keyPrefix, sameKeyHash } from './api-key.util';
import { ApiKeysRepository } from './api-keys.repository';
import { WorkspaceEntity } from './workspace.entity';
import { WorkspacesRepository } from './workspaces.repository';

export interface ApiKeyView {
  id: string;
  name: string;
  prefix: string;
  role: Role;
  bootstrap: boolean;
  createdAt: string;
}

export interface WorkspaceView {
  id: string;
  name: string;
  createdAt: string;
}

export function toApiKeyView(k: ApiKeyEntity): ApiKeyView {
  return { id: k.id, name: k.name, prefix: k.prefix, role: k.role, bootstrap: k.bootstrap, createdAt: k.createdAt.toISOString() };
}

/** How the audit trail and the page name a key: never more of it than its prefix. */
export function keyLabel(k: Pick<ApiKeyEntity, 'name' | 'prefix'>): string {
  return `key “${k.name}” (${k.prefix})`;
}

function contextOf(key: ApiKeyEntity): AuthContext {
  return {
    workspaceId: key.workspaceId,
    role: key.role,
    bootstrap: key.bootstrap,
    principal: { kind: 'key', id: key.id },
    label: keyLabel(key),
  };
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
    private readonly audit: AuditService,
  ) {}

  /**
   * Resolves an `Authorization` header to its workspace, or throws 401. `carried`: another
   * module's read to answer in the same statement (the API key guard's login throttle count).
   */
  async authenticate(authorization: string | undefined, carried: EmbeddedRead | null = null): Promise<AuthContext> {
    const token = bearerToken(authorization);
    if (!token) throw unauthorized('Missing API key: send the header "Authorization: Bearer <api key>"');
    const hash = hashApiKey(token);
    const key = carried ? await this.keys.findByHashCarrying(hash, carried) : await this.keys.findByHash(hash);
    // The lookup is by hash (an attacker cannot steer it); compare in constant time anyway.
    if (!key || !sameKeyHash(key.keyHash, hash) || key.revokedAt !== null) {
      throw unauthorized('Invalid or revoked API key');
    }
    return contextOf(key);
  }

  /**
   * The context of a key while it is not revoked, else null. The settings page calls it on each
   * request, so revoking a key (DELETE /v1/api-keys/:id) also ends the page sessions opened with it.
   */
  async activeKey(id: string): Promise<AuthContext | null> {
    const key = await this.keys.findById(id);
    if (!key || key.revokedAt !== null) return null;
    return contextOf(key);
  }

  /** POST /v1/api-keys: owners only (the role table), and never a role above the caller's. */
  async createKey(auth: AuthContext, name: string | undefined, role: Role = 'owner'): Promise<ApiKeyView & { key: string }> {
    if (!mayGrant(auth, role)) throw forbidden(`a key of role ${auth.role} cannot create a key of role ${role}`);
    const key = generateApiKey();
    const row = await this.workspaces.transaction(async (tx) => {
      const created = await this.keys.create(
        { workspaceId: auth.workspaceId, name: name ?? 'API key', keyHash: hashApiKey(key), prefix: keyPrefix(key), role },
        tx,
      );
      await this.audit.record(tx, auth, {
        kind: 'api_key',
        action: 'create',
        subjectId: created.id,
        summary: `Created the API key “${created.name}” (${created.prefix}, ${role})`,
        after: { name: created.name, prefix: created.prefix, role },
      });
      return created;
    });
    return { ...toApiKeyView(row), key };
  }

  async list(workspaceId: string, limit = DEFAULT_PAGE_SIZE, cursor?: string): Promise<Page<ApiKeyView>> {
    const rows = await this.keys.listActive(workspaceId, decodeCursor(cursor), limit);
    return toPage(rows, limit, toApiKeyView);
  }

  /**
   * DELETE /v1/api-keys/:id. Owners only; no key revokes one of a higher rank, and the operator's
   * bootstrap key is beyond any workspace key (roles.ts mayRevokeKey). A key revoking itself is
   * allowed (its last act).
   */
  async revoke(auth: AuthContext, id: string): Promise<void> {
    await this.workspaces.transaction(async (tx) => {
      const target = await this.keys.lockActive(tx, auth.workspaceId, id);
      if (!target) throw notFound('API key', id);
      const decision = mayRevokeKey(auth, target);
      if (!decision.ok) throw forbidden(`${decision.reason}; nothing was changed`);
      await this.keys.revoke(tx, id);
      await this.audit.record(tx, auth, {
        kind: 'api_key',
        action: 'revoke',
        subjectId: id,
        summary: `Revoked the API key “${target.name}” (${target.prefix}, ${target.role})`,
        before: { revoked: false },
        after: { revoked: true },
      });
    });
  }

  /** POST /v1/workspaces (the bootstrap key): the new workspace and its first key, role owner. */
  async createWorkspace(auth: AuthContext, name: string): Promise<{ workspace: WorkspaceView; apiKey: ApiKeyView & { key: string } }> {
    const key = generateApiKey();
    return this.workspaces.transaction(async (manager) => {
      const workspace = await this.workspaces.create({ name }, manager);
      const row = await this.keys.create(
        { workspaceId: workspace.id, name: 'First key', keyHash: hashApiKey(key), prefix: keyPrefix(key), role: 'owner' },
        manager,
      );
      // In the operator's trail (not the new workspace's: its owners need not see the operator's key).
      await this.audit.record(manager, auth, {
        kind: 'workspace',
        action: 'create',
        subjectId: workspace.id,
        summary: `Created the workspace “${workspace.name}” and its first API key (${row.prefix})`,
        after: { name: workspace.name },
      });
      return { workspace: toWorkspaceView(workspace), apiKey: { ...toApiKeyView(row), key } };
    });
  }

  /**
   * At start: make sure someone can log in.
   * - With HERALD_API_KEY: that key is the operator's bootstrap key (role owner of the bootstrap
   *   workspace, and instance-wide rights). A value not seen before is added and *replaces*
   *   every other bootstrap key (the previous HERALD_API_KEY, or the key printed at the first
   *   start): rotating the variable must lock the old value out, or a leaked key would keep its
   *   rights forever; a replaced value stays revoked, so a host restarting with an outdated
   *   value cannot undo a rotation. A value revoked any other way (through the API, before that
   *   was refused: "a member locks out the admin") is restored, with its rights. Idempotent
   *   across restarts and concurrent starts (advisory lock + unique hash).
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
          if (existing.replacedBy) {
            this.logger.warn(
              'HERALD_API_KEY was replaced by a newer HERALD_API_KEY and stays revoked: set the current value (or a new one)',
            );
          } else if (existing.revokedAt || !existing.bootstrap || existing.role !== 'owner') {
            await this.keys.restoreBootstrap(existing.id, manager);
            await this.audit.recordAs(manager, existing.workspaceId, SYSTEM_ACTOR, [
              {
                kind: 'api_key',
                action: 'restore',
                subjectId: existing.id,
                summary: `Restored the operator's key ${existing.prefix} at start (HERALD_API_KEY)`,
                before: { revoked: existing.revokedAt !== null, role: existing.role, bootstrap: existing.bootstrap },
                after: { revoked: false, role: 'owner', bootstrap: true },
              },
            ]);
            this.logger.warn('HERALD_API_KEY had been revoked; it is restored with its rights (only a new HERALD_API_KEY retires it)');
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
          role: 'owner',
          bootstrap: true,
        },
        manager,
      );
      this.logger.log(`Bootstrap API key ready for workspace ${workspace.id}`);
      if (configured) {
        const replaced = await this.keys.replaceOtherBootstrapKeys(row.id, manager);
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
