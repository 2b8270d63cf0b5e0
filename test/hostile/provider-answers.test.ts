import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RetryLaterError, createProcessPayout } from '@shared/app/process-payout';
import { createReconcilePayouts } from '@shared/app/reconcile-payouts';
import type { ProviderCredentials } from '@shared/ports/payouts';
import type { PayoutRequest } from '@shared/messages/payout-request';
import { PayoutServiceClient } from '@shared/providers/payout-client';
import { mapProviderStatus } from '@shared/providers/status-map';
import { memoryRepository } from '@test/property/memory-repository';
import { fuzzSeed } from '@test/property/runs';
import { requestCount } from './hostile-stack';
import { noTelemetry, silentLog, testFingerprints } from '@test/factories/ports';

/*
 * Rule 2 against a hostile provider: the real PayoutServiceClient and use cases talk to a local
 * server that answers Payout and GetPayout with generated answers (any status code, random JSON,
 * garbage, empty, huge, time-outs, resets, look-alike bodies). Whatever comes back, only a refusal
 * on the operator's list of definite refusals makes a payout FAILED at once (every other refusal is
 * UNKNOWN until GetPayout settles it), only an explicit acceptance makes it SUBMITTED, and only a
 * status word the table maps to success (about this payout, with its amount) makes it SUCCEEDED.
 */

interface Answer {
  kind: string;
  status: number;
  body?: string;
  /** Commit, then never answer (the client times out) or drop the connection. */
  drop?: 'hang' | 'reset';
}

const REFERENCE = 'wr-provider-fuzz';

const wordArb = fc.oneof(
  fc.constantFrom('COMPLETED', 'SUCCESSFUL', 'FAILED', 'PENDING', 'INITIATED', 'GATEWAY_ERROR', 'completed', ' Successful ', 'REVERSED', 'PAID', '', 'SUCCESS', 'OK'),
  fc.string({ maxLength: 12 }),
);
const statusArb = fc.constantFrom(200, 200, 200, 201, 202, 204, 301, 400, 401, 403, 404, 408, 409, 422, 429, 500, 502, 503, 504);

/** Well-formed look-alikes of real answers: where a wrong reading would hurt, so most answers are these. */
const lookAlikeArb = (operation: 'payout' | 'getPayout'): fc.Arbitrary<Answer> =>
  operation === 'payout'
    ? fc
        .tuple(fc.oneof(fc.constant(200), statusArb), fc.constantFrom<unknown>(true, false, 'true', 'false', 1, null, undefined), wordArb, fc.constantFrom('ok', 'duplicate withdrawal_reference', 'insufficient balance', ''))
        .map(([status, success, word, message]): Answer => ({ kind: 'look-alike', status, body: JSON.stringify({ success, message, data: { withdrawal_reference: REFERENCE, status: word } }) }))
    : fc
        .tuple(
          fc.oneof(fc.constant(200), statusArb),
          wordArb,
          fc.constantFrom(REFERENCE, '', 'wr-someone-else'),
          fc.constantFrom('10.00', '10', '10.0', '11.00', '', 'ten', undefined),
          fc.constantFrom('GHS', 'NGN', '', undefined),
        )
        .map(([status, word, reference, amount, currency]): Answer => ({
          kind: 'look-alike',
          status,
          body: JSON.stringify({ withdrawal_reference: reference, amount, currency, status: word, customer: {} }),
        }));

const answerArb = (operation: 'payout' | 'getPayout'): fc.Arbitrary<Answer> =>
  fc.oneof(
    { arbitrary: fc.tuple(statusArb, fc.json({ maxDepth: 3 })).map(([status, body]): Answer => ({ kind: 'random-json', status, body })), weight: 1 },
    { arbitrary: fc.tuple(statusArb, fc.string({ maxLength: 60 })).map(([status, body]): Answer => ({ kind: 'garbage', status, body })), weight: 1 },
    { arbitrary: statusArb.map((status): Answer => ({ kind: 'empty', status, body: '' })), weight: 1 },
    { arbitrary: fc.constantFrom<Answer>({ kind: 'hang', status: 200, drop: 'hang' }, { kind: 'reset', status: 200, drop: 'reset' }), weight: 1 },
    { arbitrary: lookAlikeArb(operation), weight: 6 },
  );

const credentials: ProviderCredentials = {
  partnerPublicKey: 'pk-fuzz',
  partnerSecretKey: 'ps-fuzz',
  merchantSecretKey: 'ms-fuzz',
  partnerId: 'partner-fuzz',
  platformMerchantId: 'merchant-fuzz',
};

