import { esc, excerpt, htmlFrame, link, oneLine } from '../mail/mail-format';
import type { Role } from '../access/roles';

/** The mails of the team model (pure): an invitation, a first person's confirmation, a password reset. Links only open pages. */

/** A mail's parts. */
export interface RenderedMail {
  subject: string;
  html: string;
  text: string;
}

const ROLE_WORDS: Record<Role, string> = {
  owner: 'an owner (everything, people and keys included)',
  editor: 'an editor (accounts, posts and failed posts)',
  viewer: 'a viewer (reads everything, changes nothing)',
};

export function invitationMail(f: { workspaceName: string; invitedBy: string; role: Role; link: string; days: number }): RenderedMail {
  const ws = excerpt(oneLine(f.workspaceName), 80);
  const by = excerpt(oneLine(f.invitedBy), 120);
  const subject = `You are invited to ${ws} on Herald`;
  const text = [
    `${by} invited you to the workspace "${ws}" on Herald, as ${ROLE_WORDS[f.role]}.`,
    '',
    'Open this link to choose your name and password (it works once, for the next',
    `${f.days} days):`,
    '',
    f.link,
    '',
    'If you did not expect this, ignore this mail: nothing happens without the link.',
  ].join('\n');
  const html = htmlFrame(
    subject,
    [
      `<p>${esc(by)} invited you to the workspace “${esc(ws)}” on Herald, as ${esc(ROLE_WORDS[f.role])}.</p>`,
      `<p>${link(f.link, 'Accept the invitation')} to choose your name and password. The link works once, for the next ${f.days} days.</p>`,
    ].join('\n'),
    'If you did not expect this, ignore this mail: nothing happens without the link.',
  );
  return { subject, text, html };
}

/** A workspace's first person, added with an owner key: the link confirms the address, which then logs in. */
export function firstPersonMail(f: { workspaceName: string; addedBy: string; name: string; link: string; days: number }): RenderedMail {
  const ws = excerpt(oneLine(f.workspaceName), 80);
  const by = excerpt(oneLine(f.addedBy), 120);
  const name = excerpt(oneLine(f.name), 80);
  const subject = `Confirm your address for ${ws} on Herald`;
  const ignore = 'If you did not expect this, ignore this mail: without the link, this address does not become a Herald login.';
  const text = [
    `Hello ${name},`,
    '',
    `${by} added you as the first person of the workspace "${ws}" on Herald, as ${ROLE_WORDS.owner}.`,
    '',
    'Open this link to confirm that this address is yours (it works once, for the next',
    `${f.days} days); you then log in with it and the password chosen when you were added:`,
    '',
    f.link,
    '',
    ignore,
  ].join('\n');
  const html = htmlFrame(
    subject,
    [
      `<p>Hello ${esc(name)},</p>`,
      `<p>${esc(by)} added you as the first person of the workspace “${esc(ws)}” on Herald, as ${esc(ROLE_WORDS.owner)}.</p>`,
      `<p>${link(f.link, 'Confirm your address')}; you then log in with it and the password chosen when you were added. The link works once, for the next ${f.days} days.</p>`,
    ].join('\n'),
    ignore,
  );
  return { subject, text, html };
}

export function resetMail(f: { name: string; link: string; minutes: number }): RenderedMail {
  const subject = 'Set a new Herald password';
  const name = excerpt(oneLine(f.name), 80);
  const text = [
    `Hello ${name},`,
    '',
    `Open this link to set a new password for Herald (it works once, for the next ${f.minutes} minutes):`,
    '',
    f.link,
    '',
    'Setting a new password logs you out everywhere else.',
    'If you did not ask for this, ignore this mail: your password stays as it is.',
  ].join('\n');
  const html = htmlFrame(
    subject,
    [
      `<p>Hello ${esc(name)},</p>`,
      `<p>${link(f.link, 'Set a new password')}. The link works once, for the next ${f.minutes} minutes. Setting a new password logs you out everywhere else.</p>`,
    ].join('\n'),
    'If you did not ask for this, ignore this mail: your password stays as it is.',
  );
  return { subject, text, html };
}
