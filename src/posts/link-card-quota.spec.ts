import { decideLinkCard, LINK_CARD_WINDOW_MS, LINK_CARDS_PER_WINDOW, quotaKey, tooManyLinkCards } from './link-card-quota';

describe('link cards per person', () => {
  const opened = new Date('2026-12-05T10:00:00Z');
  const at = (ms: number) => new Date(opened.getTime() + ms);

  it('allows 20 fetches in a window and refuses the 21st', () => {
    expect(LINK_CARDS_PER_WINDOW).toBe(20);
    expect(LINK_CARD_WINDOW_MS).toBe(60_000);
    expect(decideLinkCard({ openedAt: opened, fetches: 20 }, at(59_000))).toEqual({ allowed: true });
    expect(decideLinkCard({ openedAt: opened, fetches: 21 }, at(1_000))).toEqual({ allowed: false, retryAfterS: 59 });
  });

  it('says how many whole seconds are left in the window, at least 1 and at most 60', () => {
    expect(decideLinkCard({ openedAt: opened, fetches: 21 }, at(0))).toEqual({ allowed: false, retryAfterS: 60 });
    expect(decideLinkCard({ openedAt: opened, fetches: 30 }, at(59_001))).toEqual({ allowed: false, retryAfterS: 1 });
    // A clock a little behind the one that opened the window (another host) still says at most 60.
    expect(decideLinkCard({ openedAt: opened, fetches: 21 }, at(-5_000))).toEqual({ allowed: false, retryAfterS: 60 });
    // The window ended between the count and the answer: wait a second, not zero or less.
    expect(decideLinkCard({ openedAt: opened, fetches: 21 }, at(61_000))).toEqual({ allowed: false, retryAfterS: 1 });
  });

  it('counts per person or per API key, and says so', () => {
    expect(quotaKey({ kind: 'person', id: '0b6f3f4e-2b7c-4a59-9d4e-1f0e0c4b2a11' })).toBe('person:0b6f3f4e-2b7c-4a59-9d4e-1f0e0c4b2a11');
    expect(quotaKey({ kind: 'key', id: '0b6f3f4e-2b7c-4a59-9d4e-1f0e0c4b2a11' })).toBe('key:0b6f3f4e-2b7c-4a59-9d4e-1f0e0c4b2a11');
    expect(tooManyLinkCards(42)).toBe('too many link cards: at most 20 a minute per person; wait 42 s and fetch it again');
  });
});
