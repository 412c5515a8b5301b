import { compose, cte, join, param, raw, sql, SqlPart, withCtes } from './statement';

describe('composing one statement from pieces', () => {
  it('numbers parameters in the order they first appear, across nested pieces', () => {
    const inner = sql`b = ${param(2)} AND c = ${param(3)}`;
    expect(compose(sql`SELECT 1 WHERE a = ${param(1)} AND ${inner} AND d = ${param(4)}`)).toEqual({
      text: 'SELECT 1 WHERE a = $1 AND b = $2 AND c = $3 AND d = $4',
      values: [1, 2, 3, 4],
    });
  });

  it('sends a Param written twice once, under one number', () => {
    const ws = param('w');
    const key = param(null);
    expect(compose(sql`x = ${ws} AND ${key}::text IS NOT NULL AND y = ${ws} AND k = ${key} AND z = ${param('w')}`)).toEqual({
      text: 'x = $1 AND $2::text IS NOT NULL AND y = $1 AND k = $2 AND z = $3',
      values: ['w', null, 'w'],
    });
  });

  it("numbers a piece's parameters after those of the pieces before it, whoever wrote them", () => {
    const jobs = cte('j', sql`INSERT INTO t SELECT * FROM unnest(${param([1, 2])}::int[]) RETURNING 1`);
    const audit = cte('audit', sql`INSERT INTO u VALUES (${param('a')})`);
    const post = cte('p', sql`INSERT INTO v VALUES (${param('p')}, ${param('q')})`);
    expect(compose(withCtes([post, jobs, audit], sql`SELECT (SELECT count(*) FROM ${jobs}) AS jobs`))).toEqual({
      text: 'WITH p AS (INSERT INTO v VALUES ($1, $2)), j AS (INSERT INTO t SELECT * FROM unnest($3::int[]) RETURNING 1), audit AS (INSERT INTO u VALUES ($4)) SELECT (SELECT count(*) FROM j) AS jobs',
      values: ['p', 'q', [1, 2], 'a'],
    });
  });

  it('gives the same text for the same shape, whatever the values (a prepared statement stays one)', () => {
    const of = (v: unknown[]) => compose(sql`SELECT ${param(v)}::int[], ${param(v.length)}`).text;
    expect(of([1])).toBe(of([1, 2, 3]));
  });

  it('joins pieces, and writes computed text as it is', () => {
    expect(compose(join([sql`a = ${param(1)}`, raw("b IN ('x')"), sql`c = ${param(2)}`], ' AND '))).toEqual({
      text: "a = $1 AND b IN ('x') AND c = $2",
      values: [1, 2],
    });
    expect(compose(join([], ', '))).toEqual({ text: '', values: [] });
  });

  it('refuses two CTEs of one name, a name that is not an identifier, and a bare value', () => {
    expect(() => withCtes([cte('a', sql`SELECT 1`), cte('a', sql`SELECT 2`)], sql`SELECT 3`)).toThrow('two CTEs named a');
    expect(() => cte('a; DROP TABLE x', sql`SELECT 1`)).toThrow('not a CTE name');
    // The types refuse it too; a caller that casts past them is refused when composing.
    expect(() => compose(sql`SELECT ${'1' as unknown as SqlPart}`)).toThrow('not a part of a SQL piece: string');
  });
});
