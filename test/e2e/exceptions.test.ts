import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '@local/stack';
import { writeLocalState } from '@local/state';
import type { SimulatorHandle } from '@simulator/index';
import type { Payout, PayoutState } from '@shared/domain/payout';
import type { PayoutRepository } from '@shared/ports/payouts';
import { runPayrelay, type CliRun } from '@test/support/payrelay-cli';
import { localStackPayouts, type LocalStackPayouts } from '@test/support/local-stack-payouts';
import { untilPayoutState } from '@test/support/payout-state';

/*
 * Exceptions on the whole local stack (startLocalStack on free ports: the simulator, dynalite, fauxqs,
 * the secrets stand-in, the gateway, the SQS poller driving the worker, the scheduler driving the
 * reconciler), handled as an operator handles them: bin/payrelay.js in a child process, through a
 * state file recorded as `npm start` records it. Payout requests go on the queue as a backend sends
 * them; nothing here writes a payout by hand. A CLI start costs seconds on a busy machine, so the
 * CLI runs only for the operator's own steps.
 */
const dir = mkdtempSync(join(tmpdir(), 'payrelay-exceptions-'));
const stateFile = join(dir, 'state.json');
/** The merchant of the local stack's provider secret (local/config.json). */
const MERCHANT = 'local-merchant-1';
let stack: LocalStack;
let sim: SimulatorHandle;
let repository: PayoutRepository;
let payouts: LocalStackPayouts;

const cli = (args: string[]): Promise<CliRun> => runPayrelay(stateFile, args);

/** A payout request to the simulator's default good account, as the backend puts it on a queue. */
const payoutRequest = (merchant: string, reference: string) => ({
  version: 1,
  platform_merchant_id: merchant,
  currency: 'GHS',
  withdrawal_reference: reference,
  amount: '12.00',
  account_number: '0244123456',
  account_code: 'MTN',
  expected_name: 'Kwame Mensah',
});

/** Waits until the stack has moved the payout to `state`. */
const until = (reference: string, state: PayoutState, merchant = MERCHANT): Promise<Payout> =>
  untilPayoutState(repository, { platform_merchant_id: merchant, currency: 'GHS', withdrawal_reference: reference }, state);

/** Pays one payout for `merchant` through the stack, to SUCCEEDED. */
async function pay(merchant: string, reference: string): Promise<Payout> {
  await payouts.send(stack.queueUrls.payouts, JSON.stringify(payoutRequest(merchant, reference)));
  return until(reference, 'SUCCEEDED', merchant);
}

/** `payrelay secrets put provider --file` with the given credentials, as the operator puts new keys. */
async function putProviderSecret(secret: object, name: string): Promise<void> {
  const path = join(dir, `${name}.json`);
  writeFileSync(path, JSON.stringify(secret));
  const { code, stderr } = await cli(['secrets', 'put', 'provider', '--file', path]);
  expect(code, stderr).toBe(0);
}

const executionsOf = (reference: string): number | undefined => sim.admin.ledger().find((e) => e.withdrawal_reference === reference)?.executions;

beforeAll(async () => {
  const { startLocalStack } = await import('@local/stack');
  stack = await startLocalStack({
    gatewayPort: 0,
    simulatorPort: 0,
    reconcileEveryMs: 500,
    pollWaitSeconds: 1,
    // A request retried after a slow provider comes back in a second, not 30 (the poison message of
    // the redrive test goes to the DLQ on its first receive, through the worker's own policy).
    visibilityTimeoutSeconds: 1,
    // Payouts settle soon after the provider commits them, so the reconciler settles them in seconds.
    simulatorOptions: { progression: { settleAfterMs: 300 } },
    handlerEnv: { POWERTOOLS_LOG_LEVEL: 'ERROR' },
  });
  sim = stack.simulator as SimulatorHandle;
  payouts = await localStackPayouts(stack);
  repository = payouts.repository;
  writeLocalState({ pid: process.pid, startedAt: new Date().toISOString(), stage: stack.stage, urls: stack.urls, env: stack.env }, stateFile);
  // The worker has the first keys cached once it has paid with them.
  await pay(MERCHANT, `WARM-${process.pid}`);
}, 90_000);
afterAll(async () => {
  payouts?.close();
  await stack?.stop();
});

