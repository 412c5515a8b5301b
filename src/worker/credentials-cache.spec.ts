import type { DeliveryAccount } from '../connectors/connector.interface';
import { CredentialsCache } from './credentials-cache';

const account = (id: string, password: string): DeliveryAccount => ({
  id,
  workspaceId: 'w',
  name: id,
  config: {},
  credentials: { password },
});

describe('CredentialsCache', () => {
  it('answers only with the claimed credentials version or a newer one: a changed account is read again', () => {
    const cache = new CredentialsCache();
    cache.set('a', 1, account('a', 'old'));
    expect(cache.get('a', 1)?.account.credentials).toEqual({ password: 'old' });
    expect(cache.get('a', 2)).toBeUndefined();
    cache.set('a', 2, account('a', 'new'));
    expect(cache.get('a', 2)?.account.credentials).toEqual({ password: 'new' });
    // A job claimed at version 1 gets the newer credentials a person saved meanwhile, and says so.
    expect(cache.get('a', 1)).toMatchObject({ version: 2, account: { credentials: { password: 'new' } } });
    expect(cache.size).toBe(1);
  });

  it('keeps credentials an attempt refreshed for the next jobs at the same version, never over newer ones', () => {
    const cache = new CredentialsCache();
    cache.set('a', 1, account('a', 'old'));
    cache.refreshed('a', 1, { password: 'refreshed' });
    expect(cache.get('a', 1)).toMatchObject({ version: 1, account: { id: 'a', credentials: { password: 'refreshed' } } });
    // The round stored them (version 2): a job claimed at 2 reads them again from the database.
    expect(cache.get('a', 2)).toBeUndefined();
    // A person's save (version 2) already read: a refresh of version 1 does not replace it.
    cache.set('a', 2, account('a', 'saved'));
    cache.refreshed('a', 1, { password: 'late refresh' });
    expect(cache.get('a', 1)?.account.credentials).toEqual({ password: 'saved' });
    // Nothing cached: nothing is added.
    cache.refreshed('b', 1, { password: 'x' });
    expect(cache.size).toBe(1);
  });

  it('drops a disabled or deleted account at once', () => {
    const cache = new CredentialsCache();
    cache.set('a', 1, account('a', 'x'));
    cache.forget('a');
    expect(cache.get('a', 1)).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('never holds more than its capacity, dropping the least recently used first', () => {
    const cache = new CredentialsCache(3);
    for (const id of ['a', 'b', 'c']) cache.set(id, 1, account(id, id));
    cache.get('a', 1); // a is now the most recently used
    cache.set('d', 1, account('d', 'd'));
    expect(cache.size).toBe(3);
    expect(cache.get('b', 1)).toBeUndefined();
    expect(['a', 'c', 'd'].map((id) => cache.get(id, 1)?.account.id)).toEqual(['a', 'c', 'd']);
    for (let i = 0; i < 1000; i++) cache.set(`x${i}`, 1, account(`x${i}`, ''));
    expect(cache.size).toBe(3);
  });
});
