import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '@shared/config/env';
import { workerEnvSchema } from '@shared/config/worker';

/*
 * The worker's KYC gating settings as its handler reads them at module load: with KYC_GATING=on it
 * needs the KYC table, secret and base URL, and the events table (the gate applies a user's stored
 * callbacks not yet applied before it refuses); a missing one fails the cold start, named.
 */

const ENV = {
  PAYOUTS_TABLE_NAME: 'payouts',
  ACCOUNT_KEY_SECRET_ID: 'account-key',
  PAYOUTS_DLQ_URL: 'http://127.0.0.1:9/000000000000/payouts-dlq',
  PAYOUTS_QUEUE_URL: 'http://127.0.0.1:9/000000000000/payouts',
  PAYOUT_CHECKS_QUEUE_URL: 'http://127.0.0.1:9/000000000000/payout-checks',
  PROVIDER_SECRET_ID: 'provider',
  PAYOUT_API_BASE_URL: 'http://127.0.0.1:9',
};
const GATING = { KYC_GATING: 'on', KYC_TABLE_NAME: 'kyc', EVENTS_TABLE_NAME: 'events', KYC_SECRET_ID: 'kyc-secret', KYC_API_BASE_URL: 'http://127.0.0.1:9/kyc' };

describe('KYC_GATING', () => {
  it('is off unless set, and then needs none of the KYC variables', () => {
    expect(loadConfig(workerEnvSchema, ENV).KYC_GATING).toBeUndefined();
  });

  it('on: gives the gate its tables, secret and base URL', () => {
    expect(loadConfig(workerEnvSchema, { ...ENV, ...GATING }).KYC_GATING).toEqual({
      tableName: 'kyc',
      eventsTableName: 'events',
      secretId: 'kyc-secret',
      apiBaseUrl: 'http://127.0.0.1:9/kyc',
    });
  });

  it.each(['KYC_TABLE_NAME', 'EVENTS_TABLE_NAME', 'KYC_SECRET_ID', 'KYC_API_BASE_URL'] as const)('on without %s fails the cold start, naming it', (name) => {
    const env: Record<string, string> = { ...ENV, ...GATING };
    delete env[name];
    expect(() => loadConfig(workerEnvSchema, env)).toThrow(ConfigError);
    expect(() => loadConfig(workerEnvSchema, env)).toThrow(new RegExp(`${name}: is required when KYC_GATING=on`));
  });

  describe('in a bundle built without the gate (process.env.PAYRELAY_KYC_GATE_BUILD is "off")', () => {
    afterEach(() => {
      delete process.env.PAYRELAY_KYC_GATE_BUILD;
    });

    it('on fails the cold start, saying the stage must be deployed with gating: payouts never run ungated', () => {
      process.env.PAYRELAY_KYC_GATE_BUILD = 'off';
      expect(() => loadConfig(workerEnvSchema, { ...ENV, ...GATING })).toThrow(/KYC_GATING: is on, but this bundle was built without the KYC gate/);
    });

    it('off starts as usual', () => {
      process.env.PAYRELAY_KYC_GATE_BUILD = 'off';
      expect(loadConfig(workerEnvSchema, ENV).KYC_GATING).toBeUndefined();
    });
  });
});
