import { compareFigures, Figure } from '../bench/baseline';

// The bench's "no regression" line (bench/baseline.ts): a figure is worse only beyond the noise,
// in the direction that is worse for it.
describe('bench baseline comparison', () => {
  const base: Figure[] = [
    { key: 'rate', what: 'deliveries/s', value: 1000, better: 'higher' },
    { key: 'cpu', what: 'µs per delivery', value: 100, better: 'lower' },
    { key: 'gone', what: 'a figure the new run does not print', value: 1, better: 'lower' },
  ];

  it('calls a rate that fell beyond the noise worse, and one within it the same', () => {
    const [fell] = compareFigures([{ key: 'rate', what: 'deliveries/s', value: 700, better: 'higher' }], base, 0.25);
    expect(fell).toMatchObject({ before: 1000, after: 700, regressed: true, improved: false });
    const [within] = compareFigures([{ key: 'rate', what: 'deliveries/s', value: 800, better: 'higher' }], base, 0.25);
    expect(within).toMatchObject({ regressed: false, improved: false });
  });

  it('calls a cost that rose beyond the noise worse, and one that fell better', () => {
    const cmp = compareFigures(
      [
        { key: 'cpu', what: 'µs per delivery', value: 130, better: 'lower' },
        { key: 'rate', what: 'deliveries/s', value: 1300, better: 'higher' },
      ],
      base,
      0.25,
    );
    expect(cmp.map((c) => [c.key, c.regressed, c.improved])).toEqual([
      ['cpu', true, false],
      ['rate', false, true],
    ]);
    const [cheaper] = compareFigures([{ key: 'cpu', what: 'µs per delivery', value: 60, better: 'lower' }], base, 0.25);
    expect(cheaper).toMatchObject({ regressed: false, improved: true, ratio: 0.6 });
  });

  it('leaves out figures only one run has', () => {
    expect(compareFigures([{ key: 'new', what: 'idle CPU', value: 1, better: 'lower' }], base, 0.25)).toEqual([]);
  });
});