describe('after `secrets put provider` the next payout uses the new secret', () => {
  it('keys reset at the provider, new keys put: the next payout succeeds (the worker re-reads the secret on the 401)', async () => {
    await putProviderSecret(sim.admin.resetPartnerKeys('PAYRELAY-LOCAL'), 'reset-keys');
    const ref = `ROT-KEYS-${process.pid}`;
    const done = await pay(MERCHANT, ref);
    expect(done.record.history.map((h) => h.to)).toEqual(['ACCEPTED', 'VERIFYING', 'SUBMITTING', 'SUBMITTED', 'SUCCEEDED']);
    expect(executionsOf(ref)).toBe(1);
  }, 60_000);

  it('another merchant put: its next payout succeeds, not REJECTED as misrouted by the cached secret', async () => {
    const other = sim.admin.createPartner({ partner_code: 'PAYRELAY-LOCAL-2', email: 'dev2@payrelay.invalid', platform_merchant_id: 'local-merchant-2' });
    await putProviderSecret(other, 'other-merchant');
    const ref = `ROT-MERCHANT-${process.pid}`;
    try {
      await pay('local-merchant-2', ref);
      expect(executionsOf(ref)).toBe(1);
    } finally {
      // Back to the stack's own merchant for the tests below (and its payouts are paid at once again).
      await putProviderSecret(sim.admin.credentials('PAYRELAY-LOCAL'), 'own-merchant');
    }
  }, 60_000);
});

describe('returned money', () => {
  it('a delivered payout whose money comes back is REVERSED, and `payouts status` shows why', async () => {
    const ref = `REV-${process.pid}`;
    await pay(MERCHANT, ref);
    // The provider reverses it: GetPayout says REVERSED and a REFUND notification reaches the gateway.
    await sim.admin.reversePayout({ platform_merchant_id: MERCHANT, currency: 'GHS', withdrawal_reference: ref });
    await until(ref, 'REVERSED');
    const { code, stdout, stderr } = await cli(['--json', 'payouts', 'status', ref]);
    expect(code, stderr).toBe(0);
    const [shown] = JSON.parse(stdout) as Array<{ state: string; history: Array<{ from?: string; to: string; reason?: string }> }>;
    expect(shown?.state).toBe('REVERSED');
    expect(shown?.history.at(-1)).toMatchObject({ from: 'SUCCEEDED', to: 'REVERSED' });
    expect(shown?.history.at(-1)?.reason).toMatch(/came back/);
    expect(executionsOf(ref)).toBe(1);
  }, 60_000);
});

describe('payouts redrive with a poison message', () => {
  it('ends: the good message is paid, the poison one fails again and stays in the DLQ, where dlq list/show read it and dlq delete drops it with an audit line', async () => {
    const ref = `DLQ-${process.pid}`;
    await payouts.send(stack.queueUrls.deadLetter, JSON.stringify(payoutRequest(MERCHANT, ref)), 'provider was down');
    await payouts.send(stack.queueUrls.deadLetter, '{"version":1,"withdrawal_reference":"POISON","account_number":"0244123456"', 'message body is not JSON');
    const redrive = await cli(['--json', 'payouts', 'redrive', '--wait', '20']);
    // Exit 1: a moved message failed again; the report says so, and the run ended.
    expect(redrive.code, redrive.stderr).toBe(1);
    expect(JSON.parse(redrive.stdout)).toMatchObject({ presentAtStart: 2, moved: 2, failedAgain: 1, skipped: 0 });
    expect(redrive.stderr).toContain('1 moved message(s) failed again');
    await until(ref, 'SUCCEEDED');
    expect(executionsOf(ref)).toBe(1);
    const listed = await cli(['--json', 'dlq', 'list']);
    expect(listed.code, listed.stderr).toBe(0);
    const left = JSON.parse(listed.stdout) as Array<{ id: string; reason?: string }>;
    expect(left.map((m) => m.reason)).toEqual(['message body is not JSON']);
    const id = left[0]?.id ?? '';
    // Its body can be read (the account masked even in a body that does not parse); nothing is consumed.
    const shown = await cli(['--json', 'dlq', 'show', id]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(JSON.parse(shown.stdout).body).toContain('"withdrawal_reference":"POISON"');
    expect(listed.stdout + shown.stdout).not.toContain('0244123456');
    // A person drops it with a reason: one audit line (who, why), and the DLQ is empty.
    const deleted = await cli(['dlq', 'delete', id, '--reason', 'test message, never a payout', '--by', 'ama']);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(JSON.parse(deleted.stderr.trim())).toMatchObject({ message: 'DLQ message deleted by an operator', by: 'ama', deleteReason: 'test message, never a payout' });
    expect(JSON.parse((await cli(['--json', 'dlq', 'list'])).stdout)).toEqual([]);
  }, 90_000);
});
