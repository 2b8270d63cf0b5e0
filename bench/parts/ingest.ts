import { createHmac, timingSafeEqual } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { createPayoutRepository } from '@shared/adapters/payout-repository';
import type { ProviderSecret } from '@shared/adapters/secrets';
import { FUNCTIONS, LOCAL_APPLY_EVERY_MS, LOCAL_APPLY_IDLE_MAX_MS } from '@shared/config/functions';
import { loadFunction } from '@local/lambda';
import { buildScheduledEvent, startCallbackApplier } from '@local/scheduler';
import { Payout } from '@shared/domain/payout';
import { DEFAULT_SIGNING_PROFILE, withSignature } from '@shared/signing';
import { kycCallbackEvent, payoutNotificationEvent } from '@test/factories/http-events';
import { BENCH_KYC_SECRET, BENCH_PROVIDER_SECRET, contextFor, startHandlerEnv } from '../lib/local-env';
import { verdict, type Part, type PartResult } from '../lib/part';
import { ms, ratio, summarize, type Summary } from '../lib/stats';
import { setTimeout as sleep } from 'node:timers/promises';

type HttpHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;

/** Open payouts the order notifications point at (each notification nudges one of them). */
const OPEN_PAYOUTS = 100;
const WARMUP = 200;
export const INGEST_TARGET = 1.5;

const HMAC_KEY = BENCH_PROVIDER_SECRET.merchant_secret_key + BENCH_PROVIDER_SECRET.partner_secret_key;

/** The i-th order notification: unique content (so it is new, not a duplicate), signed like the provider does. */
export function notificationBody(i: number, secret: ProviderSecret = BENCH_PROVIDER_SECRET): string {
  const secrets = { partnerSecret: secret.partner_secret_key, merchantSecret: secret.merchant_secret_key };
  const reference = `bench-wr-${i % OPEN_PAYOUTS}`;
  const body = {
    status: 'success',
    message: 'Order notification',
    data: {
      withdrawal_reference: reference,
      payment: { status: 'PAID' },
      order_details: { status: 'COMPLETED', partner_order_id: reference, sequence: i },
      virtual_account: { amount: '1500.00', account_name: 'Adaeze Okafor', bank_name: 'Bench Bank', account_number: '******6789' },
    },
  };
  return JSON.stringify(withSignature(body, 'orderNotification', secrets, DEFAULT_SIGNING_PROFILE));
}

/** The i-th KYC callback: a new user entering review ("Callback payload" in the KYC service's documentation). */
export function kycCallbackBody(i: number, run: string): string {
  return JSON.stringify({
    status: 'pending',
    event: 'applicantPending',
    order: `order-${run}-${i}`,
    timestamp: new Date().toISOString(),
    kyc_token: '',
    account: `acct-${i}`,
    user_reference: `bench-user-${run}-${i}`,
    meta_data: { kyc_note: 'user uploaded required documents', kyc_status: 'awaiting_approval' },
    first_name: '',
    last_name: '',
    phone: '',
    email: '',
    country: '',
  });
}

/** Seeds the open payouts the notifications name, through the repository (its own item shape). */
export async function seedNotifiedPayouts(tableName: string, platformMerchantId = BENCH_PROVIDER_SECRET.platform_merchant_id): Promise<void> {
  const repository = createPayoutRepository(tableName);
  const now = new Date();
  for (let i = 0; i < OPEN_PAYOUTS; i += 1) {
    const payout = Payout.accept(
      {
        identity: { platform_merchant_id: platformMerchantId, currency: 'NGN', withdrawal_reference: `bench-wr-${i}` },
        amount: '1500.00',
        accountMasked: '******6789',
        accountCode: '057',
      },
      now,
    );
    await repository.createAccepted(payout);
  }
}

/**
 * The floor: what any receiver of this provider's signed callbacks must do at least, written by
 * hand with the same document client and the same dynalite: parse, re-serialize the body without
 * its signature, HMAC-SHA512 with merchant+partner secret, constant-time compare, one conditional PutItem.
 */
