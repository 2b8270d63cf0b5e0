import { createHmac, timingSafeEqual } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { createPayoutRepository } from '@shared/adapters/payout-repository';
import type { ProviderSecret } from '@shared/adapters/secrets';
import { FUNCTIONS } from '@shared/config/functions';
import { Payout } from '@shared/domain/payout';
import { DEFAULT_SIGNING_PROFILE, withSignature } from '@shared/signing';
import { kycCallbackEvent, payoutNotificationEvent } from '@test/factories/http-events';
import { BENCH_KYC_SECRET, BENCH_PROVIDER_SECRET, contextFor, startHandlerEnv } from '../lib/local-env';
import { verdict, type Part, type PartResult } from '../lib/part';
import { ms, ratio, summarize, type Summary } from '../lib/stats';

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
 * The same DynamoDB calls as each handler, written by hand (no middy, no Powertools, no domain
 * code): it splits the handler's time into "the calls the design makes" and "everything else".
 */
export function createSameCallsFloors(client: { send(command: unknown): Promise<unknown> }, tables: { events: string; payouts: string; kyc: string }) {
  const putEvent = (pk: string, body: string) =>
    client.send(new PutCommand({ TableName: tables.events, Item: { pk, body, receivedAt: new Date().toISOString() }, ConditionExpression: 'attribute_not_exists(pk)' }));
  const hmacFloor = createFloor((item) => putEvent(String(item.pk), String(item.body)));
  return {
    async notification(body: string): Promise<void> {
      await hmacFloor(body);
      const reference = (JSON.parse(body) as { data: { withdrawal_reference: string } }).data.withdrawal_reference;
      const found = (await client.send(
        new QueryCommand({
          TableName: tables.payouts,
          IndexName: 'by-withdrawal-reference',
          KeyConditionExpression: 'withdrawal_reference = :r',
          ExpressionAttributeValues: { ':r': reference },
        }),
      )) as { Items?: Array<{ pk: string }> };
      for (const item of found.Items ?? []) {
        await client.send(
          new UpdateCommand({
            TableName: tables.payouts,
            Key: { pk: item.pk },
            UpdateExpression: 'SET nextCheckAt = :now',
            ConditionExpression: 'attribute_exists(openShard)',
            ExpressionAttributeValues: { ':now': new Date().toISOString() },
          }),
        );
      }
    },
    async kycCallback(token: string, body: string): Promise<void> {
      const payload = JSON.parse(body) as { user_reference: string; status: string };
      if (token !== BENCH_KYC_SECRET.callback_token) throw new Error('floor: token mismatch');
      await putEvent(`kyc-floor#${payload.user_reference}`, body);
      const key = { pk: `SUBJECT-FLOOR#${payload.user_reference}` };
      const current = (await client.send(new GetCommand({ TableName: tables.kyc, Key: key, ConsistentRead: true }))) as { Item?: { version: number } };
      const version = current.Item?.version ?? 0;
      await client.send(
        new PutCommand({
          TableName: tables.kyc,
          Item: { ...key, phase: payload.status, version: version + 1, updatedAt: new Date().toISOString() },
          ConditionExpression: 'attribute_not_exists(pk) OR version = :v',
          ExpressionAttributeValues: { ':v': version },
        }),
      );
    },
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
  floor: Summary;
  notificationSameCalls: Summary;
  kycCallbackSameCalls: Summary;
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
  const { documentClient } = await import('@shared/adapters/dynamodb-client');
  const eventsTable = process.env.EVENTS_TABLE_NAME as string;
  await seedNotifiedPayouts(process.env.PAYOUTS_TABLE_NAME as string);
  const floor = createFloor((item) =>
    documentClient.send(new PutCommand({ TableName: eventsTable, Item: item, ConditionExpression: 'attribute_not_exists(pk)' })),
  );
  const sameCalls = createSameCallsFloors(documentClient, {
    events: eventsTable,
    payouts: process.env.PAYOUTS_TABLE_NAME as string,
    kyc: process.env.KYC_TABLE_NAME as string,
  });
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
      const body = notificationBody(2_000_000_000 + i);
      const started = performance.now();
      await sameCalls.notification(body);
      return performance.now() - started;
    },
    async (i: number) => {
      const body = kycCallbackBody(i, `${run}-floor`);
      const started = performance.now();
      await sameCalls.kycCallback(token, body);
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
  const [notification, kycCallback, floorSummary, notificationSameCalls, kycCallbackSameCalls] = samples.map((s) => summarize(s)) as [
    Summary,
    Summary,
    Summary,
    Summary,
    Summary,
  ];
  return {
    notification,
    kycCallback,
    floor: floorSummary,
    notificationSameCalls,
    kycCallbackSameCalls,
    notificationRatio: notification.median / floorSummary.median,
    kycCallbackRatio: kycCallback.median / floorSummary.median,
  };
}

export const ingest: Part = async ({ options, progress }): Promise<PartResult> => {
  const emulators = await startHandlerEnv({ stage: 'bench-ingest', logLevel: options.logLevel });
  try {
    const f = await measureIngest(options.ingestIterations, progress);
    const floorText = `${ms(f.floor.median)} (p99 ${ms(f.floor.p99)})`;
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
          reference: `floor ${floorText}`,
          ratio: ratio(f.kycCallbackRatio),
          target: `<= ${INGEST_TARGET}x`,
          verdict: verdict(f.kycCallbackRatio <= INGEST_TARGET),
        },
        {
          metric: 'payout-notification vs the same DynamoDB calls by hand',
          value: ms(f.notification.median),
          reference: `same calls ${ms(f.notificationSameCalls.median)} (p99 ${ms(f.notificationSameCalls.p99)})`,
          ratio: ratio(f.notification.median / f.notificationSameCalls.median),
          verdict: 'info',
        },
        {
          metric: 'kyc-callback vs the same DynamoDB calls by hand',
          value: ms(f.kycCallback.median),
          reference: `same calls ${ms(f.kycCallbackSameCalls.median)} (p99 ${ms(f.kycCallbackSameCalls.p99)})`,
          ratio: ratio(f.kycCallback.median / f.kycCallbackSameCalls.median),
          verdict: 'info',
        },
      ],
      data: { iterations: options.ingestIterations, warmup: WARMUP, ...f },
      summary: { ingestRatio: Math.max(f.notificationRatio, f.kycCallbackRatio) },
      notes: [
        `${options.ingestIterations} measured iterations per variant after ${WARMUP} warm-up ones, interleaved; ratio = median / floor median.`,
        'payout-notification: guard, Authorization key + HMAC verify, conditional PutItem of the event, Query on by-withdrawal-reference, UpdateItem (nudge).',
        'kyc-callback: guard, path token, conditional PutItem of the event, GetItem + conditional PutItem of the KYC subject.',
        'floor: JSON.parse, HMAC-SHA512 verify, one conditional PutItem with the same document client.',
        '"same DynamoDB calls by hand": the floor plus the other calls the handler makes (Query + UpdateItem; GetItem + PutItem), no framework: the rest of the handler time is middy, Powertools logging/metrics and domain code.',
      ],
    };
  } finally {
    await emulators.stop();
  }
};
