import { performance } from 'node:perf_hooks';
import { BatchWriteCommand, GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Context, ScheduledEvent } from 'aws-lambda';
import { createPayoutRepository } from '@shared/adapters/payout-repository';
import type { ReconcileSummary } from '@shared/app/reconcile-payouts';
import { FUNCTIONS } from '@shared/config/functions';
import { payoutKey, type PayoutIdentity } from '@shared/domain/identity';
import { Payout } from '@shared/domain/payout';
import { REVIEW_GAUGE_EVERY_MINUTES } from '@shared/observability/metric-names';
import { scheduledEvent } from '@test/factories/scheduled-events';
import { AwsCallCounter } from '../lib/aws-counter';
import { contextFor, startHandlerEnv } from '../lib/local-env';
import { verdict, type Part, type PartResult, type Row } from '../lib/part';
import { ms, ratio, summarize } from '../lib/stats';

export const RECONCILE_TARGET = 1.2;

/**
 * The start of the current review-gauge window: a run scheduled then counts the payouts awaiting
 * review, so every measured run pays for that count (the costliest run, whatever the time of day).
 */
function gaugeWindowStart(): Date {
  const windowMs = REVIEW_GAUGE_EVERY_MINUTES * 60_000;
  return new Date(Math.floor(Date.now() / windowMs) * windowMs);
}
type ScheduledHandler = (event: ScheduledEvent, context: Context) => Promise<ReconcileSummary>;
type Item = Record<string, unknown>;

/**
 * A stored payout item in the repository's own shape: the payout is driven through the domain and
 * written with the repository, then read back raw. Seeded items are copies with another identity.
 */
async function templateItem(client: DynamoDBDocumentClient, table: string, merchant: string, final: boolean): Promise<Item> {
  const repository = createPayoutRepository(table, client);
  const now = new Date(Date.now() - 60 * 60_000);
  const identity: PayoutIdentity = { platform_merchant_id: merchant, currency: 'NGN', withdrawal_reference: `template-${final ? 'final' : 'open'}` };
  let payout = Payout.accept({ identity, amount: '1500.00', accountMasked: '******6789', accountCode: '057', expectedName: 'Adaeze Okafor' }, now);
  await repository.createAccepted(payout);
  const steps: Array<(p: Payout) => Payout> = [
    (p) => p.startVerifying(now),
    (p) => p.startSubmitting(now, 'Adaeze Okafor'),
    (p) => p.submitted('PENDING', now),
  ];
  // A final payout past its reversal watch: what nearly every final payout in a table is (the watched
  // ones are in the index too, but not due, so the reconciler's query never reads them).
  if (final) steps.push((p) => p.succeeded('COMPLETED', now), (p) => p.unwatch(now));
  for (const step of steps) payout = await repository.save(payout, step(payout));
  const out = await client.send(new GetCommand({ TableName: table, Key: { pk: payoutKey(identity) }, ConsistentRead: true }));
  const item = out.Item as Item;
  if (final && 'openShard' in item) throw new Error('a final payout item still carries openShard');
  if (!final && !('openShard' in item)) throw new Error('an open payout item carries no openShard');
  return item;
}

function copyOf(template: Item, reference: string): Item {
  const identity = {
    platform_merchant_id: String(template.platform_merchant_id),
    currency: String(template.currency),
    withdrawal_reference: reference,
  };
  // Due one minute ago, so every open copy is due in the run.
  const due = template.openShard === undefined ? {} : { nextCheckAt: new Date(Date.now() - 60_000).toISOString() };
  return { ...template, pk: payoutKey(identity), withdrawal_reference: reference, ...due };
}

/** BatchWriteItem in pages of 25 (the API's maximum), a few in flight, retrying unprocessed items. */
async function batchPut(client: DynamoDBDocumentClient, table: string, items: readonly Item[]): Promise<void> {
  const pages: Item[][] = [];
  for (let i = 0; i < items.length; i += 25) pages.push(items.slice(i, i + 25) as Item[]);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < pages.length) {
      let requests = (pages[next++] as Item[]).map((Item) => ({ PutRequest: { Item } }));
      while (requests.length > 0) {
        const out = await client.send(new BatchWriteCommand({ RequestItems: { [table]: requests } }));
        requests = (out.UnprocessedItems?.[table] ?? []) as typeof requests;
      }
    }
  };
  await Promise.all(Array.from({ length: 4 }, worker));
}

