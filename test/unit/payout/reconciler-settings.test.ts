import { describe, expect, it } from 'vitest';
import { payoutProviderFrom } from '@shared/adapters/payout-provider';
import { GATEWAY_ERROR_REVIEW_MINUTES_DEFAULT } from '@shared/app/reconcile-payouts';
import { ConfigError, loadConfig } from '@shared/config/env';
import { reconcileSettingsFrom, reconcilerEnvSchema } from '@shared/config/reconciler';

/*
 * The reconciler's status-word settings as its handler reads them at module load: the gateway-error
 * review window (GATEWAY_ERROR_REVIEW_MINUTES) and the status table in force (PROVIDER_STATUS_MAP),
 * which the start-up log shows word by word.
 */

const ENV = {
  PAYOUTS_TABLE_NAME: 'payouts',
  PAYOUT_CHECKS_QUEUE_URL: 'http://127.0.0.1:9/000000000000/payout-checks',
  EVENTS_TABLE_NAME: 'events',
  PROVIDER_SECRET_ID: 'provider',
  PAYOUT_API_BASE_URL: 'http://127.0.0.1:9',
};

describe('GATEWAY_ERROR_REVIEW_MINUTES', () => {
  it('defaults to 2 hours, well inside the 24-hour review window', () => {
    const config = loadConfig(reconcilerEnvSchema, ENV);
    expect(config.GATEWAY_ERROR_REVIEW_MINUTES).toBe(GATEWAY_ERROR_REVIEW_MINUTES_DEFAULT);
    expect(GATEWAY_ERROR_REVIEW_MINUTES_DEFAULT).toBe(120);
    expect(config.REVIEW_AFTER_MINUTES).toBe(1440);
  });

  it('takes whole minutes', () => {
    expect(loadConfig(reconcilerEnvSchema, { ...ENV, GATEWAY_ERROR_REVIEW_MINUTES: '30' }).GATEWAY_ERROR_REVIEW_MINUTES).toBe(30);
  });

  it.each(['two hours', '0', '-5', '1.5'])('fails the cold start on %j, naming the variable', (value) => {
    expect(() => loadConfig(reconcilerEnvSchema, { ...ENV, GATEWAY_ERROR_REVIEW_MINUTES: value })).toThrow(ConfigError);
    expect(() => loadConfig(reconcilerEnvSchema, { ...ENV, GATEWAY_ERROR_REVIEW_MINUTES: value })).toThrow(/GATEWAY_ERROR_REVIEW_MINUTES: /);
  });
});

describe('REVIEW_AFTER_MINUTES', () => {
  it('takes a fraction of a minute, so a local stack reaches NEEDS_REVIEW in seconds', () => {
    expect(loadConfig(reconcilerEnvSchema, { ...ENV, REVIEW_AFTER_MINUTES: '0.1' }).REVIEW_AFTER_MINUTES).toBe(0.1);
  });

  it.each(['a day', '0', '-5'])('fails the cold start on %j, naming the variable', (value) => {
    expect(() => loadConfig(reconcilerEnvSchema, { ...ENV, REVIEW_AFTER_MINUTES: value })).toThrow(/REVIEW_AFTER_MINUTES: /);
  });
});

describe('RECONCILE_EVERY_MINUTES', () => {
  it('is the schedule the review gauge counts by: one minute unset (the deployed default), a fraction for a local stack', () => {
    expect(reconcileSettingsFrom(loadConfig(reconcilerEnvSchema, ENV)).scheduleEveryMs).toBe(60_000);
    expect(reconcileSettingsFrom(loadConfig(reconcilerEnvSchema, { ...ENV, RECONCILE_EVERY_MINUTES: '360' })).scheduleEveryMs).toBe(360 * 60_000);
    expect(reconcileSettingsFrom(loadConfig(reconcilerEnvSchema, { ...ENV, RECONCILE_EVERY_MINUTES: '0.005' })).scheduleEveryMs).toBe(300);
  });

  it.each(['', 'hourly', '0', '-1'])('fails the cold start on %j, naming the variable', (value) => {
    expect(() => loadConfig(reconcilerEnvSchema, { ...ENV, RECONCILE_EVERY_MINUTES: value })).toThrow(/RECONCILE_EVERY_MINUTES: /);
  });
});

describe('the status table in force', () => {
  const wiring = (statusMap?: string) => {
    const env = loadConfig(reconcilerEnvSchema, { ...ENV, ...(statusMap === undefined ? {} : { PROVIDER_STATUS_MAP: statusMap }) });
    return payoutProviderFrom(env).settings;
  };

  it('is in the settings the handlers log at start, defaults and overrides merged', () => {
    expect(wiring().statusMap).toBe(
      'succeeded: COMPLETED SUCCESSFUL; failed: FAILED; reversed: REVERSED REFUNDED REFUND; in_progress: PENDING INITIATED; gateway_error: GATEWAY_ERROR UPSTREAM_GATEWAY_ERROR GATEWAY_NOT_AVAILABLE',
    );
    expect(wiring().statusMapOverridden).toBe(false);
    const overridden = wiring('{"PAID":"succeeded","GATEWAY_NOT_AVAILABLE":"in_progress"}');
    expect(overridden.statusMapOverridden).toBe(true);
    expect(overridden.statusMap).toContain('succeeded: COMPLETED SUCCESSFUL PAID;');
    expect(overridden.statusMap).toContain('in_progress: PENDING INITIATED GATEWAY_NOT_AVAILABLE;');
  });

  it('fails at module load on a bad PROVIDER_STATUS_MAP, naming it once', () => {
    expect(() => wiring('{"PAID":"delivered"}')).toThrow(ConfigError);
    expect(() => wiring('{"PAID":"delivered"}')).toThrow(
      'invalid configuration: PROVIDER_STATUS_MAP: maps PAID to "delivered"; allowed: succeeded, failed, reversed, in_progress, gateway_error, unrecognized',
    );
  });
});
