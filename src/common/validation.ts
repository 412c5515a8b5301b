import { BadRequestException, ValidationError, ValidationPipe } from '@nestjs/common';

/** Flattens nested class-validator errors into "targets.0.accountId must be a UUID". */
export function describeValidationErrors(errors: ValidationError[], parent = ''): string[] {
  const messages: string[] = [];
  for (const error of errors) {
    const path = parent ? `${parent}.${error.property}` : error.property;
    for (const text of Object.values(error.constraints ?? {})) {
      // class-validator phrases messages with the bare property name; put the full path in.
      const message = text.startsWith(`property ${error.property} `)
        ? `${path} is not allowed (unknown field)`
        : text.startsWith(error.property) ? path + text.slice(error.property.length) : `${path}: ${text}`;
      messages.push(message);
    }
    if (error.children?.length) messages.push(...describeValidationErrors(error.children, path));
  }
  return messages;
}

/** Global pipe: unknown fields are rejected, values are transformed to the DTO types. */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    forbidUnknownValues: true,
    // One message per field: "name must be a string", not also its length rule.
    stopAtFirstError: true,
    exceptionFactory: (errors) => new BadRequestException(describeValidationErrors(errors).join('; ')),
  });
}
