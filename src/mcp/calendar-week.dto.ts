import { IsOptional, IsString, MaxLength, ValidateBy, ValidationOptions } from 'class-validator';
import { isTimeZone, parseDate } from '../common/zoned-time';

/** A real day, YYYY-MM-DD (zoned-time's parseDate: 2026-02-30 is not one). */
const IsDay = (options?: ValidationOptions) =>
  ValidateBy(
    {
      name: 'isDay',
      validator: {
        validate: (value: unknown) => typeof value === 'string' && parseDate(value) !== null,
        defaultMessage: () => 'date must be a day as YYYY-MM-DD, e.g. 2026-12-07',
      },
    },
    options,
  );

/** An IANA time zone, as the page's calendar takes it (zoned-time's isTimeZone). */
const IsZone = (options?: ValidationOptions) =>
  ValidateBy(
    {
      name: 'isZone',
      validator: {
        validate: (value: unknown) => isTimeZone(value),
        defaultMessage: () => 'timezone must be an IANA time zone such as Europe/Berlin or UTC',
      },
    },
    options,
  );

/** get_calendar's input: the page's calendar takes the same two things (`date`, `zone`) from its URL. */
export class CalendarWeekInput {
  @IsOptional()
  @IsDay()
  @IsString()
  date?: string;

  @IsOptional()
  @IsZone()
  @MaxLength(100)
  @IsString()
  timezone?: string;
}
