import fc from 'fast-check';
import type { MastodonStatus } from './mastodon-answers';
import { comparable, findPart, mayHavePublished, plainText, reachedBack } from './mastodon-lookup';

const at = (iso: string) => new Date(iso);
const status = (over: Partial<MastodonStatus> = {}): MastodonStatus => ({
  id: '100',
  url: 'https://mastodon.example/@ada/100',
  inReplyToId: null,
  createdAt: at('2026-12-01T10:00:05Z'),
  content: '<p>Hello</p>',
  spoilerText: '',
  ...over,
});
const part = { text: 'Hello', spoilerText: '', inReplyToId: null, notBefore: at('2026-12-01T09:55:00Z') };

describe('plainText', () => {
  it('turns paragraphs and line breaks into line breaks and drops tags, keeping whole links', () => {
    const html =
      '<p>New release<br />today &amp; tomorrow</p><p><a href="https://example.com/notes/2026/12/release-notes" rel="nofollow noopener" target="_blank"><span class="invisible">https://</span><span class="ellipsis">example.com/notes/2026/12/rele</span><span class="invisible">ase-notes</span></a></p>';
    expect(plainText(html)).toBe('New release\ntoday & tomorrow\n\nhttps://example.com/notes/2026/12/release-notes');
  });

  it('decodes named and numeric entities, and leaves unknown ones', () => {
    expect(plainText('&lt;b&gt; &quot;q&quot; &#39;s&#39; &#x1F600; &bogus;')).toBe('<b> "q" \'s\' \u{1F600} &bogus;');
  });
});

describe('comparable', () => {
  it('folds whitespace and shows a remote mention as its local part, as an instance renders it', () => {
    expect(comparable('  Hello\n\n@ada@other.example   and @bob ')).toBe('Hello @ada and @bob');
  });
});

describe('findPart', () => {
  it('finds the status with the text, the content warning and the reply target of the part', () => {
    const found = findPart(
      [
        status({ id: '3', content: '<p>Hello</p>', inReplyToId: '1' }),
        status({ id: '2', content: '<p>Hello</p>', spoilerText: 'CW' }),
        status({ id: '1', content: '<p>Hello</p>' }),
      ],
      part,
    );
    expect(found?.id).toBe('1');
    expect(findPart([status({ id: '3', inReplyToId: '1' })], { ...part, inReplyToId: '1' })?.id).toBe('3');
    expect(findPart([status({ spoilerText: 'CW' })], { ...part, spoilerText: 'CW' })?.id).toBe('100');
  });

  it('does not take a status older than the job, one with other text, or one replying elsewhere', () => {
    expect(findPart([status({ createdAt: at('2026-12-01T09:00:00Z') })], part)).toBeNull();
    expect(findPart([status({ content: '<p>Hello there</p>' })], part)).toBeNull();
    expect(findPart([status({ inReplyToId: '7' })], part)).toBeNull();
  });

  it('finds any text an instance renders back, whatever its lines, links and entities', () => {
    const line = fc.stringMatching(/^[A-Za-z0-9 ,.!?&<>"'#]{1,40}$/);
    fc.assert(
      fc.property(fc.array(line, { minLength: 1, maxLength: 4 }), (lines) => {
        const text = `${lines.join('\n')}\n\nhttps://example.com/a/very/long/path/that/is/shortened`;
        const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
        const html = `<p>${lines.map(esc).join('<br />')}</p><p><a href="x"><span class="invisible">https://</span><span class="ellipsis">example.com/a/very/long/pa</span><span class="invisible">th/that/is/shortened</span></a></p>`;
        expect(findPart([status({ content: html })], { ...part, text })?.id).toBe('100');
      }),
    );
  });
});

describe('reachedBack', () => {
  it('stops at a short page or at a page that reaches past the job', () => {
    const notBefore = at('2026-12-01T09:55:00Z');
    expect(reachedBack([status()], 40, notBefore)).toBe(true);
    const full = Array.from({ length: 40 }, (_, i) => status({ id: String(1000 - i), createdAt: at('2026-12-01T10:00:00Z') }));
    expect(reachedBack(full, 40, notBefore)).toBe(false);
    full[39] = status({ createdAt: at('2026-12-01T09:00:00Z') });
    expect(reachedBack(full, 40, notBefore)).toBe(true);
  });
});

describe('mayHavePublished', () => {
  it('looks on every retry, never on a first attempt', () => {
    expect(mayHavePublished({ attemptNumber: 1 })).toBe(false);
    expect(mayHavePublished({ attemptNumber: 2 })).toBe(true);
  });
});
