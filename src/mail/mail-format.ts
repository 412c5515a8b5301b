/**
 * Building blocks of Herald's mails: escaping, excerpts, links and the HTML frame. Pure.
 *
 * Every piece of user content (post text, account and workspace names, error messages, which
 * quote receivers' answers) goes into the HTML part through `esc`, and into headers through
 * `headerText`. The plain-text part carries it as it is: a text/plain part is never rendered.
 */

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text for an HTML element or a quoted attribute value. */
export function esc(value: string): string {
  return value.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]);
}

/** Control characters (CR and LF included) as spaces, runs of white space as one: safe in a header or a single line. */
export function oneLine(value: string): string {
  return (
    value
      // eslint-disable-next-line no-control-regex -- control characters are what this removes
      .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ')
      .replace(/\s+/g, ' ')
      .trim()
  );
}

const segmenter = new Intl.Segmenter('en', { granularity: 'grapheme' });

/** At most `max` user-perceived characters of `value` on one line, with "…" when cut. */
export function excerpt(value: string, max: number): string {
  const line = oneLine(value);
  let out = '';
  let n = 0;
  for (const { segment } of segmenter.segment(line)) {
    if (n === max) return `${out.trimEnd()}…`;
    out += segment;
    n++;
  }
  return out;
}

/** `n thing` / `n things`. */
export function plural(n: number, singular: string, pluralForm = `${singular}s`): string {
  return `${n} ${n === 1 ? singular : pluralForm}`;
}

/**
 * Links in mails open pages of the settings UI and nothing else: mail scanners and link
 * previews follow every link in a message, so no link may act (requeue, discard, unsubscribe).
 */
export const links = {
  failedPost: (publicUrl: string, jobId: string) => `${publicUrl}/settings/failed-posts/${encodeURIComponent(jobId)}`,
  failedPosts: (publicUrl: string, filter: { accountId?: string } = {}) =>
    `${publicUrl}/settings/failed-posts${filter.accountId ? `?account=${encodeURIComponent(filter.accountId)}` : ''}`,
  settings: (publicUrl: string) => `${publicUrl}/settings`,
  notificationSettings: (publicUrl: string) => `${publicUrl}/settings/notifications`,
};

export function link(href: string, label: string): string {
  return `<a href="${esc(href)}" style="color:#1d4ed8">${esc(label)}</a>`;
}

/** The HTML document around a mail's body: inline styles only (mail clients drop <style> and classes). */
export function htmlFrame(title: string, body: string, footer: string): string {
  return [
    '<!DOCTYPE html>',
    '<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">',
    `<title>${esc(title)}</title></head>`,
    '<body style="margin:0;padding:0;background:#f4f4f5">',
    '<div style="max-width:640px;margin:0 auto;padding:24px;font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;font-size:15px;line-height:1.5;color:#18181b;background:#ffffff">',
    body,
    `<p style="margin-top:32px;font-size:12px;color:#71717a">${footer}</p>`,
    '</div></body></html>',
  ].join('\n');
}
