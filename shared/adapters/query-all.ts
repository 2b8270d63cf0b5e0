import { QueryCommand, type DynamoDBDocumentClient, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';

/** Every item of a query, page after page until DynamoDB hands back no LastEvaluatedKey: no query stops at its first 1 MB. */
export async function queryAll(client: DynamoDBDocumentClient, input: QueryCommandInput): Promise<Array<Record<string, unknown>>> {
  const items: Array<Record<string, unknown>> = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await client.send(new QueryCommand({ ...input, ExclusiveStartKey: start }));
    items.push(...(out.Items ?? []));
    start = out.LastEvaluatedKey;
  } while (start);
  return items;
}

/** A COUNT query answered without a Count. */
export class QueryCountMissingError extends Error {
  override name = 'QueryCountMissingError';
  constructor() {
    super('DynamoDB answered a COUNT query without a Count');
  }
}

/**
 * How many items a query matches, with `Select: 'COUNT'` (no item comes back, the read units are the
 * same as reading them), page after page until DynamoDB hands back no LastEvaluatedKey: a COUNT stops
 * at 1 MB read as any query does, and the first page's Count alone would be a smaller number.
 */
export async function countAll(client: DynamoDBDocumentClient, input: Omit<QueryCommandInput, 'Select' | 'ProjectionExpression'>): Promise<number> {
  let count = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const out = await client.send(new QueryCommand({ ...input, Select: 'COUNT', ExclusiveStartKey: start }));
    // An answer without its Count is not "none": reading it as 0 could clear an alarm falsely.
    if (out.Count === undefined) throw new QueryCountMissingError();
    count += out.Count;
    start = out.LastEvaluatedKey;
  } while (start);
  return count;
}
