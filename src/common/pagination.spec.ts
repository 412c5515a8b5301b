import { DomainError } from './errors';
import { decodeCursor, encodeCursor, toPage } from './pagination';

const ID = '0b7c3a52-9a51-4e8e-9d8f-2f6f0f4c1a11';

describe('list cursors', () => {
  it('carry the microsecond time and id they were made from', () => {
    expect(decodeCursor(encodeCursor({ micros: '1772366400123456', id: ID }))).toEqual({ micros: '1772366400123456', id: ID });
    expect(decodeCursor(undefined)).toBeNull();
  });

  it('are made from the last row of a full page only', () => {
    const rows = [1, 2, 3].map((i) => ({ id: ID.replace(/1$/, String(i)), cursorMicros: `177236640012345${i}` }));
    const page = toPage(rows, 2, (r) => r.id);
    expect(page.data).toHaveLength(2);
    expect(decodeCursor(page.nextCursor!)).toEqual({ micros: '1772366400123452', id: rows[1].id });
    expect(toPage(rows, 3, (r) => r.id).nextCursor).toBeNull();
  });

  it('still accept a cursor with a millisecond ISO time, continuing where it was', () => {
    const legacy = Buffer.from(`2026-03-01T12:00:00.123Z|${ID}`, 'utf8').toString('base64url');
    expect(decodeCursor(legacy)).toEqual({ micros: String(Date.parse('2026-03-01T12:00:00.123Z') * 1000), id: ID });
  });

  it.each([
    'garbage',
    Buffer.from(`12x|${ID}`).toString('base64url'),
    Buffer.from('1772366400123456|not-an-id').toString('base64url'),
    Buffer.from(`tomorrow|${ID}`).toString('base64url'),
  ])('refuse %s with 400', (cursor) => {
    expect(() => decodeCursor(cursor)).toThrow(DomainError);
  });
});
