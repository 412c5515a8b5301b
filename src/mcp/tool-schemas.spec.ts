import { getMetadataStorage, ValidationTypes } from 'class-validator';
import * as z from 'zod';
import { PageQuery } from '../common/pagination';
import { EditDeadJobDto, EditThreadPartDto, ListDlqQuery, RequeueDto } from '../dead-letter/dead-letter.dto';
import { CreatePostDto, ListPostsQuery, TargetDto, ThreadPartDto } from '../posts/posts.dto';
import { CalendarWeekInput } from './calendar-week';
import {
  advertised,
  CALENDAR_SHAPE,
  CREATE_POST_SHAPE,
  EDIT_FAILED_FIELDS,
  EDIT_THREAD_PART,
  LIST_FAILED_SHAPE,
  LIST_POSTS_SHAPE,
  PAGE_SHAPE,
  REQUEUE_FIELDS,
  TARGET,
  THREAD_PART,
} from './tool-schemas';

/** A DTO's fields as class-validator knows them, each with whether it may be left out (@IsOptional). */
function dtoFields(dto: new () => object): Record<string, 'optional' | 'required'> {
  const metas = getMetadataStorage().getTargetValidationMetadatas(dto, '', true, false);
  const fields: Record<string, 'optional' | 'required'> = {};
  for (const m of metas) {
    if (fields[m.propertyName] !== 'optional') fields[m.propertyName] = 'required';
  }
  for (const m of metas) if (m.type === ValidationTypes.CONDITIONAL_VALIDATION) fields[m.propertyName] = 'optional';
  return fields;
}

/** The advertised fields, each with whether the schema lets it be left out. */
function shapeFields(shape: z.ZodRawShape): Record<string, 'optional' | 'required'> {
  return Object.fromEntries(Object.entries(shape).map(([k, v]) => [k, z.safeParse(v, undefined).success ? 'optional' : 'required']));
}

describe("the MCP tools' input schemas", () => {
  it.each([
    ['list_accounts', PAGE_SHAPE, PageQuery],
    ['list_posts', LIST_POSTS_SHAPE, ListPostsQuery],
    ['list_failed_posts', LIST_FAILED_SHAPE, ListDlqQuery],
    ['edit_and_requeue_failed_post (its edit)', EDIT_FAILED_FIELDS, EditDeadJobDto],
    ['edit_and_requeue_failed_post (its requeue)', REQUEUE_FIELDS, RequeueDto],
    ['get_calendar', CALENDAR_SHAPE, CalendarWeekInput],
    ['a target', TARGET.shape, TargetDto],
    ['a thread part', THREAD_PART.shape, ThreadPartDto],
    ['a thread edit', EDIT_THREAD_PART.shape, EditThreadPartDto],
  ] as const)('advertise for %s exactly the fields of its DTO, optional where it is', (_name, shape, dto) => {
    expect(shapeFields(shape)).toEqual(dtoFields(dto));
  });

  it("advertise for create_post the fields of POST /v1/posts's body, and its Idempotency-Key header as idempotencyKey", () => {
    const { idempotencyKey, ...body } = shapeFields(CREATE_POST_SHAPE);
    expect(body).toEqual(dtoFields(CreatePostDto));
    expect(idempotencyKey).toBe('optional');
  });

  it('register a schema that takes any object whole (class-validator judges) but shows the precise one', () => {
    const schema = advertised({ text: z.string().max(3), n: z.number().optional() });
    // Wrong types and unknown fields pass through untouched, for the DTO's validation to refuse in the API's words.
    expect(schema.parse({ text: 42, extra: true })).toEqual({ text: 42, extra: true });
    expect(z.toJSONSchema(schema)).toMatchObject({
      type: 'object',
      properties: { text: { type: 'string', maxLength: 3 }, n: { type: 'number' } },
      required: ['text'],
      additionalProperties: false,
    });
  });
});
