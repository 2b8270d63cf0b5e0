import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
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
  let units = 0;
  for (const index of table.indexes) {
    const oldKey = indexKey(before, index);
    const newKey = indexKey(after, index);
    const oldEntry = before && oldKey ? projected(before, table, index) : undefined;
    const newEntry = after && newKey ? projected(after, table, index) : undefined;
    if (oldKey !== newKey) {
      if (oldEntry) units += writeUnits(itemSize(oldEntry));
      if (newEntry) units += writeUnits(itemSize(newEntry));
    } else if (oldEntry && newEntry && JSON.stringify(oldEntry) !== JSON.stringify(newEntry)) {
      units += writeUnits(itemSize(newEntry));
    }
  }
  return units;
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
  private readonly side = DynamoDBDocumentClient.from(new DynamoDBClient({}));

  constructor(private readonly tables: ReadonlyMap<string, TableDefinition>) {}

  attach(client: WithMiddleware): void {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const operation = String(context.commandName).replace(/Command$/, '');
        const input = args.input as Item;
        const table = this.tables.get(String(input.TableName));
        const isWrite = ['PutItem', 'Put', 'UpdateItem', 'Update'].includes(operation);
        if (!table || !isWrite || table.indexes.length === 0) return next(args);
        const source = (operation.startsWith('Put') ? input.Item : input.Key) as Item;
        const key = { [table.partitionKey.name]: plain(source[table.partitionKey.name]) };
        const read = async (): Promise<Item | undefined> =>
          (await this.side.send(new GetCommand({ TableName: String(input.TableName), Key: key, ConsistentRead: true }))).Item;
        const before = await read();
        const result = await next(args);
        const after = await read();
        this.units += indexWriteUnits(table, before, after);
        return result;
      },
      { step: 'initialize', name: 'payrelayBenchIndexWrites', priority: 'low' },
    );
  }

  reset(): void {
    this.units = 0;
  }
}