const request: PayoutRequest = {
  version: 1,
  platform_merchant_id: 'merchant-fuzz',
  currency: 'GHS',
  withdrawal_reference: REFERENCE,
  amount: '10.00',
  account_number: '0244123456',
  account_code: 'MTN',
};

const parse = (body: string | undefined): unknown => {
  try {
    return body === undefined || body.trim() === '' ? undefined : (JSON.parse(body) as unknown);
  } catch {
    return undefined;
  }
};

/**
 * The worker's use case on a fresh in-memory repository, talking to the hostile server through
 * `client`. The one definite refusal on the operator's list: HTTP 400 saying "insufficient balance".
 */
function payoutWorker(client: PayoutServiceClient) {
  const repository = memoryRepository();
  const processPayout = createProcessPayout({
    repository,
    provider: client,
    credentials: { get: async () => credentials },
    fingerprints: testFingerprints,
    clock: { now: () => new Date() },
    telemetry: noTelemetry,
    log: silentLog,
    settings: { nameMatchThreshold: 0.85, kycGating: false, definiteRefusals: [{ status: 400, message: /insufficient balance/i }] },
  });
  return { repository, processPayout };
}

describe('hostile provider answers', () => {
  let server: Server;
  let baseUrl = '';
  // The next answer per path; AccountVerification confirms the holder unless `verify` says otherwise.
  const next: { payout?: Answer; getPayout?: Answer; verify?: Answer } = {};

  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const path = req.url ?? '';
        if (path.includes('AccountVerification')) {
          res.writeHead(next.verify?.status ?? 200, { 'content-type': 'application/json' });
          res.end(next.verify?.body ?? JSON.stringify({ success: true, message: 'ok', data: { account_name: 'Kwame Mensah' } }));
          return;
        }
        const answer = path.includes('GetPayout') ? next.getPayout : next.payout;
        if (!answer || answer.drop === 'hang') return; // never answered: the client's time-out
        if (answer.drop === 'reset') {
          req.socket.destroy();
          return;
        }
        res.writeHead(answer.status, { 'content-type': 'application/json' });
        res.end(answer.body ?? '');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('any Payout answer: FAILED only on a listed definite refusal, SUBMITTED only on an explicit acceptance, nothing thrown but "retry later"', async () => {
    const answers = fc.sample(answerArb('payout'), { numRuns: requestCount(300), seed: fuzzSeed() ?? 77 });
    const client = new PayoutServiceClient({ baseUrl, timeoutMs: 150, keepAlive: false });
    const problems = new Set<string>();
    const states: Record<string, number> = {};
    for (const answer of answers) {
      next.payout = answer;
      const { repository, processPayout } = payoutWorker(client);
      try {
        await processPayout(request);
      } catch (error) {
        if (!(error instanceof RetryLaterError)) problems.add(`${answer.kind} ${answer.status}: threw ${(error as Error).name}`);
      }
      const state = [...repository.items.values()][0]?.state ?? 'none';
      states[state] = (states[state] ?? 0) + 1;
      const body = parse(answer.body) as { success?: unknown; message?: unknown } | undefined;
      const answered = answer.drop === undefined;
      const twoXX = answered && answer.status >= 200 && answer.status < 300;
      // The only definite refusal is the one on the operator's list: HTTP 400 saying "insufficient balance".
      const listed = answered && answer.status === 400 && typeof body?.message === 'string' && /insufficient balance/i.test(body.message);
      if (state === 'FAILED' && !listed) problems.add(`FAILED from an answer not on the list: ${answer.kind} ${answer.status} ${answer.body?.slice(0, 80) ?? answer.drop}`);
      if (state === 'SUBMITTED' && body?.success !== true) problems.add(`SUBMITTED without an explicit acceptance: ${answer.kind} ${answer.status}`);
      if (state === 'SUBMITTED' && !twoXX) problems.add(`SUBMITTED without a 2xx acceptance: ${answer.kind} ${answer.status}`);
      // Every other answer after the call left: UNKNOWN (or SUBMITTING when a reset left no answer to record).
    }
    console.info(`hostile provider, Payout: ${answers.length} answers -> ${JSON.stringify(states)}`);
    expect([...problems]).toEqual([]);
  }, 240_000);

  it('AccountVerification text is bounded: a huge holder name is never paid nor stored, a long message reaches a reason shortened and masked', async () => {
    const client = new PayoutServiceClient({ baseUrl, timeoutMs: 1_000, keepAlive: false });
    const run = async (verify: Answer) => {
      next.verify = verify;
      next.payout = { kind: 'accepted', status: 200, body: JSON.stringify({ success: true, message: 'ok', data: { withdrawal_reference: REFERENCE, status: 'PENDING' } }) };
      const { repository, processPayout } = payoutWorker(client);
      const outcome = await processPayout(request).catch((error: unknown) => error);
      return { outcome, payout: [...repository.items.values()][0] };
    };
    try {
      // 300 KB of "name": it would sit on the payout's one item; Ambiguous, so retried, never paid.
      const huge = await run({ kind: 'huge name', status: 200, body: JSON.stringify({ success: true, data: { account_name: 'K'.repeat(300_000) } }) });
      expect(huge.outcome).toBeInstanceOf(RetryLaterError);
      expect(huge.payout?.state).toBe('SUBMITTING');
      expect(huge.payout?.record.submitRetryAllowed).toBe(true);
      expect(huge.payout?.record.verifiedName).toBeUndefined();
      // No holder, and a message of 100 KB carrying an account number: the reason stays short and masked.
      const noisy = await run({ kind: 'long message', status: 200, body: JSON.stringify({ success: true, message: `no such account 0244123456 ${'x'.repeat(100_000)}`, data: { account_name: ' ' } }) });
      expect(noisy.payout?.state).toBe('REJECTED');
      const reason = noisy.payout?.record.reason ?? '';
      expect(reason.length).toBeLessThan(500);
      expect(reason).toMatch(/^intent withdrawn before any Payout call: account not found: no such account /);
      expect(reason).not.toContain('0244123456');
    } finally {
      next.verify = undefined;
    }
  });

  it('any GetPayout answer: SUCCEEDED or FAILED only from a mapped word about this payout and its amount; never a crash', async () => {
    const answers = fc.sample(answerArb('getPayout'), { numRuns: requestCount(300), seed: (fuzzSeed() ?? 77) + 1 });
    const client = new PayoutServiceClient({ baseUrl, timeoutMs: 150, keepAlive: false });
    const problems = new Set<string>();
    const states: Record<string, number> = {};
    for (const answer of answers) {
      const repository = memoryRepository();
      let clock = Date.now();
      const deps = {
        repository,
        provider: client,
        credentials: { get: async () => credentials },
        clock: { now: () => new Date(clock) },
        telemetry: noTelemetry,
        log: silentLog,
      };
      // A payout the provider accepted (SUBMITTED), then one status check with the hostile answer.
      next.payout = { kind: 'accept', status: 200, body: JSON.stringify({ success: true, message: 'ok', data: { withdrawal_reference: REFERENCE, status: 'PENDING' } }) };
      await createProcessPayout({ ...deps, fingerprints: testFingerprints, settings: { nameMatchThreshold: 0.85, kycGating: false } })(request);
      next.getPayout = answer;
      clock += 2 * 60_000;
      const reconcile = createReconcilePayouts({
        ...deps,
        settings: { reviewAfterMs: 24 * 3_600_000, notFoundGraceMs: 15 * 60_000, resubmitUnknownNotFound: false, submitStaleMs: 5 * 60_000, concurrency: 1, pageSize: 10, budgetMs: 60_000 },
      });
      try {
        await reconcile();
      } catch (error) {
        problems.add(`${answer.kind} ${answer.status}: reconcile threw ${(error as Error).name}`);
      }
      const state = [...repository.items.values()][0]?.state ?? 'none';
      states[state] = (states[state] ?? 0) + 1;
      const body = parse(answer.body) as { status?: unknown; withdrawal_reference?: unknown; amount?: unknown; currency?: unknown } | undefined;
      const readable = answer.drop === undefined && answer.status >= 200 && answer.status < 300 && body !== undefined && body !== null && typeof body === 'object';
      const aboutThis = readable && (body.withdrawal_reference === REFERENCE || body.withdrawal_reference === '' || body.withdrawal_reference === undefined);
      const sameMoney =
        readable &&
        (body.currency === undefined || body.currency === '' || body.currency === 'GHS') &&
        (body.amount === undefined || body.amount === '' || body.amount === '10.00' || body.amount === '10' || body.amount === '10.0');
      const word = readable && typeof body.status === 'string' ? body.status : undefined;
      if (state === 'SUCCEEDED' && !(aboutThis && sameMoney && mapProviderStatus(word) === 'succeeded')) {
        problems.add(`SUCCEEDED from ${answer.kind} ${answer.status} ${answer.body?.slice(0, 100) ?? answer.drop}`);
      }
      if (state === 'FAILED' && !(aboutThis && sameMoney && mapProviderStatus(word) === 'failed')) {
        problems.add(`FAILED from ${answer.kind} ${answer.status} ${answer.body?.slice(0, 100) ?? answer.drop}`);
      }
    }
    console.info(`hostile provider, GetPayout: ${answers.length} answers -> ${JSON.stringify(states)}`);
    expect([...problems]).toEqual([]);
  }, 240_000);
});
