import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '@local/lambda';
import { payoutRequestSchema } from '@shared/messages/payout-request';
import * as v from '@shared/validation/valibot';
import { payoutRequestJsonSchema } from '@shared/messages/payout-request-json-schema';

const committed = JSON.parse(readFileSync(join(REPO_ROOT, 'docs/payout-request.schema.json'), 'utf8')) as object;

const good = {
  version: 1,
  platform_merchant_id: 'merchant-1',
  currency: 'GHS',
  withdrawal_reference: 'wd-0001',
  amount: '100.50',
  account_number: '0244123456',
  account_code: 'MTN',
  metadata: { batch: 'b-1' },
};

describe('docs/payout-request.schema.json', () => {
  it('is exactly what the message schema generates (regenerate: payrelay schema payout-request > docs/payout-request.schema.json)', () => {
    expect(committed).toEqual(payoutRequestJsonSchema());
  });

  it('accepts what the worker accepts and refuses what it refuses, for the shapes a schema can express', () => {
    const validate = new Ajv2020({ strict: true }).compile(committed);
    const cases: Array<[string, Record<string, unknown>]> = [
      ['good', good],
      ['no amount', { ...good, amount: undefined }],
      ['lower-case currency', { ...good, currency: 'ghs' }],
      ['letters in the account number', { ...good, account_number: '02441x3456' }],
      ['an unknown field', { ...good, note: 'x' }],
      ['version 2', { ...good, version: 2 }],
      ['a number amount', { ...good, amount: 100.5 }],
      ['a reference of 129 characters', { ...good, withdrawal_reference: 'r'.repeat(129) }],
      ['a non-string metadata value', { ...good, metadata: { batch: 1 } }],
      ['a metadata value of 500 characters', { ...good, metadata: { note: 'x'.repeat(500) } }],
      ['a metadata value of 501 characters', { ...good, metadata: { note: 'x'.repeat(501) } }],
      ['a metadata key of 41 characters', { ...good, metadata: { ['k'.repeat(41)]: 'v' } }],
      ['an empty metadata key', { ...good, metadata: { '': 'v' } }],
      ['50 metadata keys', { ...good, metadata: Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, 'v'])) }],
      ['51 metadata keys', { ...good, metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v'])) }],
    ];
    for (const [name, message] of cases) {
      const body = JSON.parse(JSON.stringify(message)) as unknown;
      expect(validate(body), name).toBe(v.safeParse(payoutRequestSchema, body).success);
    }
    expect(validate(good)).toBe(true);
  });
});
