import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { callbackApplierEnvSchema } from '@shared/config/callback-applier';
import { kycCatchUpEnvSchema } from '@shared/config/kyc-catch-up';
import { payoutNotificationEnvSchema } from '@shared/config/payout-notification';
import { reconcilerEnvSchema } from '@shared/config/reconciler';
import { webhookEnvSchema } from '@shared/config/webhook';
import { workerEnvSchema } from '@shared/config/worker';

/*
 * Every variable a function's settings read is a row of docs/architecture.md's table ("Environment
 * variables"): an operator who meets one in a start-up error finds there what it means and its default.
 */
const SCHEMAS = { workerEnvSchema, reconcilerEnvSchema, webhookEnvSchema, callbackApplierEnvSchema, kycCatchUpEnvSchema, payoutNotificationEnvSchema };

describe('docs/architecture.md, "Environment variables"', () => {
  const table = readFileSync(new URL('../../../docs/architecture.md', import.meta.url), 'utf8')
    .split('## Environment variables')[1]
    ?.split('\n### ')[0] ?? '';
  const documented = new Set([...table.matchAll(/^\| ([^|]+) \|/gm)].flatMap((row) => [...(row[1] ?? '').matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1])));

  it.each(Object.entries(SCHEMAS))('documents every variable %s reads', (_name, schema) => {
    expect(Object.keys(schema.entries).filter((name) => !documented.has(name))).toEqual([]);
  });
});
