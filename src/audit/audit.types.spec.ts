import { diffFields } from './audit.types';

describe('diffFields', () => {
  it('keeps only what changed, before and after', () => {
    expect(
      diffFields({ name: 'A', status: 'active', config: { url: 'x' } }, { name: 'B', status: 'active', config: { url: 'x' } }),
    ).toEqual({
      before: { name: 'A' },
      after: { name: 'B' },
    });
  });

  it('never shows a secret field, only that it changed', () => {
    const d = diffFields({ credentials: 'sealed-old' }, { credentials: 'sealed-new' }, ['credentials']);
    expect(d).toEqual({ before: { credentials: '(secret)' }, after: { credentials: '(changed)' } });
    expect(JSON.stringify(d)).not.toContain('sealed');
  });

  it('treats absent and null alike', () => {
    expect(diffFields({ title: null }, {})).toEqual({ before: {}, after: {} });
  });
});
