import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { hostname, tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { BatchWriteCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalAws, type LocalAws } from '@local/emulators';
import { REPO_ROOT } from '@local/lambda';
import { writeLocalState } from '@local/state';
import { startSimulator, type SimulatorHandle } from '@simulator/index';
import type { PayoutRepository } from '@shared/ports/payouts';
import { Payout } from '@shared/domain/payout';
import { payoutKey, type PayoutIdentity } from '@shared/domain/identity';
import { runPayrelay, type CliRun } from '@test/support/payrelay-cli';

/*
 * The operator's commands for exceptions, run as an operator runs them (bin/payrelay.js), against
 * local AWS emulators and the provider simulator recorded in a state file as `npm start` records them.
 */
const dir = mkdtempSync(join(tmpdir(), 'payrelay-operator-'));
const stateFile = join(dir, 'state.json');
const MERCHANT = 'merchant-op-1';
/** Who runs the CLI here, as the audit records it for the local stack. */
const ACTOR = `${userInfo().username}@${hostname()}`;
let aws: LocalAws;
let sim: SimulatorHandle;
let repository: PayoutRepository;

const cli = (args: string[]): Promise<CliRun> => runPayrelay(stateFile, args);

let counter = 0;
/** A payout the provider holds PENDING (it committed the Payout), stored by payrelay in `state`. */
async function payoutAtProvider(state: 'NEEDS_REVIEW' | 'FAILED'): Promise<PayoutIdentity> {
  counter += 1;
  const identity = { platform_merchant_id: MERCHANT, currency: 'GHS', withdrawal_reference: `OP-${process.pid}-${counter}` };
  const { PayoutServiceClient, credentialsFromSecret } = await import('@shared/providers/payout-client');
  const client = new PayoutServiceClient({ baseUrl: sim.payoutBaseUrl, timeoutMs: 2_000 });
  const creds = credentialsFromSecret(sim.admin.credentials('op', MERCHANT));
  await client.payout({ amount: '12.00', account_number: '0244123456', account_code: 'MTN', currency: 'GHS', withdrawal_reference: identity.withdrawal_reference }, creds);
  client.close();
  const t = new Date(Date.now() - 2 * 24 * 60 * 60_000);
  const submitted = Payout.accept({ identity, amount: '12.00', accountMasked: '******3456', accountCode: 'MTN' }, t)
    .startVerifying(t)
    .startSubmitting(t, 'Kwame Mensah')
    .submitted('PENDING', t);
  const final = state === 'NEEDS_REVIEW' ? submitted.needsReview('still PENDING after 1440 minutes', t) : submitted.failed('provider reports FAILED', t, 'FAILED');
  await repository.createAccepted(final);
  return identity;
}

beforeAll(async () => {
  sim = await startSimulator({ log: 'silent', progression: { settleAfterChecks: 1_000_000 } });
  const partner = sim.admin.createPartner({ partner_code: 'op', email: 'ops@payrelay.test', platform_merchant_id: MERCHANT });
  aws = await startLocalAws({ stage: 'optest', secrets: { provider: { ...partner }, kyc: undefined } });
  Object.assign(process.env, aws.env);
  const env = { ...aws.env, PAYOUT_API_BASE_URL: sim.payoutBaseUrl };
  writeLocalState(
    {
      pid: process.pid,
      startedAt: new Date().toISOString(),
      stage: 'optest',
      urls: { gateway: 'http://127.0.0.1:9', kycCallback: '', payoutNotification: '', payoutApi: sim.payoutBaseUrl, kycApi: '' },
      env,
    },
    stateFile,
  );
  const { createPayoutRepository } = await import('@shared/adapters/payout-repository');
  repository = createPayoutRepository(aws.names.payoutsTable);
});
afterAll(async () => {
  await sim?.stop();
  await aws?.stop();
});

describe('payrelay payouts resolve', () => {
  it('settles a NEEDS_REVIEW payout with its audit entry (who, when, evidence, provider answer)', async () => {
    const id = await payoutAtProvider('NEEDS_REVIEW');
    sim.admin.settlePayout(id, 'failed');
    const out = await cli(['payouts', 'resolve', id.withdrawal_reference, '--as', 'failed', '--evidence', 'provider ticket 4711: cancelled', '--by', 'ama']);
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    expect(out.stdout).toContain(`${id.withdrawal_reference} is now FAILED.`);
    // Piped output is plain text: no colour or other escape codes.
    expect(out.stdout.includes(String.fromCharCode(27))).toBe(false);
    const status = JSON.parse((await cli(['--json', 'payouts', 'status', id.withdrawal_reference])).stdout);
    expect(status[0].state).toBe('FAILED');
    expect(status[0].history.at(-1)).toMatchObject({
      from: 'NEEDS_REVIEW',
      to: 'FAILED',
      by: 'ama',
      // The identity that ran the command (the local stack: OS user@host), beside the name given.
      actor: ACTOR,
      evidence: 'provider ticket 4711: cancelled',
      providerAnswer: 'FAILED (failed)',
    });
    expect(out.stdout).toContain(`ama (as ${ACTOR})`);
    const shown = await cli(['payouts', 'status', id.withdrawal_reference]);
    expect(shown.stdout).toContain(`resolved as FAILED by ama (as ${ACTOR}): provider ticket 4711: cancelled`);
  });

  it('refuses, with exit 6, an outcome the provider contradicts; --force records the override', async () => {
    const id = await payoutAtProvider('NEEDS_REVIEW');
    sim.admin.settlePayout(id, 'succeeded');
    const refused = await cli(['payouts', 'resolve', id.withdrawal_reference, '--as', 'failed', '--evidence', 'customer says no money']);
    expect(refused.code).toBe(6);
    expect(refused.stderr.trim()).toBe(
      "payrelay: not resolved: the provider says COMPLETED: the money was delivered; what settles it is the provider's written confirmation that it never executed this withdrawal_reference (or that it failed), e.g. a support ticket; until then leave it in review. " +
        'Only with that evidence in hand, give it with --evidence and --force: the override is recorded in history, and forcing against a provider that did execute the payout risks paying twice',
    );
    // Still PENDING at the provider: the money may yet move, so FAILED needs --force too.
    const pending = await payoutAtProvider('NEEDS_REVIEW');
    const held = await cli(['payouts', 'resolve', pending.withdrawal_reference, '--as', 'failed', '--evidence', 'customer says no money']);
    expect(held.code).toBe(6);
    expect(held.stderr.trim()).toContain('not resolved: the provider still holds it as PENDING: it could still be delivered; what settles it');
    const forced = await cli(['--json', 'payouts', 'resolve', id.withdrawal_reference, '--as', 'failed', '--evidence', 'bank return R03 on 2026-11-20', '--force']);
    expect(forced.code).toBe(0);
    const result = JSON.parse(forced.stdout);
    expect(result.forced).toBe(true);
    // No --by: the name recorded is the identity running the command, once (no actor beside it).
    expect(result.resolution.by).toBe(ACTOR);
    expect(result.resolution).not.toHaveProperty('actor');
    expect(result.resolution.providerAnswer).toBe('COMPLETED (succeeded); overridden with --force');
  });

  it('answers exit 4 for an unknown reference and exit 2 for a missing --evidence', async () => {
    expect((await cli(['payouts', 'resolve', 'NOPE', '--as', 'failed', '--evidence', 'x'])).code).toBe(4);
    const usage = await cli(['payouts', 'resolve', 'NOPE', '--as', 'failed']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("payrelay: required option '--evidence <text>' not specified");
  });
});

describe('payrelay payouts retry', () => {
  it('creates the linked retry of a FAILED payout and sends it; refuses while the first could still be delivered', async () => {
    const pending = await payoutAtProvider('FAILED');
    const refused = await cli(['payouts', 'retry', pending.withdrawal_reference, '--new-reference', `${pending.withdrawal_reference}-R`]);
    expect(refused.code).toBe(6);
    expect(refused.stderr).toMatch(/could still be delivered/);

    const failed = await payoutAtProvider('FAILED');
    sim.admin.settlePayout(failed, 'failed');
    const ok = await cli(['--json', 'payouts', 'retry', failed.withdrawal_reference, '--new-reference', `${failed.withdrawal_reference}-R`, '--by', 'ama']);
    expect(ok.code).toBe(0);
    const result = JSON.parse(ok.stdout);
    expect(result).toMatchObject({
      sent: true,
      original: { state: 'FAILED', retried_as: `${failed.withdrawal_reference}-R` },
      retry: { state: 'ACCEPTED', retry_of: failed.withdrawal_reference, amount: '12.00', account: 'MTN ******3456' },
    });
  });
});

describe('output is never cut', () => {
  it('payouts list --json of a full page (1,000 payouts, about 370 KB) piped into a parser parses', async () => {
    // `payouts list` pages at 1,000; one page is over five times the 64 KiB a pipe took before exit
    // used to cut. One payout written by the repository, then copies of its item under other
    // references (BatchWriteItem: conditional puts one by one are slow on a loaded machine).
    const t = new Date();
    const first = { platform_merchant_id: MERCHANT, currency: 'GHS', withdrawal_reference: 'BULK-0' };
    await repository.createAccepted(
      Payout.accept({ identity: first, amount: '1.00', accountMasked: '******3456', accountCode: 'MTN' }, t).reject('account not found', t),
    );
    const documentClient = (await import('@shared/adapters/dynamodb-client')).documentClient();
    const item = (await documentClient.send(new GetCommand({ TableName: aws.names.payoutsTable, Key: { pk: payoutKey(first) } }))).Item ?? {};
    const copies = Array.from({ length: 1_199 }, (_, i) => {
      const identity = { ...first, withdrawal_reference: `BULK-${i + 1}` };
      return { PutRequest: { Item: { ...item, ...identity, pk: payoutKey(identity) } } };
    });
    for (let i = 0; i < copies.length; i += 250) {
      await Promise.all(
        Array.from({ length: 10 }, (_, j) => copies.slice(i + j * 25, i + (j + 1) * 25))
          .filter((page) => page.length > 0)
          .map(async (page) => {
            const out = await documentClient.send(new BatchWriteCommand({ RequestItems: { [aws.names.payoutsTable]: page } }));
            expect(Object.keys(out.UnprocessedItems ?? {})).toHaveLength(0);
          }),
      );
    }
    // A real pipe into a separate parser process, as `payrelay ... | jq length` would be.
    // The parser starts reading a second late, as a busy `jq` may: the pipe fills and the rest waits in payrelay.
    const parser = spawn(process.execPath, [
      '-e',
      "let s='';setTimeout(()=>process.stdin.on('data',d=>s+=d).on('end',()=>{const o=JSON.parse(s);console.log(o.payouts.length, s.length)}),1000)",
    ]);
    const payrelay = spawn(process.execPath, [join(REPO_ROOT, 'bin/payrelay.js'), '--json', 'payouts', 'list', '--state', 'REJECTED', '--limit', '1000'], {
      cwd: REPO_ROOT,
      env: { ...process.env, PAYRELAY_STATE_FILE: stateFile },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    payrelay.stdout.pipe(parser.stdin);
    let parsed = '';
    parser.stdout.on('data', (d: Buffer) => (parsed += d.toString()));
    const [code, parserCode] = await Promise.all([
      new Promise<number | null>((resolve) => payrelay.on('close', resolve)),
      new Promise<number | null>((resolve) => parser.on('close', resolve)),
    ]);
    expect(code).toBe(0);
    expect(parserCode).toBe(0);
    const [count, bytes] = parsed.trim().split(' ').map(Number);
    expect(count).toBe(1000);
    expect(bytes).toBeGreaterThan(5 * 65_536);
  }, 120_000);

  it('a reader that stops early (`| head`) ends the output quietly: no stack trace, the command exits 0', async () => {
    const payrelay = spawn(process.execPath, [join(REPO_ROOT, 'bin/payrelay.js'), 'payouts', 'list', '--state', 'REJECTED'], {
      cwd: REPO_ROOT,
      env: { ...process.env, PAYRELAY_STATE_FILE: stateFile },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // The reader is gone before payrelay writes a line: every write to stdout meets a closed pipe (EPIPE).
    payrelay.stdout.destroy();
    let stderr = '';
    payrelay.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => payrelay.on('close', resolve));
    expect(stderr).toBe('');
    expect(code).toBe(0);
  }, 60_000);
});
