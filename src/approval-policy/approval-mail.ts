import { esc, excerpt, htmlFrame, link, oneLine } from '../mail/mail-format';

/**
 * The approval mails (pure): to the owners when a post waits for approval, to its author when it
 * is decided. Their one link opens the settings page's list (a link in a mail never acts: mail
 * scanners follow links); the decision is made there, logged in.
 */
export interface ApprovalMail {
  subject: string;
  html: string;
  text: string;
}

/** Where the page lists the posts waiting for approval. */
export const approvalsPageUrl = (publicUrl: string) => `${publicUrl}/settings/approvals`;

export function waitingMail(f: {
  workspaceName: string;
  author: string;
  text: string;
  resubmitted: boolean;
  publicUrl: string;
}): ApprovalMail {
  const ws = excerpt(oneLine(f.workspaceName), 80);
  const post = excerpt(oneLine(f.text), 140);
  const author = excerpt(oneLine(f.author), 120);
  const subject = `A post waits for your approval in ${ws}`;
  const what = f.resubmitted
    ? `${author} edited a post that was approved; it needs approval again:`
    : `${author} asks for approval of a post:`;
  const url = approvalsPageUrl(f.publicUrl);
  const text = [
    what,
    '',
    `  “${post}”`,
    '',
    'Nothing is published until an owner approves it. Approve or reject it on the settings page:',
    url,
  ].join('\n');
  const html = htmlFrame(
    subject,
    [
      `<p>${esc(what)}</p>`,
      `<blockquote style="margin:0 0 16px 0;padding-left:12px;border-left:3px solid #d4d4d8">${esc(post)}</blockquote>`,
      `<p>Nothing is published until an owner approves it. ${link(url, 'Approve or reject it on the settings page')}.</p>`,
    ].join('\n'),
    `You get this mail as an owner of the Herald workspace “${esc(ws)}”.`,
  );
  return { subject, html, text };
}

export function decisionMail(f: {
  workspaceName: string;
  decision: 'approved' | 'rejected' | 'expired';
  by: string;
  text: string;
  comment: string | null;
  publicUrl: string;
}): ApprovalMail {
  const ws = excerpt(oneLine(f.workspaceName), 80);
  const post = excerpt(oneLine(f.text), 140);
  const by = excerpt(oneLine(f.by), 120);
  const subject =
    f.decision === 'approved'
      ? `Your post was approved in ${ws}`
      : f.decision === 'rejected'
        ? `Your post was sent back in ${ws}`
        : `Your post expired in ${ws}`;
  const what =
    f.decision === 'approved'
      ? `${by} approved your post: it is scheduled.`
      : f.decision === 'rejected'
        ? `${by} sent your post back to you as a draft.`
        : `${by} approved your post after its deadline had passed: it expired, nothing was published.`;
  const url = `${f.publicUrl}/settings/posts`;
  const comment = f.comment === null ? [] : ['', `Comment: ${f.comment}`];
  const text = [what, '', `  “${post}”`, ...comment, '', `Your posts: ${url}`].join('\n');
  const html = htmlFrame(
    subject,
    [
      `<p>${esc(what)}</p>`,
      `<blockquote style="margin:0 0 16px 0;padding-left:12px;border-left:3px solid #d4d4d8">${esc(post)}</blockquote>`,
      ...(f.comment === null ? [] : [`<p><strong>Comment:</strong> ${esc(f.comment)}</p>`]),
      `<p>${link(url, 'Your posts on the settings page')}</p>`,
    ].join('\n'),
    `You get this mail as the author of a post in the Herald workspace “${esc(ws)}”.`,
  );
  return { subject, html, text };
}