export const reconcile: Part = async ({ options, progress }): Promise<PartResult> => {
  const sizes = [...options.reconcileFinal].sort((a, b) => a - b);
  const open = options.reconcileOpen;
  const emulators = await startHandlerEnv({ stage: 'bench-reconcile', logLevel: options.logLevel, simulator: {} });
  try {
    const { documentClient: documents, dynamoClient: dynamo, payoutItemWriter } = await import('@shared/adapters/dynamodb-client');
    const documentClient = documents();
    const dynamoClient = dynamo();
    const reconciler = (await import('@functions/reconciler')) as unknown as { handler: ScheduledHandler };
    const counter = new AwsCallCounter();
    // Both DynamoDB clients: the payout item writes go through their own, attached before its first write.
    for (const client of [dynamoClient, payoutItemWriter()]) counter.attach(client, 'DynamoDB', { consumedCapacity: true });
    const table = process.env.PAYOUTS_TABLE_NAME as string;
    const merchant = emulators.provider.platform_merchant_id;
    const finalTemplate = await templateItem(documentClient, table, merchant, true);
    const openTemplate = await templateItem(documentClient, table, merchant, false);
    // The open template is itself due: count it among the open ones.
    const openItems = () => Array.from({ length: open - 1 }, (_, i) => copyOf(openTemplate, `bench-open-${i}`)).concat([copyOf(openTemplate, 'template-open')]);

    let seeded = 1; // the final template
    const results: Array<Record<string, unknown>> = [];
    const seedRates: number[] = [];
    for (const finalCount of sizes) {
      const started = performance.now();
      const SEED_PAGE = 5000;
      while (seeded < finalCount) {
        const count = Math.min(SEED_PAGE, finalCount - seeded);
        await batchPut(documentClient, table, Array.from({ length: count }, (_, i) => copyOf(finalTemplate, `bench-final-${seeded + i}`)));
        seeded += count;
        progress(`reconcile: seeded ${seeded}/${finalCount} final payouts`);
      }
      const seedSeconds = (performance.now() - started) / 1000;
      if (seedSeconds > 0.5) seedRates.push(finalCount / seedSeconds);

      const times: number[] = [];
      let counts = counter.snapshot();
      let summary: ReconcileSummary | undefined;
      // Run 0 is a warm-up (connections, JIT), not counted.
      for (let run = -1; run < options.reconcileRuns; run += 1) {
        await batchPut(documentClient, table, openItems());
        counter.reset();
        const runStarted = performance.now();
        summary = await reconciler.handler(scheduledEvent(gaugeWindowStart()), contextFor(FUNCTIONS.reconciler));
        if (run >= 0) times.push(performance.now() - runStarted);
        counts = counter.snapshot();
        if (summary.read !== open) throw new Error(`the reconciler read ${summary.read} due payouts, expected ${open}`);
        if (summary.awaitingReview === undefined) throw new Error('the reconciler did not count the payouts awaiting review in a run at the start of a gauge window');
        // Its reads are in the figure only if the run made them: one Limit-1 Query per by-state shard.
        if (summary.oldestAwaitingReviewSeconds === undefined) throw new Error('the reconciler did not read the oldest payout awaiting review beside its count');
      }
      const time = summarize(times);
      results.push({
        finalCount,
        open,
        seedSeconds,
        time,
        summary,
        calls: counts.calls,
        itemsRead: counts.itemsRead,
        itemsReadBy: counts.itemsReadBy,
        readUnits: counts.readUnits,
        indexEntriesRead: counts.itemsReadBy.Query ?? 0,
        // DynamoDB bills every Query at least half a unit (eventually consistent); dynalite may report
        // less for a page of small key-only entries, so that minimum is added per Query (an upper bound).
        billedReadUnits: counts.readUnits + 0.5 * (counts.calls['DynamoDB.Query'] ?? 0),
      });
      progress(`reconcile: ${finalCount} final + ${open} open: ${ms(time.median)} per run, ${counts.itemsRead} items read`);
    }

    const rows: Row[] = [];
    for (const r of results) {
      const label = `${Number(r.finalCount).toLocaleString('en-US')} final + ${open} open`;
      const indexRead = Number(r.indexEntriesRead);
      const itemsRead = Number(r.itemsRead);
      rows.push({
        metric: `${label}: index entries read per run`,
        value: String(indexRead),
        reference: `open ${open}`,
        ratio: ratio(indexRead / open),
        target: `<= ${RECONCILE_TARGET}x`,
        verdict: verdict(indexRead / open <= RECONCILE_TARGET),
      });
      rows.push({
        metric: `${label}: items read per run (index + GetItem)`,
        value: String(itemsRead),
        reference: `open ${open}`,
        ratio: ratio(itemsRead / open),
        verdict: 'info',
      });
      const units = Number(r.billedReadUnits);
      rows.push({
        metric: `${label}: read units per run (consistent GetItem 1 each, index Query entries key-only)`,
        value: units.toFixed(1),
        reference: `open ${open}`,
        ratio: ratio(units / open),
        target: `<= ${RECONCILE_TARGET}x`,
        verdict: verdict(units / open <= RECONCILE_TARGET),
      });
      const time = r.time as ReturnType<typeof summarize>;
      rows.push({ metric: `${label}: time per run, median (p99)`, value: `${ms(time.median)} (p99 ${ms(time.p99)})`, verdict: 'info' });
    }
    const small = results[0] as { time: { median: number } };
    const large = results[results.length - 1] as { time: { median: number }; finalCount: number };
    if (results.length > 1) {
      rows.push({
        metric: `time per run, ${large.finalCount.toLocaleString('en-US')} vs ${sizes[0]?.toLocaleString('en-US')} final`,
        value: ms(large.time.median),
        reference: ms(small.time.median),
        ratio: ratio(large.time.median / small.time.median),
        verdict: 'info',
      });
    }
    const seedRate = seedRates.length > 0 ? seedRates.reduce((a, b) => a + b, 0) / seedRates.length : undefined;
    return {
      part: 'reconcile',
      title: `4. Reconcile scaling (reconciler handler, ${open} open payouts due, final ones around them)`,
      rows,
      data: { sizes, open, runs: options.reconcileRuns, results, seedItemsPerSecond: seedRate },
      // Read units, which DynamoDB bills and throttles on (docs/performance.md, "Reconcile reads").
      summary: { reconcileReadsRatio: Math.max(...results.map((r) => Number(r.billedReadUnits) / open)) },
      notes: [
        `The reconciler's own handler (functions/reconciler.ts) against dynalite and the simulator; ${options.reconcileRuns} runs per size, the ${open} open payouts re-seeded as due before each run.`,
        `Every run is scheduled at the start of a ${REVIEW_GAUGE_EVERY_MINUTES}-minute window, so each one also counts the payouts awaiting review (PayoutsAwaitingReview: one COUNT Query per by-state shard) and reads the oldest of them (OldestPayoutAwaitingReviewSeconds: one Query of Limit 1 per shard), as one run of each window does when deployed; both are in the read units.`,
        'Items are seeded with BatchWriteItem as copies of a payout the repository itself wrote (SUCCEEDED past its reversal watch: no openShard; SUBMITTED: openShard + nextCheckAt in the past).',
        'Items read are counted at the client: Query ScannedCount on the sparse open-by-next-check index, plus each GetItem that returned an item. Read units: ReturnConsumedCapacity as dynalite reports it, plus DynamoDB\'s minimum of half a unit per Query (so an upper bound); reconcileReadsRatio is read units per open payout.',
        `Seeding ran at about ${seedRate === undefined ? '?' : Math.round(seedRate)} items/s into dynalite; on a busy machine \`--reconcile-final 1000,20000\` keeps the part short. One warm-up run per size is not counted.`,
      ],
    };
  } finally {
    await emulators.stop();
  }
};
