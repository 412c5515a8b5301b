import type { Provider } from '../vocabulary/vocabulary';
import { esc, excerpt, htmlFrame, link, links, oneLine, plural } from '../mail/mail-format';
import type { DigestWindow } from './digest-schedule';
import { AccountActivity, DeadJobItem, DigestAccount, DigestCounts, DigestFacts, DigestMessage, DIGEST_ITEM_LIMIT } from './digest.types';
import { formatLocal } from '../common/zoned-time';

export interface DigestContext {
  publicUrl: string;
  timeZone: string;
  workspaceName: string;
}

/** Characters of a post's text shown per dead job, and of an error message. */
const TEXT_EXCERPT = 140;
const ERROR_EXCERPT = 300;

const PROVIDER_NAMES: Record<Provider, string> = { bluesky: 'Bluesky', linkedin: 'LinkedIn', mastodon: 'Mastodon', webhook: 'webhook' };
const providerName = (p: string) => PROVIDER_NAMES[p as Provider] ?? p;

/** Why an account needs a person, in words; empty when it does not. */
export function attentionReasons(a: DigestAccount): string[] {
  const reasons: string[] = [];
  if (a.status === 'needs_reauth') {
    reasons.push(
      `needs re-authentication${a.statusReason ? ` (${a.statusReason})` : ''}: re-enter its credentials; its posts wait until then`,
    );
  } else if (a.status === 'disabled') {
    reasons.push(
      `is disabled${a.statusReason ? ` (${a.statusReason})` : ''}: enable it when its receiver works again; its posts wait until then`,
    );
  }
  reasons.push(...a.warnings);
  return reasons;
}

function within(at: Date | null, w: DigestWindow): boolean {
  return at !== null && at.getTime() >= w.start.getTime() && at.getTime() < w.end.getTime();
}

/** "in the last 24 hours" (23 to 25 hours: a daylight-saving day), "in the last 3 hours", "in the last 3 days". */
export function windowPhrase(w: DigestWindow): string {
  const hours = Math.round((w.end.getTime() - w.start.getTime()) / 3_600_000);
  if (hours >= 23 && hours <= 25) return 'in the last 24 hours';
  if (hours <= 1) return 'in the last hour';
  if (hours < 48) return `in the last ${hours} hours`;
  return `in the last ${Math.round(hours / 24)} days`;
}

export function digestCounts(f: DigestFacts): DigestCounts {
  return {
    deadJobs: f.deadTotal,
    failedAttempts: f.activity.reduce((n, a) => n + a.failedAttempts, 0),
    published: f.activity.reduce((n, a) => n + a.published, 0),
    accountsNeedingAttention: f.accounts.filter((a) => attentionReasons(a).length > 0).length,
    circuitsOpened: f.accounts.filter((a) => within(a.circuitOpenedAt, f.window)).length,
  };
}

/**
 * The gist in the subject line: what failed, who needs a person. Counts only, never user
 * content, so nothing a receiver or a post author wrote can reach a header.
 */
export function digestSubject(c: DigestCounts, w: DigestWindow): string {
  const span = windowPhrase(w);
  const parts: string[] = [];
  if (c.deadJobs > 0) parts.push(`${plural(c.deadJobs, 'post')} failed ${span}`);
  if (c.accountsNeedingAttention > 0) {
    parts.push(`${plural(c.accountsNeedingAttention, 'account')} need${c.accountsNeedingAttention === 1 ? 's' : ''} attention`);
  }
  if (parts.length === 0 && c.circuitsOpened > 0) parts.push(`delivery trouble on ${plural(c.circuitsOpened, 'account')} ${span}`);
  if (parts.length === 0) parts.push(`no failures ${span}`);
  return `Herald: ${parts.join('; ')}`;
}

interface AccountLine {
  id: string;
  name: string;
  provider: string;
  activity: AccountActivity | null;
  circuitOpenedAt: Date | null;
}

