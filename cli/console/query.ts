import * as z from 'zod';
import { isCalendarDay } from '../context';

/** A query parameter or form field that is merely wrong: the console answers 400 with this message. */
export class BadRequestError extends Error {
  override name = 'BadRequestError';
}

/** Something asked for that does not exist: 404 with this message. */
export class NotFoundError extends Error {
  override name = 'NotFoundError';
}

/**
 * Parses a page's query or a form against its schema; the first problem of each field becomes one
 * line of the 400 page ("state: must be one of ..."), never a stack trace.
 */
export function parseInput<T extends z.ZodType>(schema: T, input: unknown): z.infer<T> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const lines = parsed.error.issues.map((issue) => `${issue.path.join('.') || 'input'}: ${issue.message}`);
  throw new BadRequestError(lines.join('; '));
}

/** `YYYY-MM-DD`, a real calendar day. */
export const day = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a day as YYYY-MM-DD')
  .refine(isCalendarDay, 'is not a calendar day');

/** An ISO-8601 time with a zone (what the forms send and the URLs carry). */
export const isoTime = z.iso.datetime({ offset: true, message: 'must be an ISO-8601 time such as 2026-11-20T10:00:00Z' });

/** An optional text field: empty means absent, and it has a length bound. */
export const optionalText = (max: number) =>
  z
    .string()
    .max(max, `must be at most ${max} characters`)
    .optional()
    .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));

/** A required text field with a length bound. */
export const requiredText = (max: number) =>
  z.string({ message: 'is required' }).trim().min(1, 'is required').max(max, `must be at most ${max} characters`);

/** An optional field whose empty value (an untouched form input) means "not given". */
export const blankAsAbsent = <T extends z.ZodType>(schema: T) => z.preprocess((v) => (v === '' ? undefined : v), schema.optional());
