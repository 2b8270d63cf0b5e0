import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '@shared/config/env';
import { callbackApplierEnvSchema } from '@shared/config/callback-applier';
import { payoutNotificationEnvSchema } from '@shared/config/payout-notification';
import { reconcilerEnvSchema } from '@shared/config/reconciler';
import { workerEnvSchema } from '@shared/config/worker';
import { parsePayoutCheck } from '@shared/messages/payout-check';
import { parsePayoutRequest } from '@shared/messages/payout-request';
import { ProviderAmbiguousError } from '@shared/providers/provider-errors';
import { payoutAcceptedSchema, payoutStatusSchema } from '@shared/providers/payout-client';
import { expectShape } from '@shared/providers/schema';
import * as v from '@shared/validation/valibot';

/*
 * The words every runtime schema reports in (shared/validation/valibot.ts): they name the field and
 * the rule, and never quote the value, which may be an account number or a key.
 */

const ENV = {
  PAYOUTS_TABLE_NAME: 'payouts',
  ACCOUNT_KEY_SECRET_ID: 'account-key',
  PAYOUTS_DLQ_URL: 'dlq',
  PAYOUTS_QUEUE_URL: 'queue',
  PAYOUT_CHECKS_QUEUE_URL: 'checks',
  PROVIDER_SECRET_ID: 'provider',
  PAYOUT_API_BASE_URL: 'http://127.0.0.1:9',
};

