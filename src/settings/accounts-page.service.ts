import { isTokenWarning } from '../accounts/account-warnings';
import { Injectable } from '@nestjs/common';
import type { AccountView } from '../accounts/account.types';
import { AccountsService } from '../accounts/accounts.service';
import { MAX_PAGE_SIZE } from '../common/pagination';
import { limitsFor } from '../posts/platform-rules';
import type { Provider } from '../vocabulary/vocabulary';
import { AccountActivity, JobsService } from '../jobs/jobs.service';
import { accountHealth, Health, tokenExpiry, TokenExpiry } from './account-health';

export const PROVIDER_LABELS: Record<Provider, string> = {
  bluesky: 'Bluesky',
  linkedin: 'LinkedIn',
  mastodon: 'Mastodon',
  webhook: 'Blog webhook',
};

/** One account card of the accounts page. */
export interface AccountCard {
  id: string;
  name: string;
  provider: Provider;
  providerLabel: string;
  /** Who or where it posts: the Bluesky handle, the LinkedIn author, the Mastodon @name@instance, the webhook URL. */
  identity: string;
  status: AccountView['status'];
  disabled: boolean;
  health: Health;
  lastSuccessAt: string | null;
  lastError: { text: string; at: string | null } | null;
  tokenExpiry: TokenExpiry | null;
  warnings: string[];
  waiting: number;
  paused: number;
  dead: number;
  isWebhook: boolean;
  isLinkedIn: boolean;
  isMastodon: boolean;
  /** What the platform allows a post, when it depends on the account (a Mastodon instance's own limit). */
  limit: string | null;
}

/** At most this many accounts on the page (a workspace has a handful; this bounds a runaway). */
const MAX_ACCOUNTS = 1_000;

function identity(a: AccountView): string {
  const c = a.config;
  const str = (v: unknown) => (typeof v === 'string' ? v : '');
  switch (a.provider) {
    case 'bluesky':
      // "(OAuth)": connected with "Connect with Bluesky" rather than an app password.
      return `${c.handle ? `@${str(c.handle)}` : str(c.identifier)}${c.auth === 'oauth' ? ' (OAuth)' : ''}`;
    case 'linkedin':
      return str(c.authorUrn);
    case 'mastodon': {
      // @name@instance, as people name accounts across instances; the instance alone before a check read the name.
      let host = str(c.instanceUrl);
      try {
        host = new URL(host).host;
      } catch {
        // shown as stored
      }
      return c.username ? `@${str(c.username)}@${host}` : host;
    }
    case 'webhook':
      return str(c.url);
  }
}

/** A Mastodon account's limit, as its card says it: the instance's own, or the usual one until a check reads it. */
function limitLine(a: AccountView): string | null {
  if (a.provider !== 'mastodon') return null;
  const limits = limitsFor('mastodon', a.config);
  const known = a.config.limits !== undefined && a.config.limits !== null;
  return known
    ? `${limits.maxText} characters a status (links count as ${limits.charactersPerUrl}), ${limits.maxImages} images: the instance's own limits`
    : `${limits.maxText} characters a status assumed: the instance's own limits are read when the account is checked`;
}

/** Reads what the accounts page shows through the accounts and jobs services. */
@Injectable()
export class AccountsPageService {
  constructor(
    private readonly accounts: AccountsService,
    private readonly jobs: JobsService,
  ) {}

  async all(workspaceId: string): Promise<AccountView[]> {
    const out: AccountView[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.accounts.list(workspaceId, MAX_PAGE_SIZE, cursor);
      out.push(...page.data);
      cursor = page.nextCursor ?? undefined;
    } while (cursor && out.length < MAX_ACCOUNTS);
    return out;
  }

  async cards(workspaceId: string, now = new Date()): Promise<AccountCard[]> {
    const accounts = await this.all(workspaceId);
    const activity = await this.jobs.accountActivity(
      workspaceId,
      accounts.map((a) => a.id),
    );
    // Oldest first: a person's accounts keep their place as new ones are added.
    return accounts.reverse().map((a) => this.toCard(a, activity.get(a.id)!, now));
  }

  async card(workspaceId: string, id: string, now = new Date()): Promise<AccountCard> {
    const account = await this.accounts.get(workspaceId, id);
    const activity = await this.jobs.accountActivity(workspaceId, [id]);
    return this.toCard(account, activity.get(id)!, now);
  }

  private toCard(a: AccountView, act: AccountActivity, now: Date): AccountCard {
    const lastErrorText = a.lastError ?? act.lastFailure?.message ?? null;
    const expiry = tokenExpiry(a, now);
    return {
      id: a.id,
      name: a.name,
      provider: a.provider,
      providerLabel: PROVIDER_LABELS[a.provider],
      identity: identity(a),
      status: a.status,
      disabled: a.status === 'disabled',
      health: accountHealth(a, { last: act.lastFailure, lastAuthAt: act.lastAuthFailureAt }, now),
      lastSuccessAt: a.lastSuccessAt,
      lastError: lastErrorText ? { text: lastErrorText, at: act.lastFailure?.at ?? null } : null,
      tokenExpiry: expiry,
      // A token about to expire has its own line on the card; the other warnings (the LinkedIn
      // API version's sunset) are listed.
      warnings: expiry ? a.warnings.filter((w) => !isTokenWarning(w)) : a.warnings,
      waiting: act.scheduled + act.paused,
      paused: act.paused,
      dead: act.dead,
      isWebhook: a.provider === 'webhook',
      isLinkedIn: a.provider === 'linkedin',
      isMastodon: a.provider === 'mastodon',
      limit: limitLine(a),
    };
  }
}