export function createFloor(put: (item: Record<string, unknown>) => Promise<unknown>, hmacKey = HMAC_KEY): (body: string) => Promise<void> {
  return async (body) => {
    const { signature, ...unsigned } = JSON.parse(body) as { signature: string } & Record<string, unknown>;
    const expected = createHmac('sha512', hmacKey).update(JSON.stringify(unsigned)).digest();
    const presented = Buffer.from(signature, 'hex');
    if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) throw new Error('floor: signature mismatch');
    await put({ pk: `floor#${signature.slice(0, 32)}`, body, receivedAt: new Date().toISOString() });
  };
}

/**
 * The KYC route's floor: the path token compared in constant time and one conditional PutItem of
 * the body, by hand with the same document client (no middy, no Powertools, no domain code).
 */
export function createTokenFloor(put: (item: Record<string, unknown>) => Promise<unknown>, expectedToken = BENCH_KYC_SECRET.callback_token) {
  const expected = Buffer.from(expectedToken);
  return async (token: string, body: string): Promise<void> => {
    const presented = Buffer.from(token);
    if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) throw new Error('floor: token mismatch');
    const payload = JSON.parse(body) as { user_reference: string; order: string };
    await put({ pk: `kyc-floor#${payload.order}`, body, receivedAt: new Date().toISOString() });
  };
}

export function check(response: APIGatewayProxyStructuredResultV2, what: string): void {
  const body = JSON.parse(String(response.body ?? '{}')) as { duplicate?: boolean };
  if (response.statusCode !== 200 || body.duplicate !== false) {
    throw new Error(`${what} answered ${response.statusCode} ${String(response.body)}; the benchmark needs new, accepted webhooks`);
  }
}

export interface IngestFigures {
  notification: Summary;
  kycCallback: Summary;
  /** The signed route's floor (HMAC verify + one conditional PutItem). */
  floor: Summary;
  /** The KYC route's floor (token compare + one conditional PutItem). */
  kycFloor: Summary;
  notificationRatio: number;
  kycCallbackRatio: number;
}

/**
 * Runs the three variants interleaved (the order rotates every iteration so none always goes first)
 * and returns the per-call times in milliseconds.
 */
export async function measureIngest(iterations: number, progress: (line: string) => void): Promise<IngestFigures> {
  const notificationModule = (await import('@functions/payout-notification')) as unknown as { handler: HttpHandler };
  const kycModule = (await import('@functions/kyc-callback')) as unknown as { handler: HttpHandler };
  const documentClient = (await import('@shared/adapters/dynamodb-client')).documentClient();
  const eventsTable = process.env.EVENTS_TABLE_NAME as string;
  await seedNotifiedPayouts(process.env.PAYOUTS_TABLE_NAME as string);
  const floor = createFloor((item) =>
    documentClient.send(new PutCommand({ TableName: eventsTable, Item: item, ConditionExpression: 'attribute_not_exists(pk)' })),
  );
  const kycFloor = createTokenFloor((item) =>
    documentClient.send(new PutCommand({ TableName: eventsTable, Item: item, ConditionExpression: 'attribute_not_exists(pk)' })),
  );
  const run = Date.now().toString(36);
  const authorization = BENCH_PROVIDER_SECRET.partner_public_key;
  const token = BENCH_KYC_SECRET.callback_token;

  const variants = [
    async (i: number) => {
      const event = payoutNotificationEvent(notificationBody(i), authorization);
      const context = contextFor(FUNCTIONS.payoutNotification);
      const started = performance.now();
      const response = await notificationModule.handler(event, context);
      const elapsed = performance.now() - started;
      check(response, 'payout-notification');
      return elapsed;
    },
    async (i: number) => {
      const event = kycCallbackEvent(token, kycCallbackBody(i, run));
      const context = contextFor(FUNCTIONS.kycCallback);
      const started = performance.now();
      const response = await kycModule.handler(event, context);
      const elapsed = performance.now() - started;
      check(response, 'kyc-callback');
      return elapsed;
    },
    async (i: number) => {
      const body = notificationBody(1_000_000_000 + i);
      const started = performance.now();
      await floor(body);
      return performance.now() - started;
    },
    async (i: number) => {
      const body = kycCallbackBody(i, `${run}-floor`);
      const started = performance.now();
      await kycFloor(token, body);
      return performance.now() - started;
    },
  ];
  const samples: number[][] = variants.map(() => []);
  const total = WARMUP + iterations;
  for (let i = 0; i < total; i += 1) {
    for (let k = 0; k < variants.length; k += 1) {
      const v = (i + k) % variants.length;
      const elapsed = await (variants[v] as (i: number) => Promise<number>)(i);
      if (i >= WARMUP) (samples[v] as number[]).push(elapsed);
    }
    if (i > 0 && i % 500 === 0) progress(`ingest: ${i}/${total} iterations`);
  }
  const [notification, kycCallback, floorSummary, kycFloorSummary] = samples.map((s) => summarize(s)) as [Summary, Summary, Summary, Summary];
  return {
    notification,
    kycCallback,
    floor: floorSummary,
    kycFloor: kycFloorSummary,
    notificationRatio: notification.median / floorSummary.median,
    kycCallbackRatio: kycCallback.median / kycFloorSummary.median,
  };
}