const configProblem = (env: Record<string, string | undefined>): string => {
  try {
    loadConfig(workerEnvSchema, env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('expected the configuration to be refused');
};

describe('configuration messages', () => {
  it.each([
    [{ PAYOUTS_TABLE_NAME: undefined }, 'PAYOUTS_TABLE_NAME: is missing'],
    [{ PAYOUTS_TABLE_NAME: '' }, 'PAYOUTS_TABLE_NAME: is empty: it is required'],
    [{ PAYOUTS_TABLE_NAME: '  ' }, 'PAYOUTS_TABLE_NAME: is empty: it is required'],
    [{ KYC_GATING: 'yes' }, 'KYC_GATING: must be one of true, false, 1, 0, on, off'],
    [{ WORKER_CONCURRENCY: 'four' }, 'WORKER_CONCURRENCY: must be a number'],
    [{ WORKER_CONCURRENCY: 'Infinity' }, 'WORKER_CONCURRENCY: must be a number'],
    [{ WORKER_CONCURRENCY: '2.5' }, 'WORKER_CONCURRENCY: must be a whole number'],
    [{ WORKER_CONCURRENCY: '0' }, 'WORKER_CONCURRENCY: must be greater than 0'],
    [{ NAME_MATCH_THRESHOLD: '1.5' }, 'NAME_MATCH_THRESHOLD: must be at most 1'],
    [{ NAME_MATCH_THRESHOLD: '-0.1' }, 'NAME_MATCH_THRESHOLD: must be at least 0'],
  ])('%j: %s', (change, expected) => {
    expect(configProblem({ ...ENV, ...change })).toBe(`invalid configuration: ${expected}`);
  });

  it('reads numbers and words the way the variables are documented, with their defaults', () => {
    const config = loadConfig(workerEnvSchema, { ...ENV, WORKER_CONCURRENCY: ' 7 ', BEARER_PREFIX: 'off', NAME_MATCH_THRESHOLD: '0.5' });
    expect([config.WORKER_CONCURRENCY, config.BEARER_PREFIX, config.NAME_MATCH_THRESHOLD, config.PROVIDER_TIMEOUT_MS, config.PAYOUT_DEFINITE_REFUSALS]).toEqual([7, false, 0.5, 10_000, []]);
  });
});

describe('a variable set but empty (or spaces only) is refused, never read as 0, false or "none"', () => {
  const refused = (change: Record<string, string>, schema: v.GenericSchema = workerEnvSchema): string => {
    try {
      loadConfig(schema, { ...ENV, ...change });
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      return (error as Error).message;
    }
    throw new Error('expected the configuration to be refused');
  };
  const unsetForDefault = (name: string, defaultWords: string) => `invalid configuration: ${name}: is empty: unset it to use the default (${defaultWords}), or give a value`;

  it.each([
    // numbers: Number('') and Number(' ') are 0
    ['a positive whole number', 'WORKER_CONCURRENCY', '', '4'],
    ['a number between bounds, 0 allowed', 'NAME_MATCH_THRESHOLD', ' ', '0.85'],
    // a boolean: a blank is not false
    ['a boolean', 'BEARER_PREFIX', '', 'true'],
    // a JSON setting: a blank is not "no definite refusals"
    ['a JSON list', 'PAYOUT_DEFINITE_REFUSALS', '\t', 'none: every refusal is settled through GetPayout'],
    ['a JSON object', 'PROVIDER_STATUS_MAP', '', 'the built-in status words only'],
    ['a profile name or JSON', 'SIGNING_PROFILE', ' ', 'hmac-sha512/compact-insertion/hex'],
    // a text read only with KYC_GATING=on
    ['an optional text', 'KYC_TABLE_NAME', '', 'none; needed only with KYC_GATING=on'],
  ])('%s (%s=%j)', (_kind, name, value, defaultWords) => {
    expect(refused({ [name]: value })).toBe(unsetForDefault(name, defaultWords));
  });

  it('NOT_FOUND_GRACE_MINUTES= is refused, naming the default, where 0 would let a not-found payout be resubmitted at once', () => {
    // The reconciler reads the stored notifications where "not found" decides: its events table is required.
    const events = { EVENTS_TABLE_NAME: 'events' };
    expect(refused({ ...events, NOT_FOUND_GRACE_MINUTES: '' }, reconcilerEnvSchema)).toBe(unsetForDefault('NOT_FOUND_GRACE_MINUTES', '15'));
    expect(refused({ ...events, RESUBMIT_UNKNOWN_NOT_FOUND: ' ' }, reconcilerEnvSchema)).toBe(unsetForDefault('RESUBMIT_UNKNOWN_NOT_FOUND', 'false'));
  });

  it('a number where 0 is allowed: blank is still refused, and 0 written out is taken', () => {
    const tables = { EVENTS_TABLE_NAME: 'events', KYC_TABLE_NAME: 'kyc', COLLECTIONS_TABLE_NAME: 'collections' };
    expect(refused({ ...tables, APPLY_SWEEP_GRACE_SECONDS: '' }, callbackApplierEnvSchema)).toBe(unsetForDefault('APPLY_SWEEP_GRACE_SECONDS', '60'));
    expect(loadConfig(callbackApplierEnvSchema, { ...ENV, ...tables, APPLY_SWEEP_GRACE_SECONDS: '0' }).APPLY_SWEEP_GRACE_SECONDS).toBe(0);
  });

  it('KEY_ROTATION_WINDOW_HOURS=0 turns the previous keys off, as documented; blank is refused', () => {
    const receiver = { EVENTS_TABLE_NAME: 'events', PAYOUTS_TABLE_NAME: 'payouts', PROVIDER_SECRET_ID: 'provider', QUARANTINE_TABLE_NAME: 'quarantine' };
    expect(loadConfig(payoutNotificationEnvSchema, { ...receiver, KEY_ROTATION_WINDOW_HOURS: '0' }).KEY_ROTATION_WINDOW_HOURS).toBe(0);
    expect(loadConfig(payoutNotificationEnvSchema, receiver).KEY_ROTATION_WINDOW_HOURS).toBe(24);
    expect(refused({ ...receiver, KEY_ROTATION_WINDOW_HOURS: '' }, payoutNotificationEnvSchema)).toBe(unsetForDefault('KEY_ROTATION_WINDOW_HOURS', '24'));
  });

  it('names every blank variable at once', () => {
    expect(refused({ WORKER_CONCURRENCY: '', KYC_GATING: '' })).toBe(
      `${unsetForDefault('KYC_GATING', 'false')}; ${unsetForDefault('WORKER_CONCURRENCY', '4').replace('invalid configuration: ', '')}`,
    );
  });

  it('unset, each takes its documented default', () => {
    const config = loadConfig(workerEnvSchema, ENV);
    expect([config.WORKER_CONCURRENCY, config.NAME_MATCH_THRESHOLD, config.BEARER_PREFIX, config.PAYOUT_DEFINITE_REFUSALS, config.SIGNING_PROFILE.name]).toEqual([
      4,
      0.85,
      true,
      [],
      'hmac-sha512/compact-insertion/hex',
    ]);
  });
});

describe('a setting read by its own parser names the variable once', () => {
  it.each([
    // A shell drops the double quotes of VAR={"status":400}: the line says so.
    ['PAYOUT_DEFINITE_REFUSALS', '[{status: 400}]', "is not valid JSON: Expected property name or '}' in JSON at position 2 (it has no double quotes: in a shell, put the JSON in single quotes)"],
    ['PAYOUT_DEFINITE_REFUSALS', '[{"status": 400,}]', "is not valid JSON: Expected double-quoted property name in JSON at position 16"],
    ['PAYOUT_DEFINITE_REFUSALS', 'insufficient', "is not valid JSON: Unexpected token 'i'"],
    ['PAYOUT_DEFINITE_REFUSALS', '{"status":400}', 'must be a JSON array of {"status": 400, "message": "<pattern>"}'],
    ['PAYOUT_DEFINITE_REFUSALS', '[{"status":429,"message":"slow"}]', '[0].status 429 is never a refusal of the payout (keys, time-out or rate limit)'],
    ['PROVIDER_STATUS_MAP', '{"PAID":"paid"}', 'maps PAID to "paid"; allowed: succeeded, failed, reversed, in_progress, gateway_error, unrecognized'],
    ['SIGNING_PROFILE', '{"algorithm"', 'starts with "{" but is not valid JSON: Expected \':\' after property name in JSON at position 12'],
    ['SIGNING_PROFILE', 'hmac-sha512/compact-insertion/hex/payout', '"payout" is not <operation>=<recipe>'],
  ])('%s=%s', (name, value, words) => {
    expect(configProblem({ ...ENV, [name]: value })).toBe(`invalid configuration: ${name}: ${words}`);
  });
});

describe('message and secret problems', () => {
  const request = { version: 1, platform_merchant_id: 'm-1', currency: 'GHS', withdrawal_reference: 'w-1', amount: '10', account_number: '0241234567', account_code: 'MTN' };
  const problems = (body: unknown): string => {
    try {
      parsePayoutRequest(JSON.stringify(body));
    } catch (error) {
      return (error as Error).message;
    }
    throw new Error('expected the request to be refused');
  };

  it('says what is wrong with each field in words, naming no value', () => {
    expect(problems({ ...request, account_number: 241234567, amount: undefined, metadata: ['7'], currency: 'GHSX', version: 2 })).toBe(
      'invalid payout request: version: must be 1; currency: must be a 3-letter upper-case currency code; amount: is missing; account_number: must be a string (got a number); metadata: must be a JSON object (got an array)',
    );
    expect(problems({ ...request, withdrawal_reference: 'r'.repeat(129), expected_name: '  ', metadata: { batch: 7 } })).toBe(
      'invalid payout request: withdrawal_reference: must be at most 128 characters; expected_name: is empty; metadata.batch: must be a string (got a number)',
    );
    expect(() => parsePayoutCheck(JSON.stringify({ version: 1, platform_merchant_id: 'm', currency: 'GHS', withdrawal_reference: 'w', payoutVersion: 0.5, pin: '1234' }))).toThrow(
      'payout check: payoutVersion: must be a whole number; pin: is not an expected field',
    );
  });

  it('takes a JSON object only where one is expected: an array, a number or null is refused, named as such', () => {
    for (const [body, kind] of [['[]', 'an array'], ['5', 'a number'], ['null', 'null'], ['"x"', 'a string']] as const) {
      expect(() => parsePayoutRequest(body)).toThrow(`invalid payout request: must be a JSON object (got ${kind})`);
    }
    // A 2xx answer the client cannot read is ambiguous, never an accepted payout without fields.
    expect(() => expectShape(payoutAcceptedSchema, [], 'payout')).toThrow(ProviderAmbiguousError);
    expect(() => expectShape(payoutAcceptedSchema, { success: true, data: [] }, 'payout')).toThrow(ProviderAmbiguousError);
    expect(() => expectShape(payoutStatusSchema, ['COMPLETED'], 'getPayout')).toThrow(ProviderAmbiguousError);
    expect(expectShape(payoutAcceptedSchema, { success: true, data: null, extra: 1 }, 'payout')).toEqual({ success: true, data: null, extra: 1 });
  });

  it('never quotes the value it refuses, whatever its type', () => {
    const secretLike = ['SECRET-0241234567', 987654321987, true, { key: 'SECRET-in-object' }, ['SECRET-in-array']];
    const schema = v.object({ a: v.pipe(v.string(), v.regex(/^x$/), v.minLength(40)), b: v.literal('x'), c: v.picklist(['x', 'y']), d: v.pipe(v.number(), v.maxValue(1)) });
    for (const value of secretLike) {
      const result = v.safeParse(schema, { a: value, b: value, c: value, d: value });
      expect(result.success).toBe(false);
      const text = v.describeIssues(result.issues ?? []);
      expect(text).not.toMatch(/SECRET|987654321987|true/);
    }
    const wrongString = v.safeParse(schema, { a: 'SECRET-0241234567', b: 'SECRET', c: 'SECRET', d: 987654321987 });
    expect(v.describeIssues(wrongString.issues ?? [])).toBe('a: must match /^x$/; a: must be at least 40 characters; b: must be "x"; c: must be one of "x", "y"; d: must be at most 1');
  });
});
