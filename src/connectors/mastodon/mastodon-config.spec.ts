import { ConnectorInputError } from '../connector.interface';
import { parseAccount, parseInstanceLimits, parseMedia, parseStatus, parseStatuses } from './mastodon-answers';
import {
  DEFAULT_MASTODON_LIMITS,
  handleOf,
  limitsOf,
  parseInstanceUrl,
  parseMastodonInput,
  requireHttps,
  storedConfig,
} from './mastodon-config';

describe('parseInstanceUrl', () => {
  it('keeps the origin of an instance address', () => {
    expect(parseInstanceUrl('https://mastodon.social')).toBe('https://mastodon.social');
    expect(parseInstanceUrl(' https://Social.Example.org/ ')).toBe('https://social.example.org');
    expect(parseInstanceUrl('http://127.0.0.1:3000')).toBe('http://127.0.0.1:3000');
  });

  it.each([
    ['', /it is required/],
    ['mastodon.social', /must be the address of a Mastodon instance/],
    ['ftp://mastodon.social', /must be the address/],
    ['https://mastodon.social/@ada', /without a path or query \(https:\/\/mastodon\.social\)/],
    ['https://mastodon.social/?x=1', /without a path or query/],
    ['https://ada:pw@mastodon.social', /must not contain a user name or password/],
  ])('refuses %p', (value, message) => {
    expect(() => parseInstanceUrl(value)).toThrow(message);
  });
});

describe('requireHttps', () => {
  it('takes https always and plain http only where private addresses are allowed, naming why', () => {
    expect(() => requireHttps('https://mastodon.social', false)).not.toThrow();
    expect(() => requireHttps('http://127.0.0.1:3000', true)).not.toThrow();
    expect(() => requireHttps('http://mastodon.example', false)).toThrow(
      'config.instanceUrl must start with https://: the access token would cross the network unencrypted over plain http',
    );
  });
});

describe('parseMastodonInput', () => {
  it('takes { instanceUrl, accessToken }', () => {
    expect(parseMastodonInput({ instanceUrl: 'https://m.example/', accessToken: 'tok' })).toEqual({
      instanceUrl: 'https://m.example',
      accessToken: 'tok',
    });
  });

  it('keeps the stored instance on a PATCH that gives only a new token', () => {
    expect(parseMastodonInput({ accessToken: 'new' }, 'https://m.example')).toEqual({
      instanceUrl: 'https://m.example',
      accessToken: 'new',
    });
  });

  it('refuses unknown fields, a missing or spaced token, without echoing it', () => {
    expect(() => parseMastodonInput({ instanceUrl: 'https://m.example', accessToken: 't', scope: 'x' })).toThrow(
      /config\."scope" is not allowed/,
    );
    expect(() => parseMastodonInput({ instanceUrl: 'https://m.example' })).toThrow('config.accessToken is required');
    try {
      parseMastodonInput({ instanceUrl: 'https://m.example', accessToken: 'secret value' });
      throw new Error('accepted');
    } catch (err) {
      expect(err).toBeInstanceOf(ConnectorInputError);
      expect((err as Error).message).not.toContain('secret value');
    }
    expect(() => parseMastodonInput('x')).toThrow(/config must be an object/);
  });
});

describe('limits', () => {
  it("reads /api/v2/instance's configuration", () => {
    expect(
      parseInstanceLimits({
        configuration: {
          statuses: { max_characters: 5000, max_media_attachments: 6, characters_reserved_per_url: 23 },
          media_attachments: { image_matrix_limit: 33177600 },
        },
      }),
    ).toEqual({ maxCharacters: 5000, charactersReservedPerUrl: 23, maxMediaAttachments: 6, imageMatrixLimit: 33177600 });
  });

  it('is null without a character limit, and fills what an instance leaves out with the usual values', () => {
    expect(parseInstanceLimits({ version: '2.9' })).toBeNull();
    expect(parseInstanceLimits({ configuration: { statuses: { max_characters: 'many' } } })).toBeNull();
    expect(parseInstanceLimits({ configuration: { statuses: { max_characters: 700 } } })).toEqual({
      maxCharacters: 700,
      charactersReservedPerUrl: 23,
      maxMediaAttachments: 4,
      imageMatrixLimit: null,
    });
  });

  it("counts with Mastodon's usual limits until the instance's are known", () => {
    expect(limitsOf({ instanceUrl: 'https://m.example' })).toEqual(DEFAULT_MASTODON_LIMITS);
    expect(limitsOf({ limits: { maxCharacters: 11000, charactersReservedPerUrl: 30 } }).maxCharacters).toBe(11000);
  });
});

describe('stored config and answers', () => {
  it('reads a stored config leniently, and names the account across instances', () => {
    const config = storedConfig({ instanceUrl: 'https://m.example', accountId: '9', username: 'ada', limits: null });
    expect(config).toMatchObject({ instanceUrl: 'https://m.example', accountId: '9', username: 'ada', limits: null });
    expect(handleOf(config!)).toBe('@ada@m.example');
    expect(storedConfig({ instanceUrl: 'not a url' })).toBeNull();
  });

  it("parses the instance's entities field by field", () => {
    expect(parseAccount({ id: '1', username: 'ada', display_name: 'Ada', url: 'https://m.example/@ada' })).toEqual({
      id: '1',
      username: 'ada',
      displayName: 'Ada',
      url: 'https://m.example/@ada',
    });
    expect(parseAccount({ id: 1 })).toBeNull();
    expect(parseStatus({ id: '5', uri: 'https://m.example/users/ada/statuses/5', created_at: 'nope' })).toMatchObject({
      id: '5',
      url: 'https://m.example/users/ada/statuses/5',
      createdAt: null,
    });
    expect(parseStatuses({ not: 'a list' })).toBeNull();
    expect(parseStatuses([{ id: '1' }, { nope: true }])).toHaveLength(1);
    expect(parseMedia({ id: '3', url: null })).toEqual({ id: '3', url: null });
  });
});
