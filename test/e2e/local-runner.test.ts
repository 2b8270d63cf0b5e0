import { GetQueueAttributesCommand, SQSClient, SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { APIGatewayProxyEventV2, SQSEvent } from 'aws-lambda';
import type { FunctionDefinition, RouteDefinition } from '@shared/config/functions';
import { startLocalAws, type LocalAws } from '@local/emulators';
import { startGateway, type GatewayHandle } from '@local/gateway';
import { loadFunction, type LocalFunction } from '@local/lambda';
import { buildScheduledEvent, startScheduler } from '@local/scheduler';
import { startSqsPoller, successfulRecords } from '@local/sqs-poller';
import { createDeadLetterQueue } from '@shared/adapters/dead-letter';
import { redriveDeadLetters } from '@shared/app/dead-letters';
import { recordedCalls } from './fixtures/recording-handler';
import { silentLog } from '@test/factories/ports';

/*
 * The local stand-ins for API Gateway, the SQS event source mapping and the schedule, driven with a
 * recording handler module (loaded the way the real handlers are) against fauxqs over HTTP.
 */
const fixture = {
  id: 'kyc-callback',
  entry: 'test/e2e/fixtures/recording-handler.ts',
  timeoutSeconds: 5,
  memoryMb: 128,
  callsProvider: false,
} as const satisfies FunctionDefinition;

const routes: RouteDefinition[] = [{ method: 'POST', path: '/callbacks/kyc/{token}', functionId: 'kyc-callback' }, { method: 'POST', path: '/plain', functionId: 'kyc-callback' }];

let fn: LocalFunction;
beforeAll(async () => {
  fn = await loadFunction(fixture, { stage: 'test', region: 'eu-west-1' });
});
beforeEach(() => {
  recordedCalls().length = 0;
});

describe('gateway (HTTP API v2)', () => {
  let gateway: GatewayHandle;
  const lines: string[] = [];
  /** Answers of 2xx the gateway reported (npm start nudges its callback applier on each). */
  let stored = 0;
  beforeAll(async () => {
    gateway = await startGateway({ port: 0, routes, functions: new Map([['kyc-callback', fn]]), log: (l) => lines.push(l), onStored: () => (stored += 1) });
  });
  afterAll(() => gateway.close());

  it('invokes the handler with a v2 event: path parameters, lower-cased headers, query, text body, source IP', async () => {
    const res = await fetch(`${gateway.url}/callbacks/kyc/tok%2Den?a=1&a=2&b=x`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Custom': 'V', Cookie: 'c1=1; c2=2' },
      body: '{"status":"init"}',
    });
    expect(res.status).toBe(201);
    expect(res.headers.get('x-echo')).toBe('yes');
    const event = recordedCalls()[0]?.event as unknown as APIGatewayProxyEventV2;
    expect(event.version).toBe('2.0');
    expect(event.routeKey).toBe('POST /callbacks/kyc/{token}');
    expect(event.rawPath).toBe('/callbacks/kyc/tok%2Den');
    expect(event.pathParameters).toEqual({ token: 'tok-en' });
    expect(event.rawQueryString).toBe('a=1&a=2&b=x');
    expect(event.queryStringParameters).toEqual({ a: '1,2', b: 'x' });
    expect(event.headers['content-type']).toBe('application/json');
    expect(event.headers['x-custom']).toBe('V');
    expect(event.cookies).toEqual(['c1=1', 'c2=2']);
    expect(event.body).toBe('{"status":"init"}');
    expect(event.isBase64Encoded).toBe(false);
    expect(event.requestContext.http.sourceIp).toBe('127.0.0.1');
    expect(event.requestContext.http.method).toBe('POST');
    const context = recordedCalls()[0]?.context;
    expect(context?.functionName).toBe('payrelay-test-kyc-callback');
    expect(context?.getRemainingTimeInMillis()).toBeGreaterThan(0);
    expect(context?.getRemainingTimeInMillis()).toBeLessThanOrEqual(5000);
  });

  it('base64-encodes a binary body, as API Gateway does', async () => {
    await fetch(`${gateway.url}/callbacks/kyc/t`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: Buffer.from([0, 1, 2, 255]) });
    const event = recordedCalls()[0]?.event as unknown as APIGatewayProxyEventV2;
    expect(event.isBase64Encoded).toBe(true);
    expect(Buffer.from(event.body ?? '', 'base64')).toEqual(Buffer.from([0, 1, 2, 255]));
  });

  it('answers 404 for a route the API does not define, without invoking anything', async () => {
    const before = stored;
    const wrongPath = await fetch(`${gateway.url}/callbacks/other`, { method: 'POST', body: '{}' });
    const nearMiss = await fetch(`${gateway.url}/Callbacks//KYC/near-miss-token?x=1`, { method: 'POST', body: '{}' });
    expect(nearMiss.status).toBe(404);
    const wrongMethod = await fetch(`${gateway.url}/callbacks/kyc/t`, { method: 'GET' });
    expect(wrongPath.status).toBe(404);
    expect(wrongMethod.status).toBe(404);
    expect(await wrongPath.json()).toEqual({ message: 'Not Found' });
    expect(recordedCalls()).toHaveLength(0);
    expect(stored).toBe(before);
  });

  it('turns a thrown error into 500 without leaking it, and a plain return value into JSON 200', async () => {
    const before = stored;
    const crash = await fetch(`${gateway.url}/callbacks/kyc/t`, { method: 'POST', body: 'throw' });
    expect(crash.status).toBe(500);
    expect(await crash.text()).toBe('{"message":"Internal Server Error"}');
    expect(stored).toBe(before);
    const plain = await fetch(`${gateway.url}/plain`, { method: 'POST' });
    expect(plain.status).toBe(200);
    expect(await plain.json()).toEqual({ ok: true });
    // Reported once the answer is sent: the 2xx of a receiver means a stored callback to apply.
    expect(stored).toBe(before + 1);
  });

  it('answers headers over the size limit 431 with a body and a log line, not a bare refusal', async () => {
    const res = await fetch(`${gateway.url}/callbacks/kyc/t`, { method: 'POST', headers: { 'x-long': 'a'.repeat(100_000) }, body: '{}' });
    expect(res.status).toBe(431);
    expect(await res.json()).toEqual({ message: 'Request Header Fields Too Large' });
    expect(lines).toContain('gateway: request refused before routing -> 431 (request headers over the size limit)');
  });

  it('keeps the KYC callback token out of the access log', () => {
    expect(lines.some((l) => l.includes('/callbacks/kyc/***'))).toBe(true);
    expect(lines.some((l) => l.includes('tok%2Den'))).toBe(false);
    expect(lines.some((l) => l.includes('/Callbacks//KYC/***'))).toBe(true);
    expect(lines.some((l) => l.includes('near-miss-token'))).toBe(false);
  });
});

