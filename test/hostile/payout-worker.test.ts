import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { payoutKey } from '@shared/domain/identity';
import { InvalidPayoutRequestError, parsePayoutRequest, type PayoutRequestInput } from '@shared/messages/payout-request';
import { payoutRequestEvent, sqsEvent, sqsRecord } from '@test/factories/sqs-events';
import { fuzzSeed } from '@test/property/runs';
import { HOSTILE_MERCHANT, requestCount, startHostileStack, type HostileStack } from './hostile-stack';

/*
 * Hostile SQS messages to the real worker: no crash, no retry loop for a message that can never
 * succeed, no change to an existing payout, and every invalid message accounted for: recorded as a
 * REJECTED payout (a new identity) or sent to the DLQ with its reason.
 */

const SEEDED = [1, 2, 3].map(
  (i): PayoutRequestInput => ({
    version: 1,
    platform_merchant_id: HOSTILE_MERCHANT,
    currency: 'GHS',
    withdrawal_reference: `wr-seed-${i}`,
    amount: '12.50',
    account_number: '0244123456',
    account_code: 'MTN',
    expected_name: 'Kwame Mensah',
  }),
);

const FIELDS = ['version', 'platform_merchant_id', 'currency', 'withdrawal_reference', 'amount', 'account_number', 'account_code', 'expected_name', 'user_reference', 'metadata'] as const;

const hostileValueArb: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom<unknown>(
    undefined,
    null,
    '',
    ' ',
    '-1',
    '0',
    '0.00',
    '1e3',
    '1.234',
    ' 10',
    '1,000',
    'NaN',
    'Infinity',
    1.5,
    10,
    '\ud800',
    'a\u0000b',
    '__proto__',
    'X'.repeat(2_100),
    'Y'.repeat(100_000),
    { __proto__: null },
    ['10.00'],
    { toString: '10.00' },
  ),
);

/**
 * Characters the queue accepts in a message body; anything else is refused at SendMessage, so it is
 * never delivered. fauxqs also refuses the astral planes (real SQS takes them), so they are left out.
 */
const sqsLegal = (text: string): string => text.replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD]/gu, '?');

/** A message body: a mutated valid request (new or existing identity), or anything at all (never empty: SQS refuses that). */
const messageArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc
    .tuple(fc.nat({ max: 9_999 }), fc.boolean(), fc.constantFrom(...FIELDS), hostileValueArb, fc.constantFrom('set', 'set', 'delete', 'extra', 'proto'))
    .map(([n, existing, field, value, how]) => {
      const base: Record<string, unknown> = existing
        ? { ...SEEDED[n % SEEDED.length] }
        : { ...SEEDED[0], withdrawal_reference: `wr-fuzz-${n}`, expected_name: undefined };
      let text: string;
      if (how === 'delete') {
        delete base[field];
        text = JSON.stringify(base);
      } else if (how === 'extra') {
        text = JSON.stringify({ ...base, [`x_${field}`]: value ?? 1 });
      } else if (how === 'proto') {
        text = JSON.stringify(base).replace(/^\{/, `{"__proto__":${JSON.stringify({ [field]: value ?? 1 })},`);
      } else {
        text = JSON.stringify({ ...base, [field]: value });
      }
      return text;
    }) },
  { weight: 1, arbitrary: fc.json({ maxDepth: 3 }).map(sqsLegal) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 200 }).map(sqsLegal) },
  { weight: 1, arbitrary: fc.constantFrom(' ', 'null', '[]', '{}', '"x"', '{"version":1}', '['.repeat(50_000) + ']'.repeat(50_000), `{"a":${'['.repeat(3_000)}${']'.repeat(3_000)}}`) },
  // Identities whose table key would pass the field limits but not DynamoDB's 2048-byte key limit.
  { weight: 1, arbitrary: fc.constantFrom(
    JSON.stringify({ ...SEEDED[0], platform_merchant_id: 'P'.repeat(3_000), amount: 'not-an-amount' }),
    JSON.stringify({ ...SEEDED[0], platform_merchant_id: '\u4e2d'.repeat(128), withdrawal_reference: '\u4e2d'.repeat(128) }),
    JSON.stringify({ ...SEEDED[0], platform_merchant_id: '\u4e2d'.repeat(128), withdrawal_reference: '\u4e2d'.repeat(128), amount: '-5' }),
    // A lone UTF-16 surrogate: valid JSON ("\ud800"), but no URI encoding of it exists.
    JSON.stringify({ ...SEEDED[0], withdrawal_reference: 'wr-lone-\ud800-surrogate' }),
    JSON.stringify({ ...SEEDED[0], withdrawal_reference: 'wr-lone-\udc00-surrogate', amount: 'x' }),
  ) },
);

/** The payout key of an identity, or undefined when none can be made (the worker must cope with that too). */
function keyOf(identity: Parameters<typeof payoutKey>[0]): string | undefined {
  try {
    return payoutKey(identity);
  } catch {
    return undefined;
  }
}

