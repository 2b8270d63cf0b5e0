import type { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { countAll, QueryCountMissingError } from '@shared/adapters/query-all';

/*
 * countAll, the COUNT query of the review gauge: it adds up the Count of every page until DynamoDB
 * hands back no LastEvaluatedKey (a COUNT stops at 1 MB read like any query), and an answer without
 * a Count fails the count instead of reading as none.
 */

type Page = { Count?: number; LastEvaluatedKey?: Record<string, unknown> };

/** A client that answers the pages in order and keeps each query it was sent. */
function pagedClient(pages: Page[]): { client: DynamoDBDocumentClient; sent: Array<QueryCommand['input']> } {
  const sent: Array<QueryCommand['input']> = [];
  let next = 0;
  const client = {
    send: async (command: QueryCommand) => {
      sent.push(command.input);
      const page = pages[next++];
      if (!page) throw new Error('asked for a page after the last one');
      return page;
    },
  } as unknown as DynamoDBDocumentClient;
  return { client, sent };
}

const INPUT = {
  TableName: 'payouts',
  IndexName: 'by-state',
  KeyConditionExpression: '#shard = :shard',
  ExpressionAttributeNames: { '#shard': 'listShard' },
  ExpressionAttributeValues: { ':shard': 'NEEDS_REVIEW#0' },
};

describe('countAll', () => {
  it('adds up every page, each starting where the previous one stopped', async () => {
    const k1 = { pk: 'a', listShard: 'NEEDS_REVIEW#0', updatedAt: '2026-01-01T00:00:00.000Z' };
    const k2 = { pk: 'b', listShard: 'NEEDS_REVIEW#0', updatedAt: '2026-01-02T00:00:00.000Z' };
    const { client, sent } = pagedClient([{ Count: 1000, LastEvaluatedKey: k1 }, { Count: 0, LastEvaluatedKey: k2 }, { Count: 7 }]);
    expect(await countAll(client, INPUT)).toBe(1007);
    expect(sent.map((input) => input.ExclusiveStartKey)).toEqual([undefined, k1, k2]);
    for (const input of sent) expect(input).toMatchObject({ ...INPUT, Select: 'COUNT' });
  });

  it('is one query when the first page is the last', async () => {
    const { client, sent } = pagedClient([{ Count: 0 }]);
    expect(await countAll(client, INPUT)).toBe(0);
    expect(sent).toHaveLength(1);
  });

  it('fails, rather than count a page as none, when an answer carries no Count', async () => {
    const { client } = pagedClient([{ Count: 3, LastEvaluatedKey: { pk: 'a' } }, {}]);
    await expect(countAll(client, INPUT)).rejects.toBeInstanceOf(QueryCountMissingError);
  });
});
