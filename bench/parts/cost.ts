import { performance } from 'node:perf_hooks';
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context, ScheduledEvent } from 'aws-lambda';
import type { ReconcileSummary } from '@shared/app/reconcile-payouts';
import { FUNCTIONS } from '@shared/config/functions';
import { EVENTS_TABLE, KYC_TABLE, PAYOUTS_TABLE, type TableDefinition } from '@shared/config/resources';
import { payoutKey } from '@shared/domain/identity';
import { kycCallbackEvent, payoutNotificationEvent } from '@test/factories/http-events';
import { scheduledEvent } from '@test/factories/scheduled-events';
import { AwsCallCounter, type CallCounts } from '../lib/aws-counter';
import { IndexWriteCounter, type PartitionUnits } from '../lib/gsi-writes';
import { countHttpCalls } from '../lib/http-calls';
import { BENCH_KYC_SECRET, contextFor, startHandlerEnv } from '../lib/local-env';
import { verdict, type Part, type PartResult, type Row } from '../lib/part';
import { PRICES, costPerMillion, type UnitUsage } from '../lib/prices';
import { ratio, usd } from '../lib/stats';
import { check, createFloor, kycCallbackBody, notificationBody, seedNotifiedPayouts } from './ingest';
import { runWorkerBatches, type SqsHandler } from '../lib/worker-batches';
import { payoutRequests } from './throughput';

export const TARGETS = {
  writesPerWebhook: 2,
  writesPerPayout: 4,
  indexWriteUnitsPerPayout: 4,
  webhookCostVsFloor: 1.3,
  partitionWriteUnitsPerSecond: 1_000,
  partitionReadUnitsPerSecond: 3_000,
} as const;

/** The burst of issue 16's partition target: 10,000 payouts a minute, and 1,000 webhooks a second of each kind (stricter than 1,000 in all). */
const BURST = { payoutsPerSecond: 10_000 / 60, webhooksPerSecond: 1_000 } as const;

type HttpHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;
type ScheduledHandler = (event: ScheduledEvent, context: Context) => Promise<ReconcileSummary>;

/** What one kind of unit used, per unit, as counted at the clients. */
interface Measured {
  units: number;
  counts: CallCounts;
  indexWriteUnits: number;
  meanMs: number;
  /** Units per partition key of every table and index, over the whole run. */
  partitions: PartitionUnits;
}

/**
 * Units per partition key per second at the burst: each run's units on a key, per unit of work,
 * times the burst's rate of that work, summed over the runs. For a key shared by many units (an
 * index shard) this is the expected load; for a key of one payout or one event it overstates it
 * when a run holds fewer units than a second of the burst, which only makes the maximum stricter.
 */
function burstLoad(runs: ReadonlyArray<{ measured: Measured; perSecond: number }>): { key: string; write: number; read: number }[] {
  const load = new Map<string, { write: number; read: number }>();
  for (const { measured, perSecond } of runs) {
    const scale = perSecond / measured.units;
    for (const [key, units] of measured.partitions) {
      const entry = load.get(key) ?? { write: 0, read: 0 };
      entry.write += units.write * scale;
      entry.read += units.read * scale;
      load.set(key, entry);
    }
  }
  return [...load].map(([key, units]) => ({ key, ...units }));
}

const per = (m: Measured, value: number): number => value / m.units;
const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
const fixed = (x: number): string => (Number.isInteger(x) ? String(x) : x.toFixed(2));

