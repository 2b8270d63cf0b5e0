import { InvalidListCursorError } from '@shared/domain/errors';

/** An opaque listing cursor: the resume point as base64url JSON. */
export const encodeCursor = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

/**
 * Reads a cursor a listing of this process wrote; anything else is the caller's mistake, named as such.
 * @throws InvalidListCursorError for text that is not such a cursor or fails `valid`
 */
export function decodeCursor<T>(cursor: string, valid: (value: unknown) => value is T): T {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw new InvalidListCursorError();
  }
  if (!valid(value)) throw new InvalidListCursorError();
  return value;
}
