import { InvalidListCursorError } from '@shared/domain/errors';

/** An opaque listing cursor: the resume point as base64url JSON. */
export const encodeCursor = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

/**
 * The JSON value a cursor encodes, not yet checked: for a listing that tells what it holds before
 * deciding (`decodeCursor` refuses anything but its own cursors).
 * @throws InvalidListCursorError for text that is not base64url JSON
 */
export function decodeCursorValue(cursor: string): unknown {
  try {
    return JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
  } catch {
    throw new InvalidListCursorError();
  }
}

/**
 * Reads a cursor a listing of this process wrote; anything else is the caller's mistake, named as such.
 * @throws InvalidListCursorError for text that is not such a cursor or fails `valid`
 */
export function decodeCursor<T>(cursor: string, valid: (value: unknown) => value is T): T {
  const value = decodeCursorValue(cursor);
  if (!valid(value)) throw new InvalidListCursorError();
  return value;
}

/** Where a Query of one partition of an index may resume: the names of its key, and what the Query reads. */
export interface PartitionKeyShape {
  /** The table's own key attribute. */
  readonly tableKey: string;
  /** The index's partition key attribute, and the one value of it the Query reads. */
  readonly partitionKey: string;
  readonly partition: string;
  /** The index's sort key attribute and, when the Query's key condition bounds it, the inclusive range. */
  readonly sortKey: string;
  readonly range?: { readonly from: string; readonly to: string };
}

/**
 * Whether `value` is exactly what a Query of that partition hands back as LastEvaluatedKey, so
 * DynamoDB takes it as an ExclusiveStartKey of the same Query: an object of the table key, the
 * index's partition key and its sort key and nothing else, all non-empty strings, the partition key
 * naming the partition read and the sort key within the range read. A cursor holding anything else
 * (another shard's key, another state's, a time outside the range, a number) is refused here rather
 * than by DynamoDB (a ValidationException, a 500).
 */
export function isPartitionKey(value: unknown, shape: PartitionKeyShape): value is Record<string, string> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const key = value as Record<string, unknown>;
  const names = [shape.tableKey, shape.partitionKey, shape.sortKey];
  if (Object.keys(key).length !== names.length || !names.every((name) => typeof key[name] === 'string' && key[name] !== '')) return false;
  const sort = key[shape.sortKey] as string;
  return key[shape.partitionKey] === shape.partition && (shape.range === undefined || (sort >= shape.range.from && sort <= shape.range.to));
}
