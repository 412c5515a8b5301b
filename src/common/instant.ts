import { invalidInput } from './errors';

/**
 * An ISO 8601 instant whose shape a DTO already checked (ISO_WITH_OFFSET), as a Date. Catches
 * what the pattern cannot: impossible dates such as February 30, which `new Date` would roll
 * over into March. Same rule as POST /v1/posts' scheduledAt.
 */
export function parseInstant(value: string, field: string): Date {
  const date = new Date(value);
  const [y, mo, d] = value.slice(0, 10).split('-').map(Number);
  if (Number.isNaN(date.getTime()) || mo < 1 || mo > 12 || d < 1 || d > new Date(Date.UTC(y, mo, 0)).getUTCDate()) {
    throw invalidInput(`${field} is not a real date-time: ${value}`);
  }
  return date;
}
