import { execFileSync } from 'node:child_process';
import { DEFAULT_LINKEDIN_VERSION, loadConfig } from './config';
import {
  LINKEDIN_SUNSETS,
  LINKEDIN_VERSION_WARNING_DAYS,
  NEWEST_LINKEDIN_VERSION,
  linkedInSunset,
  linkedInVersionNotice,
} from './linkedin-versions';

const DAY = 86_400_000;

/**
 * The date of the commit under test, so a given commit's result never changes with the day the
 * suite runs. Outside a git checkout (an unpacked tarball) there is no commit: today stands in.
 */
function commitDate(): Date {
  try {
    const out = execFileSync('git', ['log', '-1', '--format=%cI'], {
      cwd: __dirname,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const d = new Date(out.trim());
    if (!Number.isNaN(d.getTime())) return d;
  } catch {
    // not a git checkout
  }
  return new Date();
}

describe('the default LinkedIn version', () => {
  it('is the newest version Herald knows, and what a default install sends', () => {
    expect(DEFAULT_LINKEDIN_VERSION).toBe(NEWEST_LINKEDIN_VERSION);
    expect(loadConfig({}).linkedin.apiVersion).toBe(NEWEST_LINKEDIN_VERSION);
    for (const v of Object.keys(LINKEDIN_SUNSETS)) expect(v < NEWEST_LINKEDIN_VERSION).toBe(true);
  });

  it('is served at least 6 months after this commit (renew NEWEST_LINKEDIN_VERSION when this fails)', () => {
    const committed = commitDate();
    const sixMonthsLater = new Date(committed);
    sixMonthsLater.setUTCMonth(sixMonthsLater.getUTCMonth() + 6);
    const sunset = linkedInSunset(NEWEST_LINKEDIN_VERSION).date;
    if (sunset.getTime() < sixMonthsLater.getTime()) {
      throw new Error(
        `LinkedIn API version ${NEWEST_LINKEDIN_VERSION} may be retired on ${sunset.toISOString().slice(0, 10)}, less than 6 months after this commit (${committed.toISOString().slice(0, 10)}): set NEWEST_LINKEDIN_VERSION in src/config/linkedin-versions.ts to the version LinkedIn's "Recent Marketing API Changes" page names Latest`,
      );
    }
  });
});

describe('linkedInSunset', () => {
  it('uses the date LinkedIn published', () => {
    expect(linkedInSunset('202510')).toEqual({ date: new Date('2026-10-15T00:00:00Z'), published: true });
    expect(linkedInSunset('202603').date.toISOString()).toBe('2027-03-16T00:00:00.000Z');
  });

  it("otherwise assumes the earliest day LinkedIn's one-year rule allows: the 1st of the same month a year later", () => {
    expect(linkedInSunset('202608')).toEqual({ date: new Date('2027-08-01T00:00:00Z'), published: false });
    expect(linkedInSunset('202612').date.toISOString()).toBe('2027-12-01T00:00:00.000Z');
  });
});

describe('linkedInVersionNotice', () => {
  const sunset = new Date('2026-10-15T00:00:00Z');
  const before = (days: number) => new Date(sunset.getTime() - days * DAY);

  it(`is silent until ${LINKEDIN_VERSION_WARNING_DAYS} days before the sunset`, () => {
    expect(linkedInVersionNotice('202510', before(LINKEDIN_VERSION_WARNING_DAYS + 1))).toBeNull();
    expect(linkedInVersionNotice(NEWEST_LINKEDIN_VERSION, new Date('2026-12-01T00:00:00Z'))).toBeNull();
  });

  it('warns from 60 days before, naming the date, the setting and the version to move to', () => {
    const n = linkedInVersionNotice('202510', before(LINKEDIN_VERSION_WARNING_DAYS));
    expect(n).toEqual({
      version: '202510',
      sunset: '2026-10-15',
      daysLeft: 60,
      expired: false,
      message: `LinkedIn API version 202510 is retired on 2026-10-15 (in 60 days): set LINKEDIN_VERSION to ${NEWEST_LINKEDIN_VERSION} (the newest version this Herald knows) and restart Herald, or LinkedIn posts fail from then`,
    });
    expect(linkedInVersionNotice('202510', before(0.5))?.message).toContain('(in 1 day)');
  });

  it('says the version is retired once the sunset has passed', () => {
    const n = linkedInVersionNotice('202510', new Date('2026-12-01T00:00:00Z'));
    expect(n).toMatchObject({ expired: true, daysLeft: -47 });
    expect(n?.message).toBe(
      `LinkedIn API version 202510 was retired on 2026-10-15: LinkedIn posts fail until you set LINKEDIN_VERSION to ${NEWEST_LINKEDIN_VERSION} (the newest version this Herald knows) and restart Herald`,
    );
  });

  it('for the newest version it knows, Herald says a newer Herald is needed and the date is the earliest possible', () => {
    const n = linkedInVersionNotice(NEWEST_LINKEDIN_VERSION, new Date('2027-07-01T00:00:00Z'));
    expect(n?.message).toBe(
      `LinkedIn API version ${NEWEST_LINKEDIN_VERSION} is retired as early as 2027-08-01 (LinkedIn serves each version at least a year) (in 31 days): set LINKEDIN_VERSION to the newest version LinkedIn lists (a newer Herald knows it) and restart Herald, or LinkedIn posts fail from then`,
    );
  });
});