describe('event source mapping rules', () => {
  const records = [{ messageId: 'a' }, { messageId: 'b' }] as SQSEvent['Records'];
  it('deletes all but the reported failures, and nothing when a failure names an unknown id', () => {
    expect(successfulRecords(records, { batchItemFailures: [{ itemIdentifier: 'b' }] }).map((r) => r.messageId)).toEqual(['a']);
    expect(successfulRecords(records, { batchItemFailures: [] })).toHaveLength(2);
    expect(successfulRecords(records, undefined)).toHaveLength(2);
    expect(successfulRecords(records, { batchItemFailures: [{ itemIdentifier: 'zzz' }] })).toHaveLength(0);
    expect(successfulRecords(records, { batchItemFailures: [{ itemIdentifier: '' }] })).toHaveLength(0);
  });
});

describe('SQS poller against fauxqs', () => {
  let aws: LocalAws;
  let sqs: SQSClient;
  beforeAll(async () => {
    aws = await startLocalAws({ stage: 'pollertest', visibilityTimeoutSeconds: 1, maxReceiveCount: 2 });
    sqs = new SQSClient({
      region: 'eu-west-1',
      endpoint: aws.endpoints.sqs,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      useQueueUrlAsEndpoint: false,
    });
  });
  afterAll(async () => {
    sqs.destroy();
    await aws.stop();
  });

  const depth = async (url: string): Promise<number> => {
    const out = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'] }),
    );
    return Number(out.Attributes?.ApproximateNumberOfMessages ?? 0) + Number(out.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0);
  };

  it('deletes successes, redelivers failures and lets the redrive policy move a poison message to the DLQ', async () => {
    for (const body of ['ok-1', 'ok-2', 'fail-me']) await sqs.send(new SendMessageCommand({ QueueUrl: aws.queueUrls.payouts, MessageBody: body }));
    const poller = await startSqsPoller({ sqs, queueUrl: aws.queueUrls.payouts, fn, region: 'eu-west-1', waitSeconds: 1 });
    try {
      const deadline = Date.now() + 20_000;
      while ((await depth(aws.queueUrls.deadLetter)) < 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
      expect(await depth(aws.queueUrls.deadLetter)).toBe(1);
      expect(await depth(aws.queueUrls.payouts)).toBe(0);
    } finally {
      await poller.stop();
    }
    const bodies = recordedCalls().flatMap((c) => (c.event as unknown as SQSEvent).Records.map((r) => `${r.body}#${r.attributes.ApproximateReceiveCount}`));
    expect(bodies.filter((b) => b.startsWith('ok-'))).toHaveLength(2);
    expect(bodies.filter((b) => b.startsWith('fail-me'))).toEqual(['fail-me#1', 'fail-me#2']);
    const record = (recordedCalls()[0]?.event as unknown as SQSEvent).Records[0];
    expect(record?.eventSource).toBe('aws:sqs');
    expect(record?.eventSourceARN).toMatch(/^arn:aws:sqs:.*payrelay-pollertest-payouts$/);
    expect(poller.stats.deleted).toBe(2);
  });

  it('redrive moves DLQ messages back to the queue and counts them', async () => {
    await sqs.send(new SendMessageCommand({ QueueUrl: aws.queueUrls.deadLetter, MessageBody: 'second' }));
    const before = await depth(aws.queueUrls.deadLetter);
    const dlq = createDeadLetterQueue(aws.queueUrls.deadLetter, aws.queueUrls.payouts, sqs);
    const result = await redriveDeadLetters({ dlq, log: silentLog, runId: 'run-1' });
    expect(result).toEqual({ presentAtStart: before, moved: before, failedAgain: 0, skipped: 0, held: [], notLookedUp: [], runId: 'run-1' });
    expect(await depth(aws.queueUrls.deadLetter)).toBe(0);
    expect(await depth(aws.queueUrls.payouts)).toBe(before);
  });
});

