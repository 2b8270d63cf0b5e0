import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { recognizeKycCallback, recognizeOrderNotification } from '@shared/domain/callbacks';
import { withSignature } from '@shared/signing';
import { httpApiEvent } from '@test/factories/http-events';
import { payoutRequestEvent } from '@test/factories/sqs-events';
import { fuzzSeed } from '@test/property/runs';
import {
  forgedAuthorizationArb,
  forgedTokenArb,
  headerVariantArb,
  hostileBodyArb,
  type HostileBody,
} from './generators';
import { HOSTILE_CALLBACK_TOKEN, HOSTILE_MERCHANT, requestCount, startHostileStack, type HostileStack } from './hostile-stack';

/*
 * Thousands of generated requests to both webhook handlers, in process. Each must get a clear 4xx
 * or an acknowledgement, never a 5xx or a crash; a forged or malformed request changes nothing; an
 * authentic but odd one is stored verbatim (a recorded rejection) and only a recognized one moves a
 * projection.
 */

const KYC_ROUTE = { routePath: '/callbacks/kyc/{token}' };
const NOTIFICATION_ROUTE = { routePath: '/callbacks/payout-notifications', path: '/callbacks/payout-notifications' };

interface Attempt {
  route: 'kyc' | 'notification';
  authentic: boolean;
  body: HostileBody;
  event: APIGatewayProxyEventV2;
}

function build(route: 'kyc' | 'notification', body: HostileBody, headers: Record<string, string> | undefined, credential: string | undefined): APIGatewayProxyEventV2 {
  const event = httpApiEvent({
    routePath: route === 'kyc' ? KYC_ROUTE.routePath : NOTIFICATION_ROUTE.routePath,
    path: route === 'kyc' ? `/callbacks/kyc/${encodeURIComponent(credential ?? '')}` : NOTIFICATION_ROUTE.path,
    ...(route === 'kyc' && credential !== undefined ? { pathParameters: { token: credential } } : {}),
    headers: {},
  });
  // Set headers verbatim (the factory lower-cases names; repeats in two casings are part of the test).
  const all: Record<string, string> = { ...(headers ?? {}) };
  if (route === 'notification' && credential !== undefined) all.authorization = credential;
  if (headers === undefined && !(route === 'notification' && credential !== undefined)) {
    delete (event as { headers?: unknown }).headers;
  } else {
    event.headers = all;
  }
  if (body.base64 !== undefined) {
    event.body = body.base64;
    event.isBase64Encoded = true;
  } else if (body.text !== undefined) {
    event.body = body.text;
  } else {
    delete event.body;
  }
  return event;
}

/** The body text the receiver sees (base64 decoded as UTF-8, like the guard does). */
const deliveredText = (body: HostileBody): string =>
  body.base64 !== undefined ? Buffer.from(body.base64, 'base64').toString('utf8') : (body.text ?? '');

/** Runs `fn` over items, `limit` at a time. */
async function eachLimited<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) await fn(items[next++] as T);
    }),
  );
}

/** Why an answer is not a clear one (undefined when it is): an allowed status and a JSON body without internals. */
function unclearAnswer(result: APIGatewayProxyStructuredResultV2, allowed: readonly number[], attempt: Attempt): string | undefined {
  const where = `${attempt.route} ${attempt.body.kind} authentic=${attempt.authentic}`.slice(0, 120);
  if (!allowed.includes(result.statusCode ?? 0)) return `${where} answered ${result.statusCode}: ${result.body}`;
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(result.body ?? '') as Record<string, unknown>;
  } catch {
    return `${where} answered a body that is not JSON`;
  }
  if ((result.statusCode ?? 0) >= 400) {
    if (typeof parsed.error !== 'string' || typeof parsed.message !== 'string') return `${where} answered ${result.statusCode} without error and message`;
    if (/\n\s+at |stack/i.test(String(parsed.message))) return `${where} leaked internals: ${String(parsed.message)}`;
  }
  return undefined;
}

