import type { Type } from '@nestjs/common';
import { getMetadataStorage, ValidationTypes } from 'class-validator';

/**
 * A DTO's fields as class-validator knows them (inherited ones included), each with whether it
 * may be left out. Apart from tool-schemas.ts so that a tool can split its arguments without
 * loading zod, which only describing the tools (tools/list) needs.
 */
export function dtoFields(dto: Type<object>): Map<string, 'optional' | 'required'> {
  const metas = getMetadataStorage().getTargetValidationMetadatas(dto, '', true, false);
  const fields = new Map<string, 'optional' | 'required'>(metas.map((m) => [m.propertyName, 'required']));
  for (const m of metas) if (m.type === ValidationTypes.CONDITIONAL_VALIDATION) fields.set(m.propertyName, 'optional');
  return fields;
}