/** Webhooks sent for the apply-lag figure, and the gap between them. */
const LAG_WEBHOOKS = 300;
const LAG_GAP_MS = 50;

export interface ApplyLag {
  /** From the event's store (its 200 follows at once) to its apply being recorded, in ms. */
  lag: Summary;
  webhooks: number;
}

/**
 * Time from 200 to applied, through the local driver `npm start` uses (startCallbackApplier, nudged
 * after each 200; in AWS the events stream triggers it instead): KYC callbacks and order
 * notifications sent one every LAG_GAP_MS, then each event's appliedAt minus its receivedAt.
 */
export async function measureApplyLag(progress: (line: string) => void): Promise<ApplyLag> {
  const notificationModule = (await import('@functions/payout-notification')) as unknown as { handler: HttpHandler };
  const kycModule = (await import('@functions/kyc-callback')) as unknown as { handler: HttpHandler };
  const documentClient = (await import('@shared/adapters/dynamodb-client')).documentClient();
  const region = process.env.AWS_REGION ?? 'eu-west-1';
  const fn = await loadFunction(FUNCTIONS.callbackApplier, { stage: 'bench-ingest', region });
  // First the ingest part's webhooks, still unapplied (nothing drove the applier then): not part of the figure.
  let drained = 0;
  for (let found = -1; found !== 0; ) {
    found = (await fn.invoke<{ found: number }>(buildScheduledEvent('bench-drain', region))).found;
    drained += found;
  }
  progress(`apply lag: ${drained} events of the ingest runs applied first`);
  const applier = startCallbackApplier({ fn, region, log: progress });
  const run = `lag-${Date.now().toString(36)}`;
  const eventIds: string[] = [];
  try {
    for (let i = 0; i < LAG_WEBHOOKS; i += 1) {
      const response =
        i % 2 === 0
          ? await notificationModule.handler(payoutNotificationEvent(notificationBody(3_000_000_000 + i), BENCH_PROVIDER_SECRET.partner_public_key), contextFor(FUNCTIONS.payoutNotification))
          : await kycModule.handler(kycCallbackEvent(BENCH_KYC_SECRET.callback_token, kycCallbackBody(i, run)), contextFor(FUNCTIONS.kycCallback));
      check(response, 'apply-lag webhook');
      // What npm start's gateway does after a receiver's 200.
      applier.nudge();
      eventIds.push(String((JSON.parse(String(response.body)) as { eventId: string }).eventId));
      await sleep(LAG_GAP_MS);
    }
    // Whatever is still waiting when the last 200 came.
    await applier.runNow();
  } finally {
    await applier.stop();
  }
  const lags: number[] = [];
  for (const eventId of eventIds) {
    const out = await documentClient.send(new GetCommand({ TableName: process.env.EVENTS_TABLE_NAME as string, Key: { pk: eventId } }));
    const item = out.Item as { receivedAt: string; appliedAt?: string } | undefined;
    if (item?.appliedAt === undefined) throw new Error(`apply lag: event ${eventId} was not applied`);
    lags.push(Date.parse(item.appliedAt) - Date.parse(item.receivedAt));
  }
  return { lag: summarize(lags), webhooks: eventIds.length };
}

