import { DomainError } from '../common/errors';
import type { JobPayload } from '../connectors/connector.interface';
import { applyEdit } from './payload-edit';

const payload = (over: Partial<JobPayload> = {}): JobPayload => ({
  text: 'Hello',
  title: 'Title',
  link: null,
  media: [],
  metadata: { a: 1, b: 2 },
  scheduledAt: '2026-12-01T09:00:00.000Z',
  ...over,
});

describe('applyEdit', () => {
  it('changes only the given fields and records exactly what changed', () => {
    const { next, before, after } = applyEdit(payload(), { text: 'Hi', link: 'https://example.com' });
    expect(next).toEqual(payload({ text: 'Hi', link: 'https://example.com' }));
    expect(before).toEqual({ text: 'Hello', link: null });
    expect(after).toEqual({ text: 'Hi', link: 'https://example.com' });
  });

  it('clears title, link and metadata with null', () => {
    const { next, after } = applyEdit(payload(), { title: null, metadata: null });
    expect(next).toMatchObject({ title: null, metadata: null });
    expect(after).toEqual({ title: null, metadata: null });
  });

  it('does not count the same value, or reordered metadata keys, as an edit', () => {
    expect(applyEdit(payload(), { text: 'Hello', metadata: { b: 2, a: 1 } }).after).toEqual({});
  });

  it('never touches scheduledAt', () => {
    expect(applyEdit(payload(), { text: 'x' }).next.scheduledAt).toBe('2026-12-01T09:00:00.000Z');
  });

  it.each([
    [{}, /nothing to edit/],
    [{ text: null }, /text cannot be null/],
    [{ media: null }, /media cannot be null: use \[\]/],
  ])('refuses %j', (edit, message) => {
    expect(() => applyEdit(payload(), edit)).toThrow(DomainError);
    expect(() => applyEdit(payload(), edit)).toThrow(message);
  });
});

describe('applyEdit on a thread', () => {
  const thread = () =>
    payload({
      thread: [
        { text: 'Two', link: null, media: [] },
        { text: 'Three', link: 'https://example.com/3', media: ['m-1'] },
        { text: 'Four', link: null, media: [] },
      ],
    });
  const published = (n: number) =>
    Array.from({ length: n }, (_, index) => ({ index, uri: `at://did:plc:x/p/${index}`, cid: `c${index}`, url: null }));

  it('edits parts one by one, keeping the fields and parts not given, and records the thread before and after', () => {
    const { next, before, after } = applyEdit(thread(), { thread: [{ index: 1, text: 'Three, fixed', link: null }] }, published(2));
    expect(next.thread).toEqual([
      { text: 'Two', link: null, media: [] },
      { text: 'Three, fixed', link: null, media: ['m-1'] },
      { text: 'Four', link: null, media: [] },
    ]);
    expect(before).toEqual({ thread: thread().thread });
    expect(after).toEqual({ thread: next.thread });
  });

  it('refuses to change a published part (409 naming it and its URI), but takes it given unchanged', () => {
    const err = (() => {
      try {
        applyEdit(thread(), { thread: [{ index: 0, text: 'Two, again' }] }, published(2));
      } catch (e) {
        return e as DomainError;
      }
      throw new Error('expected a refusal');
    })();
    expect(err.message).toBe('part 2 (thread.0) is already published (at://did:plc:x/p/1) and cannot be changed; edit the parts after it');
    expect(err.code).toBe('conflict');
    expect(
      applyEdit(
        thread(),
        {
          thread: [
            { index: 0, text: 'Two' },
            { index: 2, text: 'Five' },
          ],
        },
        published(2),
      ).after,
    ).toEqual({
      thread: [
        { text: 'Two', link: null, media: [] },
        { text: 'Three', link: 'https://example.com/3', media: ['m-1'] },
        { text: 'Five', link: null, media: [] },
      ],
    });
  });

  it("refuses to change part 1's fields once part 1 is published, but not the metadata", () => {
    expect(() => applyEdit(thread(), { text: 'One, again' }, published(1))).toThrow(
      /^part 1 \(text, title, link, media\) is already published/,
    );
    expect(() => applyEdit(thread(), { media: ['m-2'] }, published(1))).toThrow(/already published/);
    expect(applyEdit(thread(), { metadata: { c: 3 } }, published(1)).after).toEqual({ metadata: { c: 3 } });
    expect(applyEdit(thread(), { text: 'One, again' }, []).after).toEqual({ text: 'One, again' });
  });

  it.each([
    [{ thread: [{ index: 3, text: 'x' }] }, /thread\.0\.index: there is no part 3 \(the thread's further parts are 0 to 2\)/],
    [
      {
        thread: [
          { index: 1, text: 'x' },
          { index: 1, link: null },
        ],
      },
      /thread\.1\.index: part 1 is edited twice/,
    ],
    [{ thread: [{ index: 0, text: null }] }, /thread\.0\.text cannot be null/],
    [{ thread: [{ index: 0, media: null }] }, /thread\.0\.media cannot be null/],
    [{ thread: null }, /thread cannot be null/],
  ])('refuses %j with a 400', (edit, message) => {
    expect(() => applyEdit(thread(), edit as never)).toThrow(message);
    try {
      applyEdit(thread(), edit);
    } catch (e) {
      expect((e as DomainError).code).toBe('invalid_input');
    }
  });

  it('edits the one further part of a thread of two, and names the only index there is when another is given', () => {
    const two = payload({ thread: [{ text: 'Two', link: null, media: [] }] });
    const { next, after } = applyEdit(two, { thread: [{ index: 0, text: 'Two, fixed' }] }, published(1));
    expect(next.thread).toEqual([{ text: 'Two, fixed', link: null, media: [] }]);
    expect(after).toEqual({ thread: next.thread });
    expect(() => applyEdit(two, { thread: [{ index: 1, text: 'x' }] })).toThrow(
      'thread.0.index: there is no part 1 (the thread has one further part, 0)',
    );
    expect(() => applyEdit(two, { thread: [{ index: 0, text: 'x' }] }, published(2))).toThrow(/part 2 \(thread\.0\) is already published/);
  });

  it('refuses a thread edit of a single post', () => {
    expect(() => applyEdit(payload(), { thread: [{ index: 0, text: 'x' }] })).toThrow(/this job publishes a single post/);
  });
});
