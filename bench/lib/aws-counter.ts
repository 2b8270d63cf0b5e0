import type { MiddlewareStack } from '@smithy/types';

/** Anything with an SDK v3 middleware stack (every client; the document client shares its client's). */
export interface WithMiddleware {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the stack is typed per client; the counter reads only shared fields
  middlewareStack: MiddlewareStack<any, any>;
}

/** DynamoDB operations that accept ReturnConsumedCapacity. */
const CAPACITY_COMMANDS = new Set([
  'GetItem',
  'PutItem',
  'UpdateItem',
  'DeleteItem',
  'Query',
  'Scan',
  'BatchGetItem',
  'BatchWriteItem',
]);
const WRITE_COMMANDS = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem']);

/** What the counter saw since the last reset. */
export interface CallCounts {
  /** Calls per `<service>.<operation>`, failed calls included (a failed conditional write is still billed). */
  readonly calls: Record<string, number>;
  readonly dynamoReads: number;
  readonly dynamoWrites: number;
  /** Items a read returned or examined: Query/Scan ScannedCount, 1 per GetItem that found an item. */
  readonly itemsRead: number;
  /** itemsRead per operation (Query, Scan, GetItem). */
  readonly itemsReadBy: Record<string, number>;
  /** From ConsumedCapacity when enabled; a failed conditional write counts 1 write unit. */
  readonly readUnits: number;
  readonly writeUnits: number;
}

function operationOf(commandName: unknown): string {
  // DynamoDBClient reports "PutItemCommand"; the document client reports "PutCommand" for the same call.
  const name = String(commandName ?? 'Unknown').replace(/Command$/, '');
  const documentNames: Record<string, string> = { Put: 'PutItem', Get: 'GetItem', Update: 'UpdateItem', Delete: 'DeleteItem', BatchWrite: 'BatchWriteItem', BatchGet: 'BatchGetItem' };
  return documentNames[name] ?? name;
}

/**
 * Counts SDK commands at the client with a middleware: every call that leaves the process is seen,
 * whichever module made it. With `consumedCapacity`, DynamoDB calls also ask for
 * ReturnConsumedCapacity=TOTAL so read and write units are exact (this changes the request, so the
 * timed benchmarks leave it off).
 */
export class AwsCallCounter {
  private calls = new Map<string, number>();
  private readUnits = 0;
  private writeUnits = 0;
  private itemsRead = new Map<string, number>();

  attach(client: WithMiddleware, service: string, options: { consumedCapacity?: boolean } = {}): void {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const operation = operationOf(context.commandName);
        const key = `${service}.${operation}`;
        this.calls.set(key, (this.calls.get(key) ?? 0) + 1);
        const input = args.input as Record<string, unknown>;
        if (service === 'DynamoDB' && options.consumedCapacity && CAPACITY_COMMANDS.has(operation)) {
          input.ReturnConsumedCapacity = 'TOTAL';
        }
        try {
          const result = await next(args);
          if (service === 'DynamoDB') this.record(operation, result.output as Record<string, unknown>);
          return result;
        } catch (error) {
          if (service === 'DynamoDB' && options.consumedCapacity && WRITE_COMMANDS.has(operation)) this.writeUnits += 1;
          throw error;
        }
      },
      { step: 'initialize', name: 'payrelayBenchCallCounter', priority: 'high' },
    );
  }

  private record(operation: string, output: Record<string, unknown>): void {
    const consumed = output.ConsumedCapacity as { CapacityUnits?: number; ReadCapacityUnits?: number; WriteCapacityUnits?: number } | Array<{ CapacityUnits?: number }> | undefined;
    const units = Array.isArray(consumed)
      ? consumed.reduce((sum, c) => sum + (c.CapacityUnits ?? 0), 0)
      : (consumed?.CapacityUnits ?? 0);
    if (WRITE_COMMANDS.has(operation)) this.writeUnits += units;
    else this.readUnits += units;
    let items = 0;
    if (operation === 'GetItem' && output.Item !== undefined) items = 1;
    if (operation === 'Query' || operation === 'Scan') items = Number(output.ScannedCount ?? 0);
    if (items > 0) this.itemsRead.set(operation, (this.itemsRead.get(operation) ?? 0) + items);
  }

  reset(): void {
    this.calls = new Map();
    this.readUnits = 0;
    this.writeUnits = 0;
    this.itemsRead = new Map();
  }

  snapshot(): CallCounts {
    const calls = Object.fromEntries([...this.calls].sort(([a], [b]) => a.localeCompare(b)));
    let dynamoReads = 0;
    let dynamoWrites = 0;
    for (const [key, count] of this.calls) {
      if (!key.startsWith('DynamoDB.')) continue;
      const operation = key.slice('DynamoDB.'.length);
      if (WRITE_COMMANDS.has(operation)) dynamoWrites += count;
      else if (CAPACITY_COMMANDS.has(operation)) dynamoReads += count;
    }
    const itemsReadBy = Object.fromEntries(this.itemsRead);
    const itemsRead = [...this.itemsRead.values()].reduce((a, b) => a + b, 0);
    return { calls, dynamoReads, dynamoWrites, itemsRead, itemsReadBy, readUnits: this.readUnits, writeUnits: this.writeUnits };
  }
}
