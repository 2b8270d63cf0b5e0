import { DynamoDBClient, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { IndexDefinition, TableDefinition } from '@shared/config/resources';
import type { WithMiddleware } from './aws-counter';

type Item = Record<string, unknown>;

/** Approximate stored size of an attribute value in bytes, after DynamoDB's sizing rules. */
function valueSize(value: unknown): number {
  if (value === null || value === undefined || typeof value === 'boolean') return 1;
  if (typeof value === 'string') return Buffer.byteLength(value, 'utf8');
  if (typeof value === 'number' || typeof value === 'bigint') return Math.ceil(String(value).replace(/^-|\.|e.*$/g, '').length / 2) + 1;
  if (Array.isArray(value)) return 3 + value.reduce((sum: number, v) => sum + 1 + valueSize(v), 0);
  if (typeof value === 'object') return 3 + Object.entries(value as Item).reduce((sum, [k, v]) => sum + 1 + Buffer.byteLength(k) + valueSize(v), 0);
  return 1;
}

/** Approximate item size in bytes (names + values). */
export function itemSize(item: Item): number {
  return Object.entries(item).reduce((sum, [k, v]) => sum + Buffer.byteLength(k) + valueSize(v), 0);
}

/** Write units of writing `bytes` (1 KB per unit, at least 1). */
export function writeUnits(bytes: number): number {
  return Math.max(1, Math.ceil(bytes / 1024));
}

function projected(item: Item, table: TableDefinition, index: IndexDefinition): Item {
  if (index.projection === 'ALL') return item;
  const names = new Set([table.partitionKey.name, table.sortKey?.name, index.partitionKey.name, index.sortKey?.name]);
  if (index.projection !== 'KEYS_ONLY') for (const n of index.projection) names.add(n);
  return Object.fromEntries(Object.entries(item).filter(([k]) => names.has(k)));
}

/** Read units of reading `bytes` (4 KB per unit, at least 1; half for an eventually consistent read). */
export function readUnits(bytes: number, consistent: boolean): number {
  return Math.max(1, Math.ceil(bytes / 4096)) * (consistent ? 1 : 0.5);
}

function indexKey(item: Item | undefined, index: IndexDefinition): string | undefined {
  if (!item) return undefined;
  const partition = item[index.partitionKey.name];
  const sort = index.sortKey ? item[index.sortKey.name] : '';
  if (partition === undefined || sort === undefined) return undefined;
  return JSON.stringify([partition, sort]);
}

/**
 * Index write units of one item write, from the item before and after, following DynamoDB's rules:
 * a new entry is one put, a removed entry one delete, a changed index key a delete plus a put, and an
 * unchanged key costs a write only when projected attributes changed.
 */
export function indexWriteUnits(table: TableDefinition, before: Item | undefined, after: Item | undefined): number {
  return indexWrites(table, before, after).reduce((sum, w) => sum + w.units, 0);
}

/** One index entry write: the index, the partition key value it lands on, its units. */
interface IndexEntryWrite {
  readonly index: string;
  readonly partition: string;
  readonly units: number;
}

/** The index entry writes of one item write (the rules of indexWriteUnits), each with its partition. */
export function indexWrites(table: TableDefinition, before: Item | undefined, after: Item | undefined): IndexEntryWrite[] {
  const writes: IndexEntryWrite[] = [];
  for (const index of table.indexes) {
    const oldKey = indexKey(before, index);
    const newKey = indexKey(after, index);
    const oldEntry = before && oldKey ? projected(before, table, index) : undefined;
    const newEntry = after && newKey ? projected(after, table, index) : undefined;
    const entry = (item: Item, projectedEntry: Item) => ({
      index: index.indexName,
      partition: String(item[index.partitionKey.name]),
      units: writeUnits(itemSize(projectedEntry)),
    });
    if (oldKey !== newKey) {
      if (before && oldEntry) writes.push(entry(before, oldEntry));
      if (after && newEntry) writes.push(entry(after, newEntry));
    } else if (after && oldEntry && newEntry && JSON.stringify(oldEntry) !== JSON.stringify(newEntry)) {
      writes.push(entry(after, newEntry));
    }
  }
  return writes;
}

/** Units one partition key received: `<table id>[/<index>] <partition key value>`. */
export type PartitionUnits = Map<string, { write: number; read: number }>;

/** The partition key value a Query reads: the `name = :value` (or `#name = :value`) term of its key condition. */
export function queriedPartition(input: Item, keyName: string): string | undefined {
  const names = (input.ExpressionAttributeNames ?? {}) as Record<string, string>;
  const values = (input.ExpressionAttributeValues ?? {}) as Item;
  for (const match of String(input.KeyConditionExpression ?? '').matchAll(/([#\w]+)\s*=\s*(:\w+)/g)) {
    const name = match[1]?.startsWith('#') ? names[match[1]] : match[1];
    if (name === keyName) return String(plain(values[match[2] as string]));
  }
  return undefined;
}

function plain(value: unknown): unknown {
  // The input may be the document client's plain value or the low-level { S: ... } form.
  if (value && typeof value === 'object' && 'S' in (value as Item)) return (value as { S: string }).S;
  return value;
}

/**
 * Adds secondary-index write units to a cost count. dynalite's ConsumedCapacity covers the table
 * only, while DynamoDB bills every index write too; this reads the item before and after each
 * PutItem/UpdateItem with a separate, uncounted client and applies the rules above. Cost mode only.
 */
export class IndexWriteCounter {
  units = 0;
  /** Write and read units per partition key of every table and index, since the last reset. */
  partitions: PartitionUnits = new Map();
  private readonly side = DynamoDBDocumentClient.from(new DynamoDBClient({}));

  constructor(private readonly tables: ReadonlyMap<string, TableDefinition>) {}

  attach(client: WithMiddleware): void {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const operation = String(context.commandName).replace(/Command$/, '');
        const input = args.input as Item;
        const table = this.tables.get(String(input.TableName));
        if (!table) return next(args);
        if (['Query', 'GetItem', 'Get'].includes(operation)) {
          const result = await next(args);
          this.countRead(table, input, (result.output ?? {}) as Item);
          return result;
        }
        const isWrite = ['PutItem', 'Put', 'UpdateItem', 'Update', 'DeleteItem', 'Delete'].includes(operation);
        if (!isWrite) return next(args);
        const source = (operation.startsWith('Put') ? input.Item : input.Key) as Item;
        const partition = String(plain(source[table.partitionKey.name]));
        const key = { [table.partitionKey.name]: plain(source[table.partitionKey.name]), ...(table.sortKey ? { [table.sortKey.name]: plain(source[table.sortKey.name]) } : {}) };
        const read = async (): Promise<Item | undefined> =>
          (await this.side.send(new GetCommand({ TableName: String(input.TableName), Key: key, ConsistentRead: true }))).Item;
        const before = await read();
        try {
          return await next(args);
        } finally {
          // A failed conditional write is billed too: the larger of the item before and the one asked for.
          const after = await read();
          // A low-level PutItem (the repository's item writer) carries the item marshalled (its key an
          // object, never a string, then): sized as stored.
          const marshalled = typeof source[table.partitionKey.name] === 'object';
          const asked = marshalled ? unmarshall(input.Item as Record<string, AttributeValue>) : (input.Item as Item);
          const written = Math.max(before ? itemSize(before) : 0, after ? itemSize(after) : 0, operation.startsWith('Put') ? itemSize(asked) : 0);
          this.add(`${table.id} ${partition}`, 'write', writeUnits(written));
          const entries = indexWrites(table, before, after);
          for (const w of entries) this.add(`${table.id}/${w.index} ${w.partition}`, 'write', w.units);
          this.units += entries.reduce((sum, w) => sum + w.units, 0);
        }
      },
      { step: 'initialize', name: 'payrelayBenchIndexWrites', priority: 'low' },
    );
  }

  private add(key: string, kind: 'write' | 'read', units: number): void {
    const entry = this.partitions.get(key) ?? { write: 0, read: 0 };
    entry[kind] += units;
    this.partitions.set(key, entry);
  }

  /** GetItem: the item's partition; Query: the partition its key condition names, by the size of what it returned. */
  private countRead(table: TableDefinition, input: Item, output: Item): void {
    const consistent = input.ConsistentRead === true;
    if (input.Key) {
      const item = output.Item as Item | undefined;
      this.add(`${table.id} ${String(plain((input.Key as Item)[table.partitionKey.name]))}`, 'read', readUnits(item ? itemSize(item) : 0, consistent));
      return;
    }
    const index = table.indexes.find((i) => i.indexName === input.IndexName);
    const keyName = index ? index.partitionKey.name : table.partitionKey.name;
    const partition = queriedPartition(input, keyName) ?? '?';
    const bytes = ((output.Items ?? []) as Item[]).reduce((sum, item) => sum + itemSize(item), 0);
    this.add(`${table.id}${index ? `/${index.indexName}` : ''} ${partition}`, 'read', readUnits(bytes, consistent));
  }

  reset(): void {
    this.units = 0;
    this.partitions = new Map();
  }
}
