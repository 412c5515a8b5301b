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