/** Accounts with something to report, by name: activity with failures, or a circuit that opened. */
function accountLines(f: DigestFacts): AccountLine[] {
  const lines = new Map<string, AccountLine>();
  for (const a of f.activity) {
    if (a.failedAttempts === 0 && a.newlyDead === 0 && a.published === 0) continue;
    lines.set(a.accountId, { id: a.accountId, name: a.accountName, provider: a.provider, activity: a, circuitOpenedAt: null });
  }
  for (const a of f.accounts) {
    if (!within(a.circuitOpenedAt, f.window)) continue;
    const line = lines.get(a.id) ?? { id: a.id, name: a.name, provider: a.provider, activity: null, circuitOpenedAt: null };
    line.circuitOpenedAt = a.circuitOpenedAt;
    lines.set(a.id, line);
  }
  return [...lines.values()].sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
}

function activitySummary(line: AccountLine, timeZone: string): string {
  const a = line.activity;
  const parts = [
    `${a?.published ?? 0} published`,
    plural(a?.failedAttempts ?? 0, 'failed attempt'),
    `${a?.newlyDead ?? 0} newly dead-lettered`,
  ];
  if (line.circuitOpenedAt) parts.push(`circuit opened at ${formatLocal(line.circuitOpenedAt, timeZone)}`);
  return parts.join(', ');
}

function errorLabel(job: DeadJobItem): string {
  const cls = job.errorClass ?? 'unknown';
  return job.deadReason && job.deadReason !== cls ? `${cls} (${job.deadReason.replace('_', ' ')})` : cls;
}

/**
 * The daily digest of one workspace (docs/notifications.md), as a subject and two readable parts.
 *
 * Order: accounts that need a person first (repeated every day until fixed), then each
 * account's delivery in the window, then the newly dead jobs one by one (at most
 * DIGEST_ITEM_LIMIT, then "and N more" with a link to the list), then the most frequent errors.
 * `empty` says there is nothing a person needs to know: no dead job, no account needing
 * attention, no circuit opened (failed attempts that were retried are not news on their own).
 */