export const ingest: Part = async ({ options, progress }): Promise<PartResult> => {
  // No stream locally: the applier's sweep drives it and takes events of any age, as in `npm start`.
  const emulators = await startHandlerEnv({ stage: 'bench-ingest', logLevel: options.logLevel, env: { APPLY_SWEEP_GRACE_SECONDS: '0' } });
  try {
    const f = await measureIngest(options.ingestIterations, progress);
    const applyLag = await measureApplyLag(progress);
    const floorText = `${ms(f.floor.median)} (p99 ${ms(f.floor.p99)})`;
    const kycFloorText = `${ms(f.kycFloor.median)} (p99 ${ms(f.kycFloor.p99)})`;
    return {
      part: 'ingest',
      title: '1. Webhook ingest (warm, in process, dynalite)',
      rows: [
        {
          metric: 'payout-notification handler, median (p99)',
          value: `${ms(f.notification.median)} (p99 ${ms(f.notification.p99)})`,
          reference: `floor ${floorText}`,
          ratio: ratio(f.notificationRatio),
          target: `<= ${INGEST_TARGET}x`,
          verdict: verdict(f.notificationRatio <= INGEST_TARGET),
        },
        {
          metric: 'kyc-callback handler, median (p99)',
          value: `${ms(f.kycCallback.median)} (p99 ${ms(f.kycCallback.p99)})`,
          reference: `floor ${kycFloorText}`,
          ratio: ratio(f.kycCallbackRatio),
          target: `<= ${INGEST_TARGET}x`,
          verdict: verdict(f.kycCallbackRatio <= INGEST_TARGET),
        },
        {
          metric: 'time from 200 to applied, p50 / p99 (local driver)',
          value: `${ms(applyLag.lag.median)} / ${ms(applyLag.lag.p99)}`,
          reference: `${applyLag.webhooks} webhooks, one every ${LAG_GAP_MS} ms; nudged after each 200, as in npm start`,
          verdict: 'info',
        },
      ],
      data: { iterations: options.ingestIterations, warmup: WARMUP, ...f, applyLag },
      summary: { ingestRatio: Math.max(f.notificationRatio, f.kycCallbackRatio), applyLagP99Ms: applyLag.lag.p99 },
      notes: [
        `${options.ingestIterations} measured iterations per variant after ${WARMUP} warm-up ones, interleaved; ratio = median / floor median.`,
        'The receivers store and acknowledge; the callback applier applies after the 200 (the nudge, the collection, the KYC subject), so neither handler time includes it.',
        'payout-notification: guard, Authorization key + HMAC verify, conditional PutItem of the event. Floor: JSON.parse, HMAC-SHA512 verify, one conditional PutItem with the same document client.',
        'kyc-callback: guard, path token, conditional PutItem of the event. Floor: JSON.parse, constant-time token compare, one conditional PutItem.',
        `Apply lag: ${applyLag.webhooks} webhooks (half of each kind) sent one every ${LAG_GAP_MS} ms to the applier driven as in npm start (nudged after each 200, and a sweep every ${LOCAL_APPLY_EVERY_MS} ms backing off to ${LOCAL_APPLY_IDLE_MAX_MS} ms when idle); lag = appliedAt - receivedAt of each event (its 200 follows the store at once). In AWS the events stream invokes the applier instead (typically well under a second; not measured here).`,
      ],
    };
  } finally {
    await emulators.stop();
  }
};