describe('hostile SQS messages to the payout worker', () => {
  let stack: HostileStack;
  const tally = { messages: 0, valid: 0, rejected: 0, deadLettered: 0 };

  beforeAll(async () => {
    stack = await startHostileStack('hostile-worker');
    const response = await stack.worker(payoutRequestEvent(SEEDED));
    expect(response.batchItemFailures).toEqual([]);
  });

  afterAll(async () => {
    await stack?.stop();
    console.info(`hostile worker: ${tally.messages} messages (${tally.valid} valid, ${tally.rejected} recorded REJECTED, ${tally.deadLettered} to the DLQ with a reason)`);
  });

  it('never crashes, never asks for a retry of a hopeless message, never touches an existing payout, and accounts for every invalid message', async () => {
    const bodies = fc.sample(messageArb, { numRuns: requestCount(600), seed: fuzzSeed() ?? 4242 });
    const payoutsTable = stack.aws.names.payoutsTable;
    const before = (await stack.snapshot())[payoutsTable]!;
    const seededKeys = new Set(before.keys());

    // Model of what each invalid message must become, in delivery order.
    const known = new Set(seededKeys);
    let expectDeadLetters = 0;
    let invalidCount = 0;
    const invalidBodies = new Set<string>();
    const expectRejected = new Set<string>();
    const problems = new Set<string>();
    for (let i = 0; i < bodies.length; i += 10) {
      const batch = bodies.slice(i, i + 10);
      for (const body of batch) {
        tally.messages += 1;
        let request: ReturnType<typeof parsePayoutRequest> | undefined;
        let invalid: InvalidPayoutRequestError | undefined;
        try {
          request = parsePayoutRequest(body);
        } catch (error) {
          if (error instanceof InvalidPayoutRequestError) invalid = error;
          else problems.add(`parsePayoutRequest threw ${(error as Error).name} instead of InvalidPayoutRequestError`);
        }
        if (request) {
          tally.valid += 1;
          const key = keyOf(request);
          if (key !== undefined) known.add(key);
        } else if (invalid) {
          invalidCount += 1;
          invalidBodies.add(body);
          const key = invalid.identity ? keyOf(invalid.identity) : undefined;
          if (key !== undefined && !known.has(key)) {
            known.add(key);
            expectRejected.add(key);
          } else {
            expectDeadLetters += 1;
          }
        }
      }
      const event = sqsEvent(batch);
      let response;
      try {
        response = await stack.worker(event);
      } catch (error) {
        problems.add(`the worker threw ${(error as Error).name}: ${(error as Error).message.slice(0, 120)}`);
        continue;
      }
      for (const failure of response.batchItemFailures) {
        const record = event.Records.find((r) => r.messageId === failure.itemIdentifier);
        problems.add(`a record was left for redelivery (a retry loop for a message that cannot succeed): ${(record?.body ?? '?').slice(0, 160)}`);
      }
    }

    expect([...problems]).toEqual([]);
    const after = (await stack.snapshot())[payoutsTable]!;
    // Existing payouts are untouched by anything that followed.
    for (const key of seededKeys) expect(after.get(key), `seeded payout ${key} changed`).toEqual(before.get(key));
    const recorded = new Set<string>();
    for (const [key, item] of after) {
      if (seededKeys.has(key) || !String(item.reason ?? '').startsWith('invalid payout request')) continue;
      recorded.add(key);
      expect(expectRejected.has(key), `REJECTED record for an identity no invalid message introduced: ${key.slice(0, 60)}`).toBe(true);
      expect(item.state).toBe('REJECTED');
      // An invalid message's amount and account are not trusted, so none are stored.
      expect(item.amount).toBe('');
      expect(item.account_masked).toBe('');
    }
    const dead = await stack.drainDeadLetters();
    tally.rejected = recorded.size;
    tally.deadLettered = dead.length;
    let deadInvalid = 0;
    for (const message of dead) {
      expect(message.MessageAttributes?.reason?.StringValue ?? '').not.toBe('');
      // A valid message lands here only when it conflicts with the stored payout of its identity.
      if (invalidBodies.has(message.Body ?? '')) deadInvalid += 1;
      else expect(message.MessageAttributes?.reason?.StringValue ?? '').toMatch(/conflict/);
    }
    // Every invalid message is accounted for: a REJECTED record for its new identity, or the DLQ with a reason.
    expect(recorded.size + deadInvalid).toBe(invalidCount);
    expect(deadInvalid).toBeGreaterThanOrEqual(expectDeadLetters);
  }, 240_000);

  it('odd batches: empty, the same record twice, missing or garbage receive counts; one payout, no failure, no crash', async () => {
    expect(await stack.worker({ Records: [] })).toEqual({ batchItemFailures: [] });
    const body = JSON.stringify({ ...SEEDED[0], withdrawal_reference: 'wr-odd-batch-1' });
    const twice = sqsRecord(body, { messageId: 'odd-1' });
    const noCount = sqsRecord(JSON.stringify({ ...SEEDED[0], withdrawal_reference: 'wr-odd-batch-2' }));
    delete (noCount.attributes as Partial<typeof noCount.attributes>).ApproximateReceiveCount;
    const garbageCount = sqsRecord(JSON.stringify({ ...SEEDED[0], withdrawal_reference: 'wr-odd-batch-3' }));
    garbageCount.attributes.ApproximateReceiveCount = 'many';
    const response = await stack.worker({ Records: [twice, { ...twice }, noCount, garbageCount] });
    expect(response.batchItemFailures).toEqual([]);
    const ledger = stack.sim.admin.ledger().filter((e) => e.withdrawal_reference.startsWith('wr-odd-batch-'));
    expect(ledger.map((e) => [e.withdrawal_reference, e.executions]).sort()).toEqual([
      ['wr-odd-batch-1', 1],
      ['wr-odd-batch-2', 1],
      ['wr-odd-batch-3', 1],
    ]);
  }, 60_000);
});