export function renderDigest(f: DigestFacts, ctx: DigestContext): DigestMessage {
  const counts = digestCounts(f);
  const empty = counts.deadJobs + counts.accountsNeedingAttention + counts.circuitsOpened === 0;
  const subject = digestSubject(counts, f.window);
  const { publicUrl, timeZone } = ctx;
  const at = (d: Date) => formatLocal(d, timeZone);
  const text: string[] = [];
  const html: string[] = [];

  const heading = `Herald daily digest for ${oneLine(ctx.workspaceName)}`;
  const span = `Failures from ${at(f.window.start)} to ${at(f.window.end)} (${timeZone}).`;
  text.push(heading, span, '');
  html.push(`<h1 style="font-size:20px;margin:0 0 4px">${esc(heading)}</h1>`, `<p style="margin:0 0 16px;color:#52525b">${esc(span)}</p>`);

  const attention = f.accounts
    .map((a) => ({ account: a, reasons: attentionReasons(a) }))
    .filter((x) => x.reasons.length > 0)
    .sort((a, b) => a.account.name.localeCompare(b.account.name));
  if (attention.length > 0) {
    text.push('NEEDS YOU (repeated every day until fixed)');
    html.push('<h2 style="font-size:16px;margin:24px 0 8px;color:#b91c1c">Needs you</h2><ul style="padding-left:20px">');
    for (const { account, reasons } of attention) {
      const who = `${oneLine(account.name)} (${providerName(account.provider)})`;
      for (const reason of reasons) text.push(`- ${who} ${reason}`);
      text.push(`  Fix it: ${links.settings(publicUrl)}`);
      html.push(
        `<li style="margin-bottom:8px"><strong>${esc(who)}</strong> ${reasons.map((r) => esc(r)).join('<br>')}<br>${link(links.settings(publicUrl), 'Fix it in the settings')}</li>`,
      );
    }
    text.push('');
    html.push('</ul>');
  }

  const lines = accountLines(f);
  if (lines.length > 0) {
    text.push('ACCOUNTS');
    html.push('<h2 style="font-size:16px;margin:24px 0 8px">Accounts</h2><ul style="padding-left:20px">');
    for (const line of lines) {
      const who = `${oneLine(line.name)} (${providerName(line.provider)})`;
      const summary = activitySummary(line, timeZone);
      text.push(`- ${who}: ${summary}`);
      const failed = (line.activity?.newlyDead ?? 0) > 0;
      if (failed) text.push(`  Its failed posts: ${links.failedPosts(publicUrl, { accountId: line.id })}`);
      html.push(
        `<li style="margin-bottom:6px"><strong>${esc(who)}</strong>: ${esc(summary)}${failed ? ` · ${link(links.failedPosts(publicUrl, { accountId: line.id }), 'its failed posts')}` : ''}</li>`,
      );
    }
    text.push('');
    html.push('</ul>');
  }

  if (counts.deadJobs > 0) {
    const shown = f.deadJobs.slice(0, DIGEST_ITEM_LIMIT);
    text.push(`NEWLY DEAD-LETTERED (${counts.deadJobs})`);
    html.push(`<h2 style="font-size:16px;margin:24px 0 8px">Newly dead-lettered (${counts.deadJobs})</h2>`);
    for (const job of shown) {
      const who = `${oneLine(job.accountName)} (${providerName(job.provider)})`;
      const postText = excerpt(job.text, TEXT_EXCERPT);
      const lastError = job.lastError ? excerpt(job.lastError, ERROR_EXCERPT) : 'no message recorded';
      const url = links.failedPost(publicUrl, job.jobId);
      text.push(`- ${who}, ${at(job.deadAt)}: ${errorLabel(job)}`, `  "${postText}"`, `  Last error: ${lastError}`, `  Open: ${url}`);
      html.push(
        '<div style="margin:0 0 12px;padding:8px 12px;border-left:3px solid #dc2626;background:#fafafa">',
        `<div><strong>${esc(who)}</strong> · ${esc(at(job.deadAt))} · <code>${esc(errorLabel(job))}</code></div>`,
        `<div style="margin:4px 0">“${esc(postText)}”</div>`,
        `<div style="color:#52525b">Last error: ${esc(lastError)}</div>`,
        `<div>${link(url, 'Open this failed post')}</div>`,
        '</div>',
      );
    }
    const more = counts.deadJobs - shown.length;
    if (more > 0) {
      text.push(`…and ${more} more: ${links.failedPosts(publicUrl)}`);
      html.push(`<p>…and ${more} more: ${link(links.failedPosts(publicUrl), 'see every failed post')}</p>`);
    }
    text.push('');
  }

  if (f.topErrors.length > 0) {
    text.push('MOST FREQUENT ERRORS');
    html.push('<h2 style="font-size:16px;margin:24px 0 8px">Most frequent errors</h2><ul style="padding-left:20px">');
    for (const e of f.topErrors) {
      const message = excerpt(e.message, ERROR_EXCERPT);
      text.push(`- ${e.count} × ${message}`);
      html.push(`<li>${e.count} × ${esc(message)}</li>`);
    }
    text.push('');
    html.push('</ul>');
  }

  if (empty) {
    const retried = counts.failedAttempts > 0 ? `; ${plural(counts.failedAttempts, 'failed attempt')} retried` : '';
    const calm = `No post failed ${windowPhrase(f.window)}: ${counts.published} published${retried}.`;
    text.push(calm, '');
    html.push(`<p>${esc(calm)}</p>`);
  }

  const why = 'You receive this because your address is a digest recipient of this Herald workspace.';
  text.push(`${why} Change it: ${links.notificationSettings(publicUrl)}`);
  const footer = `${esc(why)} ${link(links.notificationSettings(publicUrl), 'Change the notification settings')}`;

  return {
    subject,
    text: text.join('\n'),
    html: htmlFrame(subject, html.join('\n'), footer),
    empty,
    counts,
  };
}
