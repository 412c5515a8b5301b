/**
 * What LinkedIn publishes about its API versions (`LinkedIn-Version: YYYYMM`), and what Herald
 * concludes from it. Pure: `now` is passed in.
 *
 * Sources (LinkedIn's own pages, Marketing API, read 2026-12-01):
 * - "Recent Marketing API Changes" (Marketing API documentation, integrations section) heads its newest section "August 2026 - Version 202608 (Latest)", and warns that 202508
 *   "will be sunset on August 17, 2026".
 * - "Marketing API Versioning": monthly versions, each "supported and stable for a minimum of one
 *   year before sunset"; a retired version answers 426 NONEXISTENT_VERSION. LinkedIn sends no
 *   Sunset header: the dates exist only on its migrations page and in mail to app owners.
 * - "Migrations" (Marketing API documentation, integrations section): the dated sunsets in
 *   LINKEDIN_SUNSETS below.
 *
 * Renewing: when LinkedIn names a newer version "Latest", set NEWEST_LINKEDIN_VERSION to it
 * (and add any sunset dates its migrations page publishes). src/config/linkedin-versions.spec.ts
 * fails when the newest version's sunset is less than 6 months after the commit under test, so
 * this happens in the normal course of work, well before a default install is hit.
 */

/** The newest version LinkedIn documents as released (see above): Herald's default. */
export const NEWEST_LINKEDIN_VERSION = '202608';

/** Sunsets LinkedIn has published, by version (UTC dates). */
export const LINKEDIN_SUNSETS: Readonly<Record<string, string>> = {
  '202508': '2026-08-17',
  '202510': '2026-10-15',
  '202511': '2026-11-16',
  '202601': '2027-01-15',
  '202602': '2027-02-15',
  '202603': '2027-03-16',
};

/** Warnings begin this long before a version's sunset. */
export const LINKEDIN_VERSION_WARNING_DAYS = 60;

const DAY_MS = 86_400_000;

export interface LinkedInSunset {
  /** The day LinkedIn stops serving the version (00:00 UTC). */
  date: Date;
  /** Published by LinkedIn; false: the earliest its one-year rule allows (the 1st of the same month a year later). */
  published: boolean;
}

/** A version's sunset: LinkedIn's published date, else the earliest its rule allows. */
export function linkedInSunset(version: string): LinkedInSunset {
  const published = LINKEDIN_SUNSETS[version];
  if (published) return { date: new Date(`${published}T00:00:00Z`), published: true };
  const year = Number(version.slice(0, 4));
  const month = Number(version.slice(4, 6));
  return { date: new Date(Date.UTC(year + 1, month - 1, 1)), published: false };
}

export interface LinkedInVersionNotice {
  version: string;
  sunset: string;
  /** Whole days until the sunset; 0 or less once it has passed. */
  daysLeft: number;
  expired: boolean;
  /** What a person reads: the setting, the date, and the version to move to. */
  message: string;
}

/**
 * The warning for the configured version, or null while its sunset is more than
 * LINKEDIN_VERSION_WARNING_DAYS away.
 */
export function linkedInVersionNotice(version: string, now: Date): LinkedInVersionNotice | null {
  const sunset = linkedInSunset(version);
  const left = sunset.date.getTime() - now.getTime();
  if (left > LINKEDIN_VERSION_WARNING_DAYS * DAY_MS) return null;
  const day = sunset.date.toISOString().slice(0, 10);
  const when = sunset.published ? `on ${day}` : `as early as ${day} (LinkedIn serves each version at least a year)`;
  const advice =
    version === NEWEST_LINKEDIN_VERSION
      ? 'set LINKEDIN_VERSION to the newest version LinkedIn lists (a newer Herald knows it) and restart Herald'
      : `set LINKEDIN_VERSION to ${NEWEST_LINKEDIN_VERSION} (the newest version this Herald knows) and restart Herald`;
  const daysLeft = Math.ceil(left / DAY_MS);
  const message =
    left <= 0
      ? `LinkedIn API version ${version} was retired ${when.replace(/^as early as/, 'possibly on')}: LinkedIn posts fail until you ${advice}`
      : `LinkedIn API version ${version} is retired ${when} (in ${daysLeft} day${daysLeft === 1 ? '' : 's'}): ${advice}, or LinkedIn posts fail from then`;
  return { version, sunset: day, daysLeft, expired: left <= 0, message };
}