describe('hostile input to the webhook receivers', () => {
  let stack: HostileStack;
  const counts = { forged: 0, authentic: 0, statuses: {} as Record<string, number> };

  beforeAll(async () => {
    stack = await startHostileStack('hostile-webhooks');
    // A few real payouts the notifications can name, made by the real worker.
    const requests = [1, 2, 3].map((i) => ({
      version: 1 as const,
      platform_merchant_id: HOSTILE_MERCHANT,
      currency: 'GHS',
      withdrawal_reference: `wr-hostile-${i}`,
      amount: '10.00',
      account_number: '0244123456',
      account_code: 'MTN',
    }));
    const response = await stack.worker(payoutRequestEvent(requests));
    expect(response.batchItemFailures).toEqual([]);
  });

  afterAll(async () => {
    await stack?.stop();
    // The figures docs/reliability.md quotes.
    console.info(`hostile webhooks: ${counts.forged} forged + ${counts.authentic} authentic requests; statuses ${JSON.stringify(counts.statuses)}`);
  });

  const invoke = async (attempt: Attempt): Promise<APIGatewayProxyStructuredResultV2> => {
    const handler = attempt.route === 'kyc' ? stack.kycCallback : stack.payoutNotification;
    let result: APIGatewayProxyStructuredResultV2;
    try {
      result = await handler(attempt.event);
    } catch (error) {
      throw new Error(`${attempt.route} ${attempt.body.kind}: the handler threw ${(error as Error).name}: ${(error as Error).message}`);
    }
    const key = String(result.statusCode);
    counts.statuses[key] = (counts.statuses[key] ?? 0) + 1;
    return result;
  };

  it('forged, unauthenticated or malformed requests get a clear 4xx and change nothing', async () => {
    const total = requestCount(1200);
    const kycArb = fc
      .tuple(hostileBodyArb('kyc'), headerVariantArb, forgedTokenArb(HOSTILE_CALLBACK_TOKEN))
      .map(([body, headers, token]): Attempt => ({ route: 'kyc', authentic: false, body, event: build('kyc', body, headers, token) }));
    const notificationArb = fc
      .tuple(hostileBodyArb('notification'), headerVariantArb, forgedAuthorizationArb(stack.partner.partner_public_key))
      .map(([body, headers, auth]): Attempt => ({ route: 'notification', authentic: false, body, event: build('notification', body, headers, auth) }));
    const attempts = [
      ...fc.sample(kycArb, { numRuns: Math.ceil(total / 2), seed: fuzzSeed() ?? 8101 }),
      ...fc.sample(notificationArb, { numRuns: Math.floor(total / 2), seed: (fuzzSeed() ?? 8101) + 1 }),
    ];
    // A genuine notification body with a forged signature: right key, wrong signature.
    const genuine = withSignature({ status: 'PAID', data: { withdrawal_reference: 'wr-hostile-1' } }, 'orderNotification', {
      partnerSecret: stack.partner.partner_secret_key,
      merchantSecret: stack.partner.merchant_secret_key,
    });
    const tampered = { ...genuine, data: { withdrawal_reference: 'wr-hostile-2' } };
    attempts.push({
      route: 'notification',
      authentic: false,
      body: { kind: 'tampered', text: JSON.stringify(tampered) },
      event: build('notification', { kind: 'tampered', text: JSON.stringify(tampered) }, { 'content-type': 'application/json' }, `Bearer ${stack.partner.partner_public_key}`),
    });

    const before = await stack.snapshot();
    const problems = new Set<string>();
    await eachLimited(attempts, 8, async (attempt) => {
      const problem = unclearAnswer(await invoke(attempt), [400, 401, 413, 415], attempt);
      if (problem) problems.add(problem);
      counts.forged += 1;
    });
    expect([...problems]).toEqual([]);
    const after = await stack.snapshot();
    // The one exception: a notification with the right key but a wrong signature about a known
    // payout makes it due (nextCheckAt, mismatchNudgedAt); GetPayout decides. Nothing else moves.
    const payoutsTable = stack.aws.names.payoutsTable;
    const withoutNudge = (entries: Map<string, Record<string, unknown>>) =>
      [...entries.entries()].map(([pk, { nextCheckAt: _next, mismatchNudgedAt: _nudged, ...item }]) => [pk, item]);
    for (const table of Object.keys(before)) {
      const [was, is] = table === payoutsTable ? [withoutNudge(before[table]!), withoutNudge(after[table]!)] : [[...before[table]!.entries()], [...after[table]!.entries()]];
      expect(is, `table ${table} changed after forged input`).toEqual(was);
    }
    const nudged = [...after[payoutsTable]!.entries()].filter(([pk, item]) => item.nextCheckAt !== before[payoutsTable]!.get(pk)?.nextCheckAt);
    expect(nudged.map(([, item]) => item.withdrawal_reference)).toContain('wr-hostile-2');
  }, 240_000);

  it('authentic callbacks with hostile bodies are acknowledged and stored verbatim, or refused with a 4xx; only recognized ones move state', async () => {
    const total = requestCount(600);
    const secrets = { partnerSecret: stack.partner.partner_secret_key, merchantSecret: stack.partner.merchant_secret_key };
    const kycArb = fc
      .tuple(hostileBodyArb('kyc'), headerVariantArb)
      .map(([body, headers]): Attempt => ({ route: 'kyc', authentic: true, body, event: build('kyc', body, headers, HOSTILE_CALLBACK_TOKEN) }));
    const notificationArb = fc.tuple(hostileBodyArb('notification'), headerVariantArb).map(([body, headers]): Attempt => {
      // Sign what can be signed (a JSON object), so the body reaches storage and recognition.
      let signed: HostileBody = body;
      try {
        const payload = JSON.parse(deliveredText(body)) as unknown;
        if (payload !== null && typeof payload === 'object' && !Array.isArray(payload)) {
          signed = { kind: body.kind, text: JSON.stringify(withSignature(payload, 'orderNotification', secrets)) };
        }
      } catch {
        // not JSON, or too deep to serialize: sent as is
      }
      const authentic = signed !== body;
      return { route: 'notification', authentic, body: signed, event: build('notification', signed, headers, `Bearer ${stack.partner.partner_public_key}`) };
    });
    const attempts = [
      ...fc.sample(kycArb, { numRuns: Math.ceil(total / 2), seed: (fuzzSeed() ?? 8101) + 2 }),
      ...fc.sample(notificationArb, { numRuns: Math.floor(total / 2), seed: (fuzzSeed() ?? 8101) + 3 }),
    ];

    const before = await stack.snapshot();
    const acknowledged = new Map<string, { text: string; attempt: Attempt }>();
    const problems = new Set<string>();
    await eachLimited(attempts, 8, async (attempt) => {
      const result = await invoke(attempt);
      const problem = unclearAnswer(result, attempt.authentic ? [200, 400, 413, 415] : [400, 401, 413, 415], attempt);
      if (problem) problems.add(problem);
      counts.authentic += 1;
      if (result.statusCode === 200) {
        const { eventId } = JSON.parse(result.body ?? '') as { eventId: string };
        acknowledged.set(eventId, { text: deliveredText(attempt.body), attempt });
      }
    });
    expect([...problems]).toEqual([]);
    const after = await stack.snapshot();
    const [payoutsTable, eventsTable, kycTable] = [stack.aws.names.payoutsTable, stack.aws.names.eventsTable, stack.aws.names.kycTable];

    // Events: exactly the acknowledged ones were added, each verbatim; nothing else appeared.
    const added = [...after[eventsTable]!.keys()].filter((pk) => !before[eventsTable]!.has(pk));
    expect(new Set(added)).toEqual(new Set([...acknowledged.keys()].filter((id) => !before[eventsTable]!.has(id))));
    for (const pk of added) {
      const item = after[eventsTable]!.get(pk)!;
      expect(item.body).toBe(acknowledged.get(pk)!.text);
      if (item.recognized === false) expect(String(item.unrecognizedReason ?? '')).not.toBe('');
    }

    // KYC subjects: only users named by a recognized, acknowledged callback may have changed.
    const recognizedUsers = new Set<string>();
    for (const { text, attempt } of acknowledged.values()) {
      if (attempt.route !== 'kyc') continue;
      const recognition = recognizeKycCallback(JSON.parse(text), new Date());
      if (recognition.recognized) recognizedUsers.add(recognition.event.userReference);
    }
    for (const [pk, item] of after[kycTable]!) {
      if (JSON.stringify(before[kycTable]!.get(pk)) === JSON.stringify(item)) continue;
      expect(recognizedUsers.has(String(item.userReference)), `subject ${pk.slice(0, 80)} changed without a recognized callback`).toBe(true);
    }

    // Payouts: a notification is only a hint; at most the next check time moved, and only for a named reference.
    const named = new Set<string>();
    for (const { text, attempt } of acknowledged.values()) {
      if (attempt.route !== 'notification') continue;
      const recognition = recognizeOrderNotification(JSON.parse(text));
      if (recognition.recognized) named.add(recognition.event.withdrawalReference);
    }
    expect([...after[payoutsTable]!.keys()].sort()).toEqual([...before[payoutsTable]!.keys()].sort());
    for (const [pk, item] of after[payoutsTable]!) {
      const { nextCheckAt: nextAfter, ...restAfter } = item;
      const { nextCheckAt: nextBefore, ...restBefore } = before[payoutsTable]!.get(pk)!;
      expect(restAfter).toEqual(restBefore);
      if (nextAfter !== nextBefore) expect(named.has(String(item.withdrawal_reference))).toBe(true);
    }
  }, 240_000);

  it('the sharpest authentic cases each get a clear answer: deep nesting, oversized keys and fields, prototype keys', async () => {
    const secrets = { partnerSecret: stack.partner.partner_secret_key, merchantSecret: stack.partner.merchant_secret_key };
    const signed = (payload: object): HostileBody => ({ kind: 'signed', text: JSON.stringify(withSignature(payload, 'orderNotification', secrets)) });
    const kyc = (kind: string, text: string): Attempt => {
      const body = { kind, text };
      return { route: 'kyc', authentic: true, body, event: build('kyc', body, { 'content-type': 'application/json' }, HOSTILE_CALLBACK_TOKEN) };
    };
    const notification = (kind: string, payload: object): Attempt => {
      const body = { ...signed(payload), kind };
      return { route: 'notification', authentic: true, body, event: build('notification', body, { 'content-type': 'application/json' }, `Bearer ${stack.partner.partner_public_key}`) };
    };
    const callback = (fields: Record<string, unknown>): string =>
      JSON.stringify({ event: 'applicantPending', status: 'pending', user_reference: 'user-sharp-1', timestamp: '2026-03-01T10:00:00Z', ...fields });
    const cases: Attempt[] = [
      kyc('deep array 100k', '['.repeat(100_000) + ']'.repeat(100_000)),
      kyc('deep object 20k', '{"a":'.repeat(20_000) + '1' + '}'.repeat(20_000)),
      kyc('deep meta_data 5k', callback({}).replace(/}$/, `,"meta_data":${'{"a":'.repeat(5_000)}1${'}'.repeat(5_000)}}`)),
      kyc('user_reference 2100 chars', callback({ user_reference: 'U'.repeat(2_100) })),
      kyc('user_reference 200k chars', callback({ user_reference: 'U'.repeat(200_000) })),
      kyc('unknown status 200k chars', callback({ status: 'S'.repeat(200_000) })),
      kyc('unknown status object 120k', callback({ status: { s: 'S'.repeat(120_000) } })),
      kyc('kyc_note 200k chars', callback({ status: 'completed', meta_data: { kyc_status: 'approved', kyc_note: 'N'.repeat(200_000) } })),
      kyc('__proto__ user', '{"__proto__":{"user_reference":"user-proto"},"status":"pending","user_reference":"__proto__"}'),
      kyc('constructor user', callback({ user_reference: 'constructor' })),
      kyc('lone surrogate user', callback({ user_reference: 'user-\ud800-lone' })),
      notification('withdrawal_reference 2100 chars', { data: { withdrawal_reference: 'W'.repeat(2_100) } }),
      notification('withdrawal_reference 200k chars', { data: { withdrawal_reference: 'W'.repeat(200_000) } }),
      notification('deep data 1k', { data: JSON.parse('{"a":'.repeat(1_000) + '1' + '}'.repeat(1_000)) as unknown }),
      notification('lone surrogate reference', { data: { withdrawal_reference: 'wr-\udc00-lone' } }),
      notification('__proto__ reference', JSON.parse('{"data":{"__proto__":{"withdrawal_reference":"wr-hostile-1"}}}') as object),
    ];
    const problems: string[] = [];
    for (const attempt of cases) {
      const problem = unclearAnswer(await invoke(attempt), [200, 400, 413], attempt);
      if (problem) problems.push(`${attempt.body.kind}: ${problem}`);
    }
    expect(problems).toEqual([]);
  }, 120_000);

  it('logged no secret, and refused without an error-level line', () => {
    const secrets = [HOSTILE_CALLBACK_TOKEN, stack.partner.partner_secret_key, stack.partner.merchant_secret_key, stack.partner.partner_public_key];
    for (const line of stack.logLines) {
      for (const secret of secrets) expect(line.includes(secret), 'a secret reached the log').toBe(false);
    }
    const errors = stack.logLines.filter((l) => /"level":"(ERROR|CRITICAL)"/.test(l));
    expect(errors.slice(0, 3)).toEqual([]);
  });
});
