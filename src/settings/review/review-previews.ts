import type { AccountView } from '../../accounts/account.types';
import type { MediaRuleInfo } from '../../posts/platform-rules';
import type { PostView } from '../../posts/post.types';
import { PROVIDER_LABELS } from '../accounts-page.service';
import { AccountPreview, emptyValues, previewFor, type ComposeValues } from '../compose/compose-form';

/**
 * What a review page shows of a post (pure): for each target, the composer's own preview
 * (compose-form.ts previewFor: the text as the platform gets it, the thread's parts, a Mastodon
 * content warning) under the platform's name and the account's public handle where the platform
 * has one, and nothing else of the workspace: not the account's name in Herald (an internal
 * label), not a webhook's address, not the counters' refusals (a reviewer judges the words).
 */

export interface ReviewTarget {
  platform: string;
  /** `@name.bsky.social`, `@ada@mastodon.social`; null where the platform shows no handle here (LinkedIn, webhooks). */
  handle: string | null;
  text: string;
  spoilerText: string | null;
  parts: { number: number; text: string }[];
  /** Bluesky builds a link card for the link (no images). */
  card: boolean;
}

/** The handle a reader of the platform sees, from the account's public settings; null when unknown. */
export function publicHandle(account: Pick<AccountView, 'provider' | 'config'>): string | null {
  const config = account.config;
  if (account.provider === 'bluesky') {
    const id = typeof config.identifier === 'string' ? config.identifier : typeof config.handle === 'string' ? config.handle : '';
    // An identifier may be an email address or a DID: only a handle is shown.
    return /^[a-z0-9][a-z0-9.-]*\.[a-z]{2,}$/i.test(id) ? `@${id}` : null;
  }
  if (account.provider === 'mastodon') {
    const user = typeof config.username === 'string' ? config.username : '';
    const instance = typeof config.instanceUrl === 'string' ? config.instanceUrl : '';
    try {
      return user ? `@${user}@${new URL(instance).host}` : null;
    } catch {
      return null;
    }
  }
  return null;
}

/** The post's targets: a draft's (or a post waiting for approval) chosen ones, else its live jobs'. */
function targetsOf(post: PostView): { accountId: string; text: string; visibility?: string; spoilerText?: string }[] {
  if (post.draftTargets) {
    return post.draftTargets.map((t) => ({
      accountId: t.accountId,
      text: t.text ?? post.text,
      visibility: t.visibility,
      spoilerText: t.spoilerText,
    }));
  }
  return post.jobs
    .filter((j) => j.status !== 'cancelled')
    .map((j) => ({
      accountId: j.accountId,
      text: j.text,
      visibility: j.mastodon?.visibility ?? undefined,
      spoilerText: j.mastodon?.spoilerText ?? undefined,
    }));
}

/** Each target of `post` as a reviewer sees it. Accounts removed since are left out. */
export function reviewTargets(post: PostView, accounts: readonly AccountView[], media: readonly MediaRuleInfo[]): ReviewTarget[] {
  const byId = new Map(accounts.map((a) => [a.id, a]));
  const out: ReviewTarget[] = [];
  for (const t of targetsOf(post)) {
    const account = byId.get(t.accountId);
    if (!account) continue;
    const values: ComposeValues = {
      ...emptyValues('UTC'),
      text: t.text,
      title: post.title ?? '',
      link: post.link ?? '',
      accounts: [account.id],
      media: post.media,
      parts: (post.thread ?? []).map((p) => ({ text: p.text, link: p.link ?? '', media: [...p.media] })),
      spoilerText: account.provider === 'mastodon' ? (t.spoilerText ?? '') : '',
    };
    const preview: AccountPreview = previewFor(
      { id: account.id, name: '', provider: account.provider, providerLabel: PROVIDER_LABELS[account.provider], config: account.config },
      values,
      media,
    );
    out.push({
      platform: account.provider === 'webhook' ? 'Blog' : PROVIDER_LABELS[account.provider],
      handle: publicHandle(account),
      text: preview.text,
      spoilerText: preview.spoilerText,
      parts: preview.parts.map((p) => ({ number: p.number, text: p.text })),
      card: preview.card,
    });
  }
  return out;
}
