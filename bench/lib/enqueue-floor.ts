import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import * as v from '@shared/validation/valibot';

/*
 * The floor of bulk enqueue (issue 16 point 8): the same rows as the CLI's file, written as raw calls,
 * one conditional PutItem per row (the repository's own item under the row's key) and one
 * SendMessageBatch per 10 rows, with the CLI's batches in flight. It runs either in the calling
 * process or in a fresh Node process of its own, started exactly as the CLI is (tsx, the repository's
 * tsconfig): an operator always runs the CLI as a fresh process, so the fair floor pays the same
 * start-up and the same JIT warm-up.
 */

const FLOOR_ENV = 'PAYRELAY_BENCH_ENQUEUE_FLOOR';

export const ENQUEUE_CSV_HEADER = 'platform_merchant_id,currency,withdrawal_reference,amount,account_number,account_code,expected_name';

/** Row `i` of a generated payout CSV (the same rows the floor writes). */
export const enqueueCsvRow = (merchant: string, ref: string, i: number): string =>
  `${merchant},GHS,${ref},${(i % 9000) + 1}.${String(i % 100).padStart(2, '0')},0244${String(100000 + (i % 900000))},MTN,Kwame Mensah\n`;

export interface FloorConfig {
  readonly table: string;
  readonly queueUrl: string;
  readonly merchant: string;
  /** Withdrawal references are `<prefix>-<i>`. */
  readonly prefix: string;
  readonly rows: number;
}

export interface FloorResult {
  readonly rows: number;
  readonly seconds: number;
  readonly rate: number;
  /** CPU (user + system) of the process making the calls, per row, over the timed calls only. */
  readonly cpuMsPerRow: number;
}

/**
 * Writes the floor's rows from this process and times them (building each row's request included,
 * loading the SDK not: the CLI's figure likewise starts after its modules are loaded).
 */
export async function runFloor(config: FloorConfig): Promise<FloorResult> {
  // Loaded here, not at the top: the clients read their endpoints from the environment when loaded.
  const documentClient = (await import('@shared/adapters/dynamodb-client')).documentClient();
  const sqsClient = (await import('@shared/adapters/sqs-client')).sqsClient();
  const { PutCommand } = await import('@aws-sdk/lib-dynamodb');
  const { SendMessageBatchCommand } = await import('@aws-sdk/client-sqs');
  const { toItem } = await import('@shared/adapters/payout-item-store');
  const { payoutKey } = await import('@shared/domain/identity');
  const { acceptRequest, payoutRequestSchema } = await import('@shared/messages/payout-request');
  const { DEFAULT_ENQUEUE_CONCURRENCY, SEND_BATCH_SIZE } = await import('@cli/enqueue');
  const { table, queueUrl, merchant, prefix, rows } = config;

  const requestOf = (ref: string, i: number) => {
    const [, currency, withdrawal_reference, amount, account_number, account_code, expected_name] = enqueueCsvRow(merchant, ref, i).trim().split(',');
    return v.parse(payoutRequestSchema, { version: 1, platform_merchant_id: merchant, currency, withdrawal_reference, amount, account_number, account_code, expected_name });
  };
  // The repository's own item, built once; each row writes it under its own key.
  const template = toItem(acceptRequest(requestOf('TEMPLATE', 0), new Date()));

  const started = performance.now();
  const cpuStarted = process.cpuUsage();
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < rows) {
      const first = next;
      next += SEND_BATCH_SIZE;
      const batch = Array.from({ length: Math.min(SEND_BATCH_SIZE, rows - first) }, (_, k) => requestOf(`${prefix}-${first + k}`, first + k));
      await Promise.all(
        batch.map((request) =>
          documentClient.send(
            new PutCommand({
              TableName: table,
              Item: { ...template, pk: payoutKey(request), withdrawal_reference: request.withdrawal_reference },
              ConditionExpression: 'attribute_not_exists(pk)',
            }),
          ),
        ),
      );
      await sqsClient.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: batch.map((request, k) => ({ Id: String(k), MessageBody: JSON.stringify(request) })) }));
    }
  };
  await Promise.all(Array.from({ length: DEFAULT_ENQUEUE_CONCURRENCY }, lane));
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpuStarted);
  return { rows, seconds, rate: rows / seconds, cpuMsPerRow: (used.user + used.system) / 1000 / rows };
}

/**
 * Runs the floor in a fresh Node process started as the CLI is (this module under tsx), with this
 * process's environment (the emulators' endpoints); resolves with what it measured.
 */
export async function runFloorProcess(config: FloorConfig): Promise<FloorResult> {
  const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url)], {
    env: { ...process.env, [FLOOR_ENV]: JSON.stringify(config) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (stderr = (stderr + c.toString('utf8')).slice(-4000)));
  const [code] = (await once(child, 'close')) as [number | null];
  if (code !== 0) throw new Error(`the enqueue floor's process exited ${code}: ${stderr.trim()}`);
  return JSON.parse(stdout) as FloorResult;
}

if (process.env[FLOOR_ENV]) {
  const result = await runFloor(JSON.parse(process.env[FLOOR_ENV]) as FloorConfig);
  process.stdout.write(`${JSON.stringify(result)}\n`);
  // The SDK's keep-alive sockets would hold the process open.
  process.exit(0);
}
