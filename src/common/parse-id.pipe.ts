import { Injectable, PipeTransform } from '@nestjs/common';
import { notFound } from './errors';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A path id that is not a UUID cannot exist: answer 404 the same way as an unknown id. */
@Injectable()
export class ParseIdPipe implements PipeTransform<string, string> {
  constructor(private readonly what: string) {}

  transform(value: string): string {
    if (!UUID.test(value)) throw notFound(this.what, value.slice(0, 64));
    return value.toLowerCase();
  }
}
