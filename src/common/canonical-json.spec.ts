import { canonicalHash, canonicalJson } from './canonical-json';

describe('canonicalJson', () => {
  it('is the same for objects equal as parsed JSON, whatever the key order or spacing', () => {
    const a = JSON.parse('{"text":"hi","targets":[{"accountId":"x","text":"t"}],"metadata":{"b":1,"a":[1,2]}}');
    const b = JSON.parse('{ "metadata": {"a": [1, 2], "b": 1}, "targets": [{"text": "t", "accountId": "x"}], "text": "hi" }');
    expect(canonicalJson(a)).toBe(canonicalJson(b));
    expect(canonicalHash(a).equals(canonicalHash(b))).toBe(true);
  });

  it('differs when a value, the array order or a type differs', () => {
    expect(canonicalJson({ a: [1, 2] })).not.toBe(canonicalJson({ a: [2, 1] }));
    expect(canonicalJson({ a: 1 })).not.toBe(canonicalJson({ a: '1' }));
    expect(canonicalJson({ a: null })).not.toBe(canonicalJson({}));
  });
});
