import { QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** A DynamoDB key or item as the document client gives it. */
type Item = Record<string, unknown>;

/** One index partition to read: a write shard of a day, a legacy key, a reference. */
export interface IndexPartition {
  readonly indexName: string;
  /** The index's partition key attribute, and this partition's value of it. */
  readonly keyName: string;
  readonly key: string;
}

/** Where one partition's read resumes: 0 from its start, a key to go on after, null once read to its end. */
export type PartitionResume = Item | 0 | null;

export interface MergedQuery {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
  /** The table's own key attribute (an ExclusiveStartKey of an index names it besides the index keys). */
  readonly tableKey: string;
  readonly partitions: readonly IndexPartition[];
  /** The sort key shared by every partition's index, and the inclusive range read of it. */
  readonly sortKey: string;
  readonly range: { readonly from: string; readonly to: string };
  readonly newestFirst: boolean;
  /** A FilterExpression on projected attributes, with its own names and values. */
  readonly filter?: { readonly expression: string; readonly names: Record<string, string>; readonly values: Record<string, unknown> };
  /** Only these attributes are returned (besides the keys); for an index that projects whole items. */
  readonly fields?: readonly string[];
  /** Items per Query call; absent: DynamoDB's 1 MB pages. */
  readonly pageSize?: number;
  /** Where each partition resumes (a cursor's content); absent: every partition from its start. */
  readonly resume?: readonly PartitionResume[];
}

/** A merge in progress: the next item in sort order, and where each partition would resume after the items taken. */
export interface Merge {
  next(): Promise<Item | undefined>;
  resume(): PartitionResume[];
}

interface PartitionState {
  readonly partition: IndexPartition;
  /** Read but not yet taken, in sort order. */
  buffer: Item[];
  /** Where the next Query starts (0: the partition's start). */
  start: Item | 0;
  /** Whether the partition's last Query had no LastEvaluatedKey. */
  ended: boolean;
  /** Where the partition resumes while `buffer` is not empty: after the last item taken, or where the buffer's Query started. */
  bufferFrom: Item | 0;
}

/**
 * Merges the partitions of sharded indexes into one stream in sort order (newest or oldest first),
 * exactly: a partition is queried again only when its buffer is empty, so no item is passed over,
 * and at most one Query page per partition is held in memory. Every Query follows LastEvaluatedKey;
 * a filter that leaves a page empty makes the next page of that partition read, not a gap.
 * `resume()` after n items is the cursor of a page of n: each partition goes on after its last item
 * taken, so pages never overlap and never skip.
 */
export function mergedQuery(input: MergedQuery): Merge {
  const states: PartitionState[] = input.partitions.map((partition, n) => {
    const resume = input.resume === undefined ? 0 : (input.resume[n] as PartitionResume);
    return { partition, buffer: [], start: resume ?? 0, ended: resume === null, bufferFrom: resume ?? 0 };
  });
  const names: Record<string, string> = { '#sort': input.sortKey, ...(input.filter?.names ?? {}) };
  const projection = input.fields
    ? {
        ProjectionExpression: [input.tableKey, input.sortKey, ...input.fields].map((_, n) => `#p${n}`).join(', '),
        fieldNames: Object.fromEntries([input.tableKey, input.sortKey, ...input.fields].map((field, n) => [`#p${n}`, field])),
      }
    : undefined;

  const keyOf = (state: PartitionState, item: Item): Item => ({
    [input.tableKey]: item[input.tableKey],
    [state.partition.keyName]: state.partition.key,
    [input.sortKey]: item[input.sortKey],
  });

  async function fill(state: PartitionState): Promise<void> {
    while (state.buffer.length === 0 && !state.ended) {
      const startedAt = state.start;
      const page = await input.client.send(
        new QueryCommand({
          TableName: input.tableName,
          IndexName: state.partition.indexName,
          KeyConditionExpression: '#key = :key AND #sort BETWEEN :from AND :to',
          ExpressionAttributeNames: { ...names, '#key': state.partition.keyName, ...(projection?.fieldNames ?? {}) },
          ExpressionAttributeValues: { ':key': state.partition.key, ':from': input.range.from, ':to': input.range.to, ...(input.filter?.values ?? {}) },
          ...(input.filter ? { FilterExpression: input.filter.expression } : {}),
          ...(projection ? { ProjectionExpression: projection.ProjectionExpression } : {}),
          ScanIndexForward: !input.newestFirst,
          ...(input.pageSize !== undefined ? { Limit: input.pageSize } : {}),
          ...(startedAt === 0 ? {} : { ExclusiveStartKey: startedAt }),
        }),
      );
      state.buffer = [...(page.Items ?? [])];
      state.bufferFrom = startedAt;
      state.start = page.LastEvaluatedKey ?? 0;
      state.ended = page.LastEvaluatedKey === undefined;
    }
  }

  /** Whether `a` comes before `b` in the merge's order. */
  const before = (a: Item, b: Item): boolean => {
    const x = String(a[input.sortKey]);
    const y = String(b[input.sortKey]);
    return input.newestFirst ? x > y : x < y;
  };

  return {
    async next() {
      await Promise.all(states.filter((s) => s.buffer.length === 0 && !s.ended).map(fill));
      let pick: PartitionState | undefined;
      for (const state of states) {
        const head = state.buffer[0];
        if (head !== undefined && (pick === undefined || before(head, pick.buffer[0] as Item))) pick = state;
      }
      if (pick === undefined) return undefined;
      const item = pick.buffer.shift() as Item;
      pick.bufferFrom = keyOf(pick, item);
      return item;
    },

    resume() {
      return states.map((s): PartitionResume => {
        if (s.buffer.length > 0) return s.bufferFrom;
        return s.ended ? null : s.start;
      });
    },
  };
}
