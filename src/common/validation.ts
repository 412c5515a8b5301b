import { ArgumentMetadata, BadRequestException, ValidationError, ValidationPipe } from '@nestjs/common';

/** Flattens nested class-validator errors into "targets.0.accountId must be a UUID". */
export function describeValidationErrors(errors: ValidationError[], parent = ''): string[] {
  const messages: string[] = [];
  for (const error of errors) {
    const path = parent ? `${parent}.${error.property}` : error.property;
    for (const text of Object.values(error.constraints ?? {})) {
      // class-validator phrases messages with the bare property name; put the full path in.
      const message = text.startsWith(`property ${error.property} `)
        ? `${path} is not allowed (unknown field)`
        : text.startsWith(error.property)
          ? path + text.slice(error.property.length)
          : `${path}: ${text}`;
      messages.push(message);
    }
    if (error.children?.length) messages.push(...describeValidationErrors(error.children, path));
  }
  return messages;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Text PostgreSQL cannot hold as sent: a NUL character (text and jsonb refuse it, and the
 * statement fails: a 500) or an unpaired UTF-16 surrogate (a jsonb escape fails; a text column
 * silently gets U+FFFD instead: the stored text would differ from the accepted one). Both can
 * only arrive through JSON escapes (`\u0000`, `\ud800`) or percent-encoding. The first offending
 * value's path and problem, keys included; null when there is none.
 */
export function unstorableText(value: unknown, path = ''): string | null {
  const check = (text: string, where: string): string | null => {
    const name = where || 'the value';
    if (text.includes('\u0000')) return `${name} contains a NUL character (U+0000), which cannot be stored`;
    if (LONE_SURROGATE.test(text)) return `${name} is not valid Unicode (it contains an unpaired surrogate)`;
    return null;
  };
  if (typeof value === 'string') return check(value, path);
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) {
      const problem = unstorableText(v, path ? `${path}.${i}` : String(i));
      if (problem) return problem;
    }
  } else if (value !== null && typeof value === 'object' && !Buffer.isBuffer(value)) {
    for (const [k, v] of Object.entries(value)) {
      const where = path ? `${path}.${k}` : k;
      const problem = check(k, `${where} (the key)`) ?? unstorableText(v, where);
      if (problem) return problem;
    }
  }
  return null;
}

/** The validation pipe, refusing unstorable text in bodies, queries and path parameters first. */
class HeraldValidationPipe extends ValidationPipe {
  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type === 'body' || metadata.type === 'query' || metadata.type === 'param') {
      const problem = unstorableText(value, metadata.data ?? '');
      if (problem) throw new BadRequestException(problem);
    }
    return super.transform(value, metadata);
  }
}

/** Global pipe: unknown fields are rejected, values are transformed to the DTO types. */
export function createValidationPipe(): ValidationPipe {
  return new HeraldValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    forbidUnknownValues: true,
    // One message per field: "name must be a string", not also its length rule.
    stopAtFirstError: true,
    exceptionFactory: (errors) => new BadRequestException(describeValidationErrors(errors).join('; ')),
  });
}
