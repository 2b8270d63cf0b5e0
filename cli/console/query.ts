import * as v from '@shared/validation/valibot';
import { isCalendarDay } from '../context';

/** A query parameter or form field that is merely wrong: the console answers 400 with this message. */
export class BadRequestError extends Error {
  override name = 'BadRequestError';
}

/** Something asked for that does not exist: 404 with this message. */
export class NotFoundError extends Error {
  override name = 'NotFoundError';
}

/** What the page calls each field of a form or search, by the field's `name` ("as" is "Outcome"). */
export type FieldLabels = Readonly<Record<string, string>>;

/**
 * Parses a page's query or a form against its schema; the first problem of each field becomes one
 * line of the 400 page ("State: must be one of ..."), never a stack trace. A field is named as its
 * page labels it (`labels`), since a field's `name` is the wire's word, not the operator's; a field
 * without a label (one only a link sets) keeps its name. valibot runs every check of a field by
 * default, so one wrong time would read twice ("Since: must be an ISO-8601 time ...; Since: must be
 * an ISO-8601 time ..."): `abortPipeEarly` stops a field at its first problem.
 */
export function parseInput<T extends v.GenericSchema>(schema: T, input: unknown, labels: FieldLabels = {}): v.InferOutput<T> {
  const parsed = v.safeParse(schema, input, { abortPipeEarly: true });
  if (parsed.success) return parsed.output;
  throw new BadRequestError(
    parsed.issues
      .map((issue) => {
        const path = v.getDotPath(issue) || 'input';
        return `${labels[path] ?? path}: ${issue.message}`;
      })
      .join('; '),
  );
}

/**
 * The 400 of a "next page" link whose cursor the listing refused (InvalidListCursorError): edited
 * by hand, or taken from another search. Said as a person meets it, a link, not a cursor.
 */
export function refusedPageLink(): BadRequestError {
  return new BadRequestError('this "next page" link is not one the console made for this search (it was changed, or belongs to another search): start again from the first page');
}

/** `YYYY-MM-DD`, a real calendar day. */
export const day = v.pipe(v.string(), v.regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a day as YYYY-MM-DD'), v.check(isCalendarDay, 'is not a calendar day'));

const ISO_TIME_MESSAGE = 'must be an ISO-8601 time such as 2026-11-20T10:00:00Z';

/** An ISO-8601 time with seconds and a zone, on a real calendar day (what the forms send and the URLs carry). */
export const isoTime = v.pipe(
  v.string(ISO_TIME_MESSAGE),
  v.regex(/^\d{4}-\d{2}-\d{2}T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d+)?(?:Z|[+-](?:[01]\d|2[0-3]):[0-5]\d)$/, ISO_TIME_MESSAGE),
  v.check((time) => isCalendarDay(time.slice(0, 10)), ISO_TIME_MESSAGE),
);

/** An optional text field: empty means absent, and it has a length bound. */
export const optionalText = (max: number) =>
  v.pipe(
    v.optional(v.pipe(v.string(), v.maxLength(max, `must be at most ${max} characters`))),
    v.transform((text) => (text === undefined || text.trim() === '' ? undefined : text.trim())),
  );

/** A required text field with a length bound (a field left out of the form counts as empty). */
export const requiredText = (max: number) =>
  v.pipe(v.optional(v.string('is required'), ''), v.trim(), v.minLength(1, 'is required'), v.maxLength(max, `must be at most ${max} characters`));

/** An optional field whose empty value (an untouched form input) means "not given". */
export const blankAsAbsent = <T extends v.GenericSchema>(schema: T) =>
  v.optional(
    v.pipe(
      v.unknown(),
      v.transform((input) => (input === '' ? undefined : input)),
      v.optional(schema),
    ),
  );

/** A choice among `options` that must be made: left out or anything else, the page says `message`. */
export const choice = <const O extends readonly [string, ...string[]]>(options: O, message: string) =>
  v.pipe(v.optional(v.string(message), ''), v.picklist(options, message));

/** The two steps of a form that changes something: review what it will do, then confirm. */
export const formStep = v.optional(v.picklist(['review', 'confirm']), 'review');
