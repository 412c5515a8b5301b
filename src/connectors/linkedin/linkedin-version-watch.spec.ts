import { Logger } from '@nestjs/common';
import { HeraldConfig, loadConfig } from '../../config/config';
import { LinkedInVersionWatch } from './linkedin-version-watch';

describe('LinkedInVersionWatch', () => {
  afterEach(() => jest.restoreAllMocks());

  it('logs the warning when the configured version is 60 days or less from its sunset, and nothing otherwise', () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const watch = new LinkedInVersionWatch({ linkedin: loadConfig({ LINKEDIN_VERSION: '202603' }).linkedin } as HeraldConfig); // sunset 2027-03-16
    expect(watch.check(new Date('2027-01-01T09:00:00Z'))).toBeNull();
    expect(warn).not.toHaveBeenCalled();
    const said = watch.check(new Date('2027-01-15T09:00:00Z'));
    expect(said).toMatch(/^LinkedIn API version 202603 is retired on 2027-03-16 \(in 60 days\): set LINKEDIN_VERSION to \d{6}/);
    expect(warn).toHaveBeenCalledWith(said);
  });
});
