import { IsOptional, IsString } from 'class-validator';
import * as z from 'zod';
import { PageQuery } from '../common/pagination';
import { EditDeadJobDto, EditThreadPartDto, ListDlqQuery, RequeueDto } from '../dead-letter/dead-letter.dto';
import { CreatePostDto, ListPostsQuery, TargetDto, ThreadPartDto } from '../posts/posts.dto';
import { CalendarWeekInput } from './calendar-week.dto';
import {
  advertised,
  CALENDAR_FIELDS,
  CREATE_POST_FIELDS,
  CREATE_POST_SHAPE,
  dtoFields,
  EDIT_AND_REQUEUE_SHAPE,
  EDIT_FAILED_FIELDS,
  EDIT_THREAD_PART_FIELDS,
  fieldsOf,
  LIST_FAILED_FIELDS,
  LIST_POSTS_FIELDS,
  PAGE_FIELDS,
  REQUEUE_FIELDS,
  TARGET_FIELDS,
  THREAD_PART_FIELDS,
  undescribed,
} from './tool-schemas';

const jsonOf = (shape: z.ZodRawShape) => z.toJSONSchema(advertised(shape)) as { properties: Record<string, unknown>; required?: string[] };

describe("the MCP tools' input schemas", () => {
  it.each([
    ['list_accounts', PageQuery, PAGE_FIELDS],
    ['list_posts', ListPostsQuery, LIST_POSTS_FIELDS],
    ['create_post', CreatePostDto, CREATE_POST_FIELDS],
    ['a target', TargetDto, TARGET_FIELDS],
    ['a thread part', ThreadPartDto, THREAD_PART_FIELDS],
    ['list_failed_posts', ListDlqQuery, LIST_FAILED_FIELDS],
    ['edit_and_requeue_failed_post (its edit)', EditDeadJobDto, EDIT_FAILED_FIELDS],
    ['a thread edit', EditThreadPartDto, EDIT_THREAD_PART_FIELDS],
    ['edit_and_requeue_failed_post (its requeue)', RequeueDto, REQUEUE_FIELDS],
    ['get_calendar', CalendarWeekInput, CALENDAR_FIELDS],
  ] as const)('describe every field of the DTO behind %s', (_name, dto, described) => {
    // A field added to the DTO is advertised at once, generically: describe it in tool-schemas.ts.
    expect(undescribed(dto, described)).toEqual([]);
  });

  it("advertise exactly the route's fields, required where the DTO requires them", () => {
    const create = jsonOf(CREATE_POST_SHAPE);
    expect(Object.keys(create.properties).sort()).toEqual([...dtoFields(CreatePostDto).keys(), 'idempotencyKey'].sort());
    expect(create.required).toEqual(['text', 'targets']);
    const edit = jsonOf(EDIT_AND_REQUEUE_SHAPE);
    expect(Object.keys(edit.properties).sort()).toEqual(
      ['jobId', ...dtoFields(EditDeadJobDto).keys(), ...dtoFields(RequeueDto).keys()].sort(),
    );
    expect(edit.required).toEqual(['jobId']);
  });

  it('advertise a DTO field nobody described, generically, rather than leave it out', () => {
    class Sample {
      @IsString()
      named!: string;

      @IsOptional()
      @IsString()
      added?: string;
    }
    expect(undescribed(Sample, { named: z.string() })).toEqual(['added']);
    const json = jsonOf(fieldsOf(Sample, { named: z.string().max(3) }));
    expect(json).toMatchObject({ properties: { named: { type: 'string', maxLength: 3 }, added: {} }, required: ['named'] });
    // Described but not a field of the DTO: not advertised.
    expect(Object.keys(jsonOf(fieldsOf(Sample, { named: z.string(), added: z.string(), gone: z.string() })).properties)).toEqual([
      'named',
      'added',
    ]);
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
