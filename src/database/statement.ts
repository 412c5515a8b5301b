/**
 * One SQL statement written by several modules, each in its own words (the intake: the post's
 * INSERT is the posts module's, its jobs' INSERTs the queue's, its audit entry the audit
 * module's; one statement, so one round trip and one commit). Each module hands over a typed
 * piece, its SQL text with its values in place, and `compose` numbers the parameters ($1, $2, …)
 * once, for the whole statement. No module counts another's parameters: the post's statement
 * used to be numbered by hand from an offset (`POST_PARAMS = 14`, plus the jobs' count for the
 * audit entry), so one parameter more in any of the three pieces shifted the others.
 *
 * - `param(value)`: a value sent as a parameter. The same Param written twice is one `$n` (the
 *   workspace id in the post's INSERT and in the idempotency key's UPDATE).
 * - sql`…`: a piece. Only Params, pieces and CTEs can be written into it, never a bare string
 *   or number: a value cannot reach the text by mistake.
 * - `cte(name, body)`: a named, data-modifying or reading CTE another piece refers to by the
 *   object (sql`SELECT count(*) FROM ${jobs.rows}`), not by a name typed twice.
 * - `raw(text)`: SQL text computed from code (a guard built from a transition table), never a
 *   value.
 *
 * The text of a composition depends only on its shape, never on its values, so a statement
 * composed on every request can still be a named prepared statement (Sql.prepared).
 */

/** A value sent as a parameter of the statement. */
export class Param<T = unknown> {
  constructor(readonly value: T) {}
}

/** A CTE: its name, and the piece it is defined as. Written into a piece, it stands for its name. */
export class Cte<N extends string = string> {
  constructor(
    readonly name: N,
    readonly body: SqlPiece,
  ) {
    if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a CTE name: ${JSON.stringify(name)}`);
  }
}

/** What may be written into a piece. */
export type SqlPart = Param | SqlPiece | Cte;

/** SQL text with its parameters in place, numbered only when the whole statement is composed. */
export class SqlPiece {
  constructor(
    readonly strings: readonly string[],
    readonly parts: readonly SqlPart[],
  ) {
    if (strings.length !== parts.length + 1) throw new Error('a piece has one more text than parts');
  }
}

export const param = <T>(value: T): Param<T> => new Param(value);

export function sql(strings: TemplateStringsArray, ...parts: SqlPart[]): SqlPiece {
  return new SqlPiece([...strings], parts);
}

/** SQL text computed from code, never from a value. */
export const raw = (text: string): SqlPiece => new SqlPiece([text], []);

export const cte = <N extends string>(name: N, body: SqlPiece): Cte<N> => new Cte(name, body);

/** `pieces`, `separator` between them. */
export function join(pieces: readonly SqlPiece[], separator: string): SqlPiece {
  if (pieces.length === 0) return raw('');
  return new SqlPiece(['', ...pieces.slice(1).map(() => separator), ''], pieces);
}

/** `WITH a AS (…), b AS (…) main`. */
export function withCtes(ctes: readonly Cte[], main: SqlPiece): SqlPiece {
  const names = new Set<string>();
  for (const c of ctes) {
    if (names.has(c.name)) throw new Error(`two CTEs named ${c.name} in one statement`);
    names.add(c.name);
  }
  const defined = ctes.map((c) => sql`${c} AS (${c.body})`);
  return sql`WITH ${join(defined, ', ')} ${main}`;
}

/** A statement ready to send: its text and its values, `$n` being `values[n - 1]`. */
export interface Statement {
  text: string;
  values: unknown[];
}

/** Numbers the parameters of `piece` in the order they first appear, each Param once. */
export function compose(piece: SqlPiece): Statement {
  const numbers = new Map<Param, number>();
  const values: unknown[] = [];
  const write = (p: SqlPiece): string => {
    let text = p.strings[0];
    p.parts.forEach((part, i) => {
      if (part instanceof Param) {
        let n = numbers.get(part);
        if (n === undefined) {
          values.push(part.value);
          n = values.length;
          numbers.set(part, n);
        }
        text += `$${n}`;
      } else if (part instanceof Cte) {
        text += part.name;
      } else if (part instanceof SqlPiece) {
        text += write(part);
      } else {
        throw new Error(`not a part of a SQL piece: ${typeof part}`);
      }
      text += p.strings[i + 1];
    });
    return text;
  };
  return { text: write(piece), values };
}

/**
 * A read one module owns, carried by another module's statement so that both cost one round trip
 * (the API key guard: the key, which is workspaces', and the client's count of wrong keys, which
 * is the login throttle's; the intake: the target accounts and the workspace's approval setting).
 * The owner writes `piece`, a scalar subquery on its own tables; the carrier writes it into its
 * own SELECT list and hands the value it read back through `take`. The carrier knows neither the
 * owner's tables nor what the value means; the owner never learns the carrier's SQL.
 */
export interface EmbeddedRead {
  /**
   * Names the piece in the carrying statement's prepared name: a piece's text depends only on its
   * name (and the number of its parameters never changes the text), so carrier + name is one text.
   */
  readonly name: string;
  readonly piece: SqlPiece;
  /** The value of `piece` as the carrying statement read it (null when the statement read no row for it). */
  take(value: unknown): void;
}
