import {
  counterText,
  imageLimit,
  instantsOf,
  MAX_FORM_IMAGES,
  moveMedia,
  moveParts,
  parseAction,
  previewFor,
  readComposeForm,
  threadOf,
  targetOf,
  withAccountNames,
} from './compose-form';

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
    const bsky = previewFor({ id: A, name: 'Sky', provider: 'bluesky', providerLabel: 'Bluesky', config: {} }, values, []);
    expect(bsky).toMatchObject({ used: 301, limit: 300, over: 1, counter: '301 / 300 characters: 1 too many' });
    expect(bsky.problems).toEqual(['text is 301 graphemes, the limit is 300']);
    const hook = previewFor({ id: B, name: 'Blog', provider: 'webhook', providerLabel: 'Blog webhook', config: {} }, values, []);
    expect(hook).toMatchObject({ used: 289 + 12 * 5, limit: 10_000, over: 0, problems: [] });
    expect(counterText(300, 300)).toBe('300 / 300 characters');
  });

  it('shows the link where Bluesky puts it: a card without images, in the text with them', () => {
    const values = readComposeForm({ text: 'Read this', link: 'https://example.com/a' }, 'UTC').values;
    const sky = { id: A, name: 'Sky', provider: 'bluesky' as const, providerLabel: 'Bluesky', config: {} };
    expect(previewFor(sky, values, [])).toMatchObject({ card: true, text: 'Read this' });
    const image = { id: C, alt: 'x', mimeType: 'image/png', width: 1, height: 1 };
    expect(previewFor(sky, values, [image])).toMatchObject({ card: false, text: 'Read this\n\nhttps://example.com/a' });
    expect(previewFor(sky, values, [{ ...image, alt: '' }]).problems[0]).toMatch(/has no alt text/);
  });

  it('counts a Mastodon account as its instance does: its own limit, links as 23, the link and the content warning included', () => {
    const toot = {
      id: C,
      name: 'Toot',
      provider: 'mastodon' as const,
      providerLabel: 'Mastodon',
      config: {
        instanceUrl: 'https://social.example',
        limits: { maxCharacters: 100, charactersReservedPerUrl: 23, maxMediaAttachments: 4 },
      },
    };
    const long = `https://example.com/${'x'.repeat(200)}`;
    const values = readComposeForm(
      { text: `${'a'.repeat(40)} ${long}`, link: 'https://example.com/more', spoilerText: ' Spoilers ', visibility: 'unlisted' },
      'UTC',
    ).values;
    const preview = previewFor(toot, values, []);
    // 40 + 1 + 23 for the text, 2 + 23 for the link appended, 8 for the content warning.
    expect(preview).toMatchObject({ used: 97, limit: 100, over: 0, urlLength: 23, spoilerText: 'Spoilers', visibility: 'unlisted' });
    expect(preview.text).toBe(`${'a'.repeat(40)} ${long}\n\nhttps://example.com/more`);
    const over = previewFor(toot, { ...values, spoilerText: 'Spoilers ahead!!' }, []);
    expect(over).toMatchObject({ used: 105, over: 5, counter: '105 / 100 characters: 5 too many' });
    expect(over.problems[0]).toMatch(
      /^text is 105 characters as the instance counts them .*the limit is 100 \(social\.example's own limit\)/,
    );
    // Other platforms take neither: their targets stay as they were.
    expect(targetOf({ id: A, provider: 'bluesky' }, values)).toEqual({ accountId: A });
    expect(targetOf(toot, values)).toEqual({ accountId: C, visibility: 'unlisted', spoilerText: 'Spoilers' });
    expect(readComposeForm({ visibility: 'friends' }, 'UTC').values.visibility).toBe('');
  });

  it("names accounts in the API's messages", () => {
    expect(
      withAccountNames('targets.0 (bluesky): text is 301 graphemes, the limit is 300; targets.1 (webhook): x', [
        { label: 'targets.0', name: 'Herald on Bluesky' },
        { label: 'targets.1', name: 'Blog' },
      ]),
    ).toBe('Herald on Bluesky (bluesky): text is 301 graphemes, the limit is 300; Blog (webhook): x');
  });

  it("offers as many images as the chosen accounts' platforms all take: LinkedIn alone 20, with Bluesky or a webhook 4", () => {
    expect(imageLimit(['linkedin'])).toBe(20);
    expect(imageLimit(['linkedin', 'linkedin'])).toBe(20);
    expect(imageLimit(['linkedin', 'bluesky'])).toBe(4);
    expect(imageLimit(['webhook', 'linkedin'])).toBe(4);
    expect(imageLimit(['bluesky'])).toBe(4);
    // No account chosen yet: the smallest limit there is.
    expect(imageLimit([])).toBe(4);
    // The form keeps up to the most any platform takes (a LinkedIn post's 20), and no more.
    const ids = Array.from({ length: 25 }, (_, i) => `33333333-3333-4333-8333-${String(i).padStart(12, '0')}`);
    expect(MAX_FORM_IMAGES).toBe(20);
    expect(readComposeForm({ media: ids }, 'UTC').values.media).toEqual(ids.slice(0, 20));
  });

  it("reads a thread's parts in the form's order, keeps what each part had, and drops what is past the count or not an id", () => {
    const { values, action } = readComposeForm(
      {
        text: 'Part one',
        partCount: '2',
        part_text_0: 'Two ',
        part_link_0: ' https://example.com/two ',
        part_media_0: [C, 'not-an-id'],
        part_text_1: 'Three',
        part_text_2: 'past the count',
        action: 'part-down:0',
      },
      'UTC',
    );
    expect(values.parts).toEqual([
      { text: 'Two ', link: 'https://example.com/two', media: [C] },
      { text: 'Three', link: '', media: [] },
    ]);
    expect(action).toEqual({ kind: 'part-down', index: 0 });
    expect(readComposeForm({ partCount: '999' }, 'UTC').values.parts).toHaveLength(25);
    expect(readComposeForm({ partCount: '-3' }, 'UTC').values.parts).toEqual([]);
    expect(parseAction('part-sideways:1')).toEqual({ kind: 'none' });
  });

  it('adds parts one at a time (a single post becomes a thread of two), up to 25, moves and removes them', () => {
    const p = (text: string) => ({ text, link: '', media: [] });
    const started = moveParts([], { kind: 'add-part' });
    expect(started).toEqual([p('')]);
    expect(threadOf(started)).toEqual([{ text: '' }]);
    expect(moveParts([p('a')], { kind: 'add-part' })).toEqual([p('a'), p('')]);
    expect(moveParts([p('a'), p('b')], { kind: 'add-part' })).toEqual([p('a'), p('b'), p('')]);
    const full = Array.from({ length: 25 }, (_, i) => p(String(i)));
    expect(moveParts(full, { kind: 'add-part' })).toHaveLength(25);
    expect(moveParts([p('a'), p('b'), p('c')], { kind: 'part-up', index: 2 })).toEqual([p('a'), p('c'), p('b')]);
    expect(moveParts([p('a'), p('b'), p('c')], { kind: 'part-up', index: 0 })).toEqual([p('a'), p('b'), p('c')]);
    expect(moveParts([p('a'), p('b'), p('c')], { kind: 'part-down', index: 0 })).toEqual([p('b'), p('a'), p('c')]);
    expect(moveParts([p('a'), p('b'), p('c')], { kind: 'part-remove', index: 1 })).toEqual([p('a'), p('c')]);
    expect(moveParts([p('a')], { kind: 'part-remove', index: 7 })).toEqual([p('a')]);
    // Removing the only further part makes the post a single post again.
    const single = moveParts([p('a')], { kind: 'part-remove', index: 0 });
    expect(single).toEqual([]);
    expect(threadOf(single)).toBeNull();
    expect(threadOf([])).toBeNull();
    expect(threadOf([{ text: 'x', link: 'https://e.x/', media: [C] }, p('y')])).toEqual([
      { text: 'x', link: 'https://e.x/', media: [C] },
      { text: 'y' },
    ]);
  });

  it('counts and checks each part as the first, and shows LinkedIn refusing the thread as a whole', () => {
    const values = readComposeForm(
      {
        text: 'One',
        partCount: '2',
        part_text_0: `${'a'.repeat(289)}${family.repeat(12)}`,
        part_text_1: 'Three',
        part_link_1: 'https://example.com/3',
      },
      'UTC',
    ).values;
    const sky = previewFor({ id: A, name: 'Sky', provider: 'bluesky', providerLabel: 'Bluesky', config: {} }, values, []);
    expect(sky.threadRefused).toBeNull();
    expect(sky.parts).toEqual([
      {
        number: 2,
        used: 301,
        limit: 300,
        over: 1,
        counter: '301 / 300 characters: 1 too many',
        text: `${'a'.repeat(289)}${family.repeat(12)}`,
        problems: ['text is 301 graphemes, the limit is 300'],
      },
      { number: 3, used: 5, limit: 300, over: 0, counter: '5 / 300 characters', text: 'Three', problems: [] },
    ]);
    const linkedIn = previewFor({ id: B, name: 'Company page', provider: 'linkedin', providerLabel: 'LinkedIn', config: {} }, values, []);
    expect(linkedIn.threadRefused).toMatch(/^thread: LinkedIn has no threads/);
    expect(linkedIn.parts.map((part) => part.problems)).toEqual([[], []]);
    expect(withAccountNames('targets.0 (bluesky): thread.0: text is 301 graphemes; thread.10.text should not be empty', [])).toBe(
      'targets.0 (bluesky): part 2: text is 301 graphemes; part 12.text should not be empty',
    );
  });
});