export const cost: Part = async ({ options, progress }): Promise<PartResult> => {
  const L = options.latenciesMs[0] as number;
  const C = options.concurrency;
  const emulators = await startHandlerEnv({
    stage: 'bench-cost',
    logLevel: options.logLevel,
    simulator: { faults: { accountVerification: { latencyMs: L }, payout: { latencyMs: L } } },
    // The applier's sweep applies what the receivers stored, at once (no stream here).
    env: { WORKER_CONCURRENCY: String(C), APPLY_SWEEP_GRACE_SECONDS: '0' },
  });
  try {
    const clients = {
      ...(await import('@shared/adapters/dynamodb-client')),
      ...(await import('@shared/adapters/sqs-client')),
      ...(await import('@shared/adapters/secrets-manager-client')),
    };
    const notification = (await import('@functions/payout-notification')) as unknown as { handler: HttpHandler };
    const kyc = (await import('@functions/kyc-callback')) as unknown as { handler: HttpHandler };
    const worker = (await import('@functions/payout-worker')) as unknown as { handler: SqsHandler };
    const reconciler = (await import('@functions/reconciler')) as unknown as { handler: ScheduledHandler };
    const applier = (await import('@functions/callback-applier')) as unknown as { handler: (event: ScheduledEvent, context: Context) => Promise<{ applied: number }> };

    const env = process.env as Record<string, string>;
    const tables = new Map<string, TableDefinition>([
      [env.PAYOUTS_TABLE_NAME as string, PAYOUTS_TABLE],
      [env.EVENTS_TABLE_NAME as string, EVENTS_TABLE],
      [env.KYC_TABLE_NAME as string, KYC_TABLE],
    ]);
    const counter = new AwsCallCounter();
    // Both DynamoDB clients: the payout item writes go through their own (payoutItemWriter), attached before its first write.
    const dynamoClients = [clients.dynamoClient(), clients.payoutItemWriter()];
    for (const client of dynamoClients) counter.attach(client, 'DynamoDB', { consumedCapacity: true });
    // Both SQS clients: the first delayed checks go through their own (payoutCheckSender), attached before its first send.
    for (const client of [clients.sqsClient(), clients.payoutCheckSender()]) counter.attach(client, 'SQS');
    counter.attach(clients.secretsClient, 'SecretsManager');
    const indexes = new IndexWriteCounter(tables);
    for (const client of dynamoClients) indexes.attach(client);
    const provider = countHttpCalls(new URL(emulators.simulatorUrl as string).host);
    const secret = emulators.provider;
    await seedNotifiedPayouts(env.PAYOUTS_TABLE_NAME as string, secret.platform_merchant_id);
    const floor = createFloor(
      (item) => clients.documentClient().send(new PutCommand({ TableName: env.EVENTS_TABLE_NAME, Item: item, ConditionExpression: 'attribute_not_exists(pk)' })),
      secret.merchant_secret_key + secret.partner_secret_key,
    );

    /** Runs `n` units of `work`, returning per-unit counts and the mean duration. */
    const measure = async (n: number, work: (i: number) => Promise<number>): Promise<Measured> => {
      counter.reset();
      indexes.reset();
      provider.reset();
      const times: number[] = [];
      for (let i = 0; i < n; i += 1) times.push(await work(i));
      return { units: n, counts: counter.snapshot(), indexWriteUnits: indexes.units, meanMs: mean(times), partitions: indexes.partitions };
    };
    const timed = async (fn: () => Promise<void>): Promise<number> => {
      const started = performance.now();
      await fn();
      return performance.now() - started;
    };
    const n = options.costWebhooks;
    const run = Date.now().toString(36);
    const notify = (i: number) =>
      timed(async () => check(await notification.handler(payoutNotificationEvent(notificationBody(i, secret), secret.partner_public_key), contextFor(FUNCTIONS.payoutNotification)), 'payout-notification'));
    const kycCall = (i: number) =>
      timed(async () => check(await kyc.handler(kycCallbackEvent(BENCH_KYC_SECRET.callback_token, kycCallbackBody(i, run)), contextFor(FUNCTIONS.kycCallback)), 'kyc-callback'));
    // Warm-up: secrets cached, connections open, JIT done.
    for (let i = 0; i < 30; i += 1) {
      await notify(3_000_000 + i);
      await kycCall(3_000_000 + i);
    }
    const sweep = () => applier.handler(scheduledEvent(), contextFor(FUNCTIONS.callbackApplier));
    // Uncounted: the warm-up webhooks applied, the applier warmed.
    await sweep();
    progress(`cost: ${n} webhooks of each kind, counted, and the applier's work after their 200`);
    /** The applier's sweep over the `units` webhooks just stored, counted per webhook. */
    const measureApply = async (units: number): Promise<Measured> => {
      counter.reset();
      indexes.reset();
      provider.reset();
      const started = performance.now();
      const applied = await sweep();
      const elapsed = performance.now() - started;
      if (applied.applied !== units) throw new Error(`the applier applied ${applied.applied} of ${units} webhooks: ${JSON.stringify(applied)}`);
      return { units, counts: counter.snapshot(), indexWriteUnits: indexes.units, meanMs: elapsed / units, partitions: indexes.partitions };
    };
    const notifications = await measure(n, (i) => notify(i));
    const notificationApply = await measureApply(n);
    const kycCallbacks = await measure(n, (i) => kycCall(i));
    const kycApply = await measureApply(n);
    const floorRun = await measure(n, (i) => timed(() => floor(notificationBody(4_000_000 + i, secret))));

    // Payouts: the worker in batches of C, then one reconciler pass that makes them final.
    const payoutCount = options.costPayouts;
    const table = env.PAYOUTS_TABLE_NAME as string;
    // Harness step, not counted: make payouts due now (their first check is a minute away).
    const makeDue = async (refs: ReadonlyArray<{ platform_merchant_id: string; currency: string; withdrawal_reference: string }>): Promise<void> => {
      for (const r of refs) {
        await clients.documentClient().send(
          new UpdateCommand({
            TableName: table,
            Key: { pk: payoutKey(r) },
            UpdateExpression: 'SET nextCheckAt = :past',
            ConditionExpression: 'attribute_exists(openShard)',
            ExpressionAttributeValues: { ':past': new Date(Date.now() - 1000).toISOString() },
          }),
        );
      }
    };
    const warm = payoutRequests(secret.platform_merchant_id, 'bench-cost-warm', C);
    await runWorkerBatches(worker.handler, warm, C);
    await makeDue(warm);
    // Uncounted pass: settles the warm-up payouts and the ones the notifications nudged, so the
    // counted pass below sees only the measured payouts.
    await reconciler.handler(scheduledEvent(), contextFor(FUNCTIONS.reconciler));

    const requests = payoutRequests(secret.platform_merchant_id, 'bench-cost', payoutCount);
    progress(`cost: ${payoutCount} payouts through the worker and the reconciler, counted`);
    counter.reset();
    indexes.reset();
    provider.reset();
    const batchMs = await runWorkerBatches(worker.handler, requests, C);
    const workerRun: Measured = { units: payoutCount, counts: counter.snapshot(), indexWriteUnits: indexes.units, meanMs: mean(batchMs), partitions: indexes.partitions };
    const workerProviderCalls = provider.total();
    await makeDue(requests);
    counter.reset();
    indexes.reset();
    provider.reset();
    const reconcileStarted = performance.now();
    const summary = await reconciler.handler(scheduledEvent(), contextFor(FUNCTIONS.reconciler));
    const reconcileMs = performance.now() - reconcileStarted;
    const reconcileRun: Measured = { units: payoutCount, counts: counter.snapshot(), indexWriteUnits: indexes.units, meanMs: reconcileMs, partitions: indexes.partitions };
    const reconcileProviderCalls = provider.total();
    if (summary.read !== payoutCount || (summary.transitions.SUCCEEDED ?? 0) !== payoutCount) {
      throw new Error(`the counted reconciler pass read ${summary.read} and settled ${summary.transitions.SUCCEEDED ?? 0}, expected ${payoutCount}: ${JSON.stringify(summary)}`);
    }

    // Usage per unit.
    // A webhook costs its receiver and the applier's work after the 200. The applier is counted as one
    // invocation per webhook (a stream batch of one: the worst case at low rates); the stream's
    // reads by a Lambda trigger are free.
    const webhookUsage = (m: Measured, apply: Measured, memoryMb: number, fn: string): UnitUsage => ({
      httpApiRequests: 1,
      lambda: [
        { fn, invocations: 1, billedMs: m.meanMs, memoryMb },
        { fn: 'callback-applier', invocations: 1, billedMs: apply.meanMs, memoryMb: FUNCTIONS.callbackApplier.memoryMb },
      ],
      writeUnits: per(m, m.counts.writeUnits + m.indexWriteUnits) + per(apply, apply.counts.writeUnits + apply.indexWriteUnits),
      readUnits: per(m, m.counts.readUnits) + per(apply, apply.counts.readUnits),
      sqsRequests: per(m, m.counts.calls['SQS.SendMessage'] ?? 0),
      secretsCalls: per(m, m.counts.calls['SecretsManager.GetSecretValue'] ?? 0),
    });
    const notificationUsage = webhookUsage(notifications, notificationApply, FUNCTIONS.payoutNotification.memoryMb, 'payout-notification');
    const kycUsage = webhookUsage(kycCallbacks, kycApply, FUNCTIONS.kycCallback.memoryMb, 'kyc-callback');
    const floorUsage: UnitUsage = {
      httpApiRequests: 1,
      lambda: [{ fn: 'floor', invocations: 1, billedMs: floorRun.meanMs, memoryMb: FUNCTIONS.payoutNotification.memoryMb }],
      writeUnits: per(floorRun, floorRun.counts.writeUnits),
      readUnits: 0,
      sqsRequests: 0,
      secretsCalls: 0,
    };
    // SQS on the payout path is not made by payrelay's code: the producer's send and the event source
    // mapping's receive + delete. Modelled: one SendMessage per payout, one ReceiveMessage and one
    // DeleteMessageBatch per batch of C.
    const sqsModelled = 1 + 2 / C;
    const payoutUsage: UnitUsage = {
      httpApiRequests: 0,
      lambda: [
        { fn: 'payout-worker', invocations: 1 / C, billedMs: workerRun.meanMs, memoryMb: FUNCTIONS.payoutWorker.memoryMb },
        { fn: 'reconciler', invocations: 1 / payoutCount, billedMs: reconcileRun.meanMs, memoryMb: FUNCTIONS.reconciler.memoryMb },
      ],
      writeUnits: per(workerRun, workerRun.counts.writeUnits + workerRun.indexWriteUnits) + per(reconcileRun, reconcileRun.counts.writeUnits + reconcileRun.indexWriteUnits),
      readUnits: per(workerRun, workerRun.counts.readUnits) + per(reconcileRun, reconcileRun.counts.readUnits),
      // The worker's own sends: the first delayed checks, several to a SendMessageBatch when they come together.
      sqsRequests: sqsModelled + per(workerRun, (workerRun.counts.calls['SQS.SendMessage'] ?? 0) + (workerRun.counts.calls['SQS.SendMessageBatch'] ?? 0)),
      secretsCalls: per(workerRun, workerRun.counts.calls['SecretsManager.GetSecretValue'] ?? 0) + per(reconcileRun, reconcileRun.counts.calls['SecretsManager.GetSecretValue'] ?? 0),
    };
    const costs = {
      notification: costPerMillion(notificationUsage),
      kycCallback: costPerMillion(kycUsage),
      floor: costPerMillion(floorUsage),
      payout: costPerMillion(payoutUsage),
    };
    const writes = {
      notification: per(notifications, notifications.counts.dynamoWrites) + per(notificationApply, notificationApply.counts.dynamoWrites),
      kycCallback: per(kycCallbacks, kycCallbacks.counts.dynamoWrites) + per(kycApply, kycApply.counts.dynamoWrites),
      payout: per(workerRun, workerRun.counts.dynamoWrites) + per(reconcileRun, reconcileRun.counts.dynamoWrites),
    };
    const reads = {
      notification: per(notifications, notifications.counts.dynamoReads) + per(notificationApply, notificationApply.counts.dynamoReads),
      kycCallback: per(kycCallbacks, kycCallbacks.counts.dynamoReads) + per(kycApply, kycApply.counts.dynamoReads),
      payout: per(workerRun, workerRun.counts.dynamoReads) + per(reconcileRun, reconcileRun.counts.dynamoReads),
    };
    const providerPerPayout = (workerProviderCalls + reconcileProviderCalls) / payoutCount;
    const payoutIndexUnits = per(workerRun, workerRun.indexWriteUnits) + per(reconcileRun, reconcileRun.indexWriteUnits);
    const burst = burstLoad([
      { measured: notifications, perSecond: BURST.webhooksPerSecond },
      { measured: notificationApply, perSecond: BURST.webhooksPerSecond },
      { measured: kycCallbacks, perSecond: BURST.webhooksPerSecond },
      { measured: kycApply, perSecond: BURST.webhooksPerSecond },
      { measured: workerRun, perSecond: BURST.payoutsPerSecond },
      { measured: reconcileRun, perSecond: BURST.payoutsPerSecond },
    ]);
    const hottest = (kind: 'write' | 'read') => burst.reduce((best, k) => (k[kind] > best[kind] ? k : best), { key: 'none', write: 0, read: 0 });
    const hottestWrite = hottest('write');
    const hottestRead = hottest('read');
    const topKeys = (kind: 'write' | 'read') =>
      [...burst]
        .sort((a, b) => b[kind] - a[kind])
        .slice(0, 5)
        .map((k) => `${k.key}: ${Math.round(k[kind])}`)
        .join('; ');

    const rows: Row[] = [
      {
        metric: 'DynamoDB writes per new webhook, receiver + applier (payout-notification; kyc-callback)',
        value: `${fixed(writes.notification)}; ${fixed(writes.kycCallback)}`,
        target: `<= ${TARGETS.writesPerWebhook}`,
        verdict: verdict(Math.max(writes.notification, writes.kycCallback) <= TARGETS.writesPerWebhook),
      },
      {
        metric: 'DynamoDB reads per new webhook, receiver + applier (payout-notification; kyc-callback)',
        value: `${fixed(reads.notification)}; ${fixed(reads.kycCallback)}`,
        verdict: 'info',
      },
      {
        metric: 'DynamoDB writes per payout (worker + reconciler)',
        value: `${fixed(writes.payout)} (${fixed(per(workerRun, workerRun.counts.dynamoWrites))} + ${fixed(per(reconcileRun, reconcileRun.counts.dynamoWrites))})`,
        target: `<= ${TARGETS.writesPerPayout}`,
        verdict: verdict(writes.payout <= TARGETS.writesPerPayout),
      },
      {
        metric: 'per payout: DynamoDB reads; provider calls; SQS requests',
        value: `${fixed(reads.payout)}; ${fixed(providerPerPayout)}; ${fixed(payoutUsage.sqsRequests)} (modelled)`,
        verdict: 'info',
      },
      {
        metric: 'write units per webhook, table + index, receiver / applier (notification; kyc)',
        value: `${fixed(per(notifications, notifications.counts.writeUnits))} + ${fixed(per(notifications, notifications.indexWriteUnits))} / ${fixed(per(notificationApply, notificationApply.counts.writeUnits))} + ${fixed(per(notificationApply, notificationApply.indexWriteUnits))}; ${fixed(per(kycCallbacks, kycCallbacks.counts.writeUnits))} + ${fixed(per(kycCallbacks, kycCallbacks.indexWriteUnits))} / ${fixed(per(kycApply, kycApply.counts.writeUnits))} + ${fixed(per(kycApply, kycApply.indexWriteUnits))}`,
        reference: `floor ${fixed(floorUsage.writeUnits)}`,
        verdict: 'info',
      },
      {
        metric: 'write units per payout, table + index (worker + reconciler)',
        value: `${fixed(per(workerRun, workerRun.counts.writeUnits) + per(reconcileRun, reconcileRun.counts.writeUnits))} + ${fixed(payoutIndexUnits)}`,
        target: `index <= ${TARGETS.indexWriteUnitsPerPayout}`,
        verdict: verdict(payoutIndexUnits <= TARGETS.indexWriteUnitsPerPayout),
      },
      {
        metric: 'most write units per partition key per second at the burst (table or index, its key)',
        value: `${Math.round(hottestWrite.write)} (${hottestWrite.key})`,
        target: `<= ${TARGETS.partitionWriteUnitsPerSecond}`,
        verdict: verdict(hottestWrite.write <= TARGETS.partitionWriteUnitsPerSecond),
      },
      {
        metric: 'most read units per partition key per second at the burst (table or index, its key)',
        value: `${Math.round(hottestRead.read)} (${hottestRead.key})`,
        target: `<= ${TARGETS.partitionReadUnitsPerSecond}`,
        verdict: verdict(hottestRead.read <= TARGETS.partitionReadUnitsPerSecond),
      },
      {
        metric: 'cost per 1M webhooks: payout-notification',
        value: usd(costs.notification.total as number),
        reference: `floor ${usd(costs.floor.total as number)}`,
        ratio: ratio((costs.notification.total as number) / (costs.floor.total as number)),
        target: `<= ${TARGETS.webhookCostVsFloor}x`,
        verdict: verdict((costs.notification.total as number) / (costs.floor.total as number) <= TARGETS.webhookCostVsFloor),
      },
      {
        metric: 'cost per 1M webhooks: kyc-callback',
        value: usd(costs.kycCallback.total as number),
        reference: `floor ${usd(costs.floor.total as number)}`,
        ratio: ratio((costs.kycCallback.total as number) / (costs.floor.total as number)),
        target: `<= ${TARGETS.webhookCostVsFloor}x`,
        verdict: verdict((costs.kycCallback.total as number) / (costs.floor.total as number) <= TARGETS.webhookCostVsFloor),
      },
      {
        metric: `cost per 1M payouts (provider latency ${L} ms)`,
        value: usd(costs.payout.total as number),
        verdict: 'info',
      },
    ];
    const breakdown = (c: Record<string, number>): string =>
      Object.entries(c)
        .filter(([k]) => k !== 'total')
        .map(([k, v]) => `${k} ${usd(v)}`)
        .join(', ');
    return {
      part: 'cost',
      title: '5. Cost (counted at the SDK clients; AWS list prices)',
      rows,
      data: {
        prices: PRICES,
        webhooksPerKind: n,
        payouts: payoutCount,
        latencyMs: L,
        concurrency: C,
        measured: { notifications, kycCallbacks, floor: floorRun, worker: workerRun, reconciler: reconcileRun, workerProviderCalls, reconcileProviderCalls },
        usage: { notification: notificationUsage, kycCallback: kycUsage, floor: floorUsage, payout: payoutUsage },
        costs,
      },
      summary: {
        writesPerPayout: writes.payout,
        indexWriteUnitsPerPayout: payoutIndexUnits,
        costPer1MWebhooks: Math.max(costs.notification.total as number, costs.kycCallback.total as number),
        costPer1MPayouts: costs.payout.total as number,
        maxPartitionWriteUnitsPerSecond: hottestWrite.write,
        maxPartitionReadUnitsPerSecond: hottestRead.read,
      },
      notes: [
        `Prices: ${PRICES.recorded}. Lambda arm64 $${PRICES.lambdaArmGbSecond} per GB-s + $0.20 per 1M requests; HTTP API $1.00 per 1M; DynamoDB on-demand $0.625 per 1M write units, $0.125 per 1M read units; SQS $0.40 per 1M requests; Secrets Manager $0.05 per 10,000 calls.`,
        `Counted at the clients with an SDK middleware on the handlers' own client singletons (DynamoDB with ReturnConsumedCapacity=TOTAL), over ${n} new webhooks of each kind and ${payoutCount} payouts, after a warm-up (so the cached secrets cost no calls). Provider calls counted on Node's http client channel.`,
        'dynalite reports table write units only; secondary-index writes (events: by-received-shard, listing fields only; payouts: two keys-only indexes and by-state, keys + platform_merchant_id) are added from the item before and after each write, by DynamoDB\'s rules.',
        `Partitions: every DynamoDB call of the counted runs is attributed to the partition key it lands on (the table's key, and for each index entry written or deleted the index's partition key; a Query to the partition its key condition names), in units by DynamoDB's rules (1 write unit per KB of the item or index entry, a failed conditional write included; 0.5 read unit per 4 KB eventually consistent, 1 consistent). Per key, the units per payout or webhook are scaled to the burst: ${Math.round(BURST.payoutsPerSecond)} payouts a second (10,000 a minute) through the worker and the reconciler, and ${BURST.webhooksPerSecond} webhooks a second of each kind, summed. Hottest writes: ${topKeys('write')}. Hottest reads: ${topKeys('read')}.`,
        `Lambda duration: mean measured handler time here, at the memory of shared/config/functions.ts (receivers 256 MB, worker and reconciler 512 MB). Webhook breakdown: notification ${breakdown(costs.notification)}; kyc ${breakdown(costs.kycCallback)}; floor ${breakdown(costs.floor)}.`,
        `Payout breakdown: ${breakdown(costs.payout)}. The worker's Lambda time is mostly waiting on the provider (2 calls of ${L} ms here): on Lambda that wait is billed. Not included: the reconciler's fixed schedule (1,440 runs a day whatever the volume), the order notification the provider sends per payout (one more webhook), CloudWatch Logs and metrics, X-Ray, NAT gateway for static egress.`,
      ],
    };
  } finally {
    await emulators.stop();
  }
};
