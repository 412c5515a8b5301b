import { counterText, instantsOf, moveMedia, parseAction, previewFor, readComposeForm, withAccountNames } from './compose-form';

const A = '11111111-1111-4111-8111-111111111111';
const B = '22222222-2222-4222-8222-222222222222';
const C = '33333333-3333-4333-8333-333333333333';
const family = '👨‍👩‍👧';

describe('the composer form', () => {
  it('reads the fields, keeps the text as typed, drops what is not an id and falls back to a zone', () => {
    const { values, action } = readComposeForm(
      {
        text: ' Hello\r\nworld ',
        title: ' T ',
        accounts: [A, 'nope', B.toUpperCase(), A],
        media: [C, 'x'],
        [`alt_${C}`]: ' a red square ',
        zone: 'Mars/Base',
        action: `up:${C}`,
      },
      'Asia/Kolkata',
    );
    expect(values).toMatchObject({
      text: ' Hello\nworld ',
      title: 'T',
      accounts: [A, B],
      media: [C],
      alts: { [C]: 'a red square' },
      zone: 'Asia/Kolkata',
    });
    expect(action).toEqual({ kind: 'up', mediaId: C });
    expect(parseAction('drop tables')).toEqual({ kind: 'none' });
  });

  it('moves and removes images', () => {
    expect(moveMedia([A, B, C], { kind: 'up', mediaId: C })).toEqual([A, C, B]);
    expect(moveMedia([A, B, C], { kind: 'up', mediaId: A })).toEqual([A, B, C]);
    expect(moveMedia([A, B, C], { kind: 'down', mediaId: A })).toEqual([B, A, C]);
    expect(moveMedia([A, B, C], { kind: 'remove', mediaId: B })).toEqual([A, C]);
  });

  it('turns the wall times in the chosen zone into instants, and says what is missing', () => {
    const base = readComposeForm({ zone: 'Asia/Kolkata', date: '2026-12-01', time: '09:00' }, 'UTC').values;
    expect(instantsOf(base, false)).toEqual({ ok: true, scheduledAt: '2026-12-01T03:30:00.000Z', publishBy: null });
    expect(instantsOf(base, true)).toEqual({ ok: true, scheduledAt: null, publishBy: null });
    expect(instantsOf({ ...base, deadlineDate: '2026-12-01', deadlineTime: '18:00' }, false)).toEqual({
      ok: true,
      scheduledAt: '2026-12-01T03:30:00.000Z',
      publishBy: '2026-12-01T12:30:00.000Z',
    });
    expect(instantsOf({ ...base, time: '' }, false)).toEqual({
      ok: false,
      problem: 'choose a date and a time to schedule it (or publish it now)',
    });
    expect(instantsOf({ ...base, deadlineDate: '2026-12-01' }, false)).toEqual({
      ok: false,
      problem: 'the deadline needs both a date and a time',
    });
  });

  it('counts as each platform counts: an emoji family is one grapheme on Bluesky, five characters elsewhere', () => {
    const values = readComposeForm({ text: `${'a'.repeat(289)}${family.repeat(12)}` }, 'UTC').values;
    const bsky = previewFor({ id: A, name: 'Sky', provider: 'bluesky', providerLabel: 'Bluesky' }, values, []);
    expect(bsky).toMatchObject({ used: 301, limit: 300, over: 1, counter: '301 / 300 characters: 1 too many' });
    expect(bsky.problems).toEqual(['text is 301 graphemes, the limit is 300']);
    const hook = previewFor({ id: B, name: 'Blog', provider: 'webhook', providerLabel: 'Blog webhook' }, values, []);
    expect(hook).toMatchObject({ used: 289 + 12 * 5, limit: 10_000, over: 0, problems: [] });
    expect(counterText(300, 300)).toBe('300 / 300 characters');
  });

  it('shows the link where Bluesky puts it: a card without images, in the text with them', () => {
    const values = readComposeForm({ text: 'Read this', link: 'https://example.com/a' }, 'UTC').values;
    const sky = { id: A, name: 'Sky', provider: 'bluesky' as const, providerLabel: 'Bluesky' };
    expect(previewFor(sky, values, [])).toMatchObject({ card: true, text: 'Read this' });
    const image = { id: C, alt: 'x', mimeType: 'image/png', width: 1, height: 1 };
    expect(previewFor(sky, values, [image])).toMatchObject({ card: false, text: 'Read this\n\nhttps://example.com/a' });
    expect(previewFor(sky, values, [{ ...image, alt: '' }]).problems[0]).toMatch(/has no alt text/);
  });

  it("names accounts in the API's messages", () => {
    expect(
      withAccountNames('targets.0 (bluesky): text is 301 graphemes, the limit is 300; targets.1 (webhook): x', [
        { label: 'targets.0', name: 'Herald on Bluesky' },
        { label: 'targets.1', name: 'Blog' },
      ]),
    ).toBe('Herald on Bluesky (bluesky): text is 301 graphemes, the limit is 300; Blog (webhook): x');
  });
});