describe('scheduler', () => {
  it('invokes the target with EventBridge scheduled events on its interval', async () => {
    const event = buildScheduledEvent('rule-x', 'eu-west-1', new Date('2026-01-02T03:04:05.678Z'));
    expect(event).toMatchObject({ 'detail-type': 'Scheduled Event', source: 'aws.events', time: '2026-01-02T03:04:05Z', detail: {} });
    expect(event.resources[0]).toBe('arn:aws:events:eu-west-1:000000000000:rule/rule-x');
    const scheduler = startScheduler({ fn, everyMs: 50, region: 'eu-west-1' });
    await new Promise((r) => setTimeout(r, 300));
    await scheduler.stop();
    const runs = recordedCalls().filter((c) => c.event.source === 'aws.events');
    expect(runs.length).toBeGreaterThanOrEqual(2);
    expect(scheduler.stats).toMatchObject({ errors: 0 });
  });

  it('with a back-off, waits twice as long after each idle run, and a nudge runs it at once', async () => {
    // Idle runs at about 20, 60, 140, 300, 620 ms ...: a fixed 20 ms schedule would run about 50 times in a second.
    const scheduler = startScheduler({ fn, everyMs: 20, region: 'eu-west-1', backoff: { idleMaxMs: 60_000, busy: () => false } });
    try {
      await new Promise((r) => setTimeout(r, 1000));
      const idleRuns = scheduler.stats.runs;
      expect(idleRuns).toBeGreaterThanOrEqual(2);
      expect(idleRuns).toBeLessThanOrEqual(7);
      // The next idle run is over a second away; a nudge does not wait for it.
      const nudged = Date.now();
      scheduler.nudge();
      while (scheduler.stats.runs === idleRuns && Date.now() - nudged < 5000) await new Promise((r) => setTimeout(r, 5));
      expect(scheduler.stats.runs).toBe(idleRuns + 1);
      expect(Date.now() - nudged).toBeLessThan(1000);
    } finally {
      await scheduler.stop();
    }
  });

  it('with a back-off, keeps its shortest wait while runs find work', async () => {
    const scheduler = startScheduler({ fn, everyMs: 20, region: 'eu-west-1', backoff: { idleMaxMs: 60_000, busy: () => true } });
    await new Promise((r) => setTimeout(r, 500));
    await scheduler.stop();
    expect(scheduler.stats.runs).toBeGreaterThanOrEqual(8);
  });
});
