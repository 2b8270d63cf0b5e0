import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DeleteMessageBatchCommand, GetQueueAttributesCommand, PurgeQueueCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startLocalAws, type LocalAws } from '@local/emulators';
import { REPO_ROOT } from '@local/lambda';
import { writeLocalState } from '@local/state';

/*
 * `payrelay payouts enqueue` as an operator runs it (bin/payrelay.js in a child process) against local
 * emulators recorded in a state file: the merchant check, and runs stopped by a real signal.
 */
const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'payrelay-enqueue-'));
const stateFile = join(dir, 'state.json');
const MERCHANT = 'local-merchant-1';
const HEADER = 'platform_merchant_id,currency,withdrawal_reference,amount,account_number,account_code';
let aws: LocalAws;

interface CliResult {
  code: number | null;
  signal?: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

const cliArgs = (args: string[]): string[] => [join(REPO_ROOT, 'bin/payrelay.js'), ...args];
const cliEnv = (): NodeJS.ProcessEnv => ({ ...process.env, PAYRELAY_STATE_FILE: stateFile });

async function cli(args: string[]): Promise<CliResult> {
  try {
    const out = await run(process.execPath, cliArgs(args), { cwd: REPO_ROOT, env: cliEnv(), maxBuffer: 64 * 1024 * 1024 });
    return { code: 0, stdout: out.stdout, stderr: out.stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** Runs the CLI and sends it `signal` once `when` holds (checked every 20 ms). */
function cliStoppedBy(args: string[], signal: NodeJS.Signals, when: () => Promise<boolean>): Promise<CliResult> {
  const child = spawn(process.execPath, cliArgs(args), { cwd: REPO_ROOT, env: cliEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const exited = new Promise<CliResult>((resolve) => child.on('close', (code, sig) => resolve({ code, signal: sig, stdout, stderr })));
  let done = false;
  void exited.then(() => (done = true));
  const poll = async (): Promise<void> => {
    while (!done) {
      if (await when()) {
        child.kill(signal);
        return;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  void poll();
  return exited;
}

const file = (name: string, text: string): string => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};
const rows = (prefix: string, n: number, merchant = MERCHANT): string =>
  [HEADER, ...Array.from({ length: n }, (_, i) => `${merchant},GHS,${prefix}-${i + 1},${(i % 90) + 1}.50,0244123456,MTN`)].join('\n');

async function sqs() {
  return (await import('@shared/adapters/sqs-client')).sqsClient();
}

async function queueDepth(): Promise<number> {
  const out = await (await sqs()).send(new GetQueueAttributesCommand({ QueueUrl: aws.queueUrls.payouts, AttributeNames: ['ApproximateNumberOfMessages'] }));
  return Number(out.Attributes?.ApproximateNumberOfMessages ?? 0);
}

/** Takes every message off the payouts queue; returns how many name each withdrawal_reference. */
async function drainQueue(): Promise<Map<string, number>> {
  const client = await sqs();
  const counts = new Map<string, number>();
  for (;;) {
    const out = await client.send(new ReceiveMessageCommand({ QueueUrl: aws.queueUrls.payouts, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }));
    const messages = out.Messages ?? [];
    if (messages.length === 0) return counts;
    for (const m of messages) {
      const ref = (JSON.parse(m.Body ?? '{}') as { withdrawal_reference: string }).withdrawal_reference;
      counts.set(ref, (counts.get(ref) ?? 0) + 1);
    }
    await client.send(
      new DeleteMessageBatchCommand({ QueueUrl: aws.queueUrls.payouts, Entries: messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })) }),
    );
  }
}

/** The states of the stored payouts whose reference starts with `prefix`. */
async function storedStates(prefix: string): Promise<Map<string, string>> {
  const documentClient = (await import('@shared/adapters/dynamodb-client')).documentClient();
  const { ScanCommand } = await import('@aws-sdk/lib-dynamodb');
  const states = new Map<string, string>();
  let start: Record<string, unknown> | undefined;
  do {
    const out = await documentClient.send(new ScanCommand({ TableName: aws.names.payoutsTable, ExclusiveStartKey: start }));
    for (const item of out.Items ?? []) {
      const ref = String(item.withdrawal_reference ?? '');
      if (ref.startsWith(`${prefix}-`)) states.set(ref, String(item.state));
    }
    start = out.LastEvaluatedKey;
  } while (start);
  return states;
}

beforeAll(async () => {
  aws = await startLocalAws({
    stage: 'enqtest',
    secrets: { provider: { partner_public_key: 'pk', partner_secret_key: 'sk', merchant_secret_key: 'mk', partner_id: 'P-1', platform_merchant_id: MERCHANT } },
  });
  Object.assign(process.env, aws.env);
  writeLocalState(
    { pid: process.pid, startedAt: new Date().toISOString(), stage: 'enqtest', urls: { gateway: 'http://127.0.0.1:9', kycCallback: '', payoutNotification: '', payoutApi: '', kycApi: '' }, env: aws.env },
    stateFile,
  );
});
afterAll(async () => {
  await aws?.stop();
});
beforeEach(async () => {
  await (await sqs()).send(new PurgeQueueCommand({ QueueUrl: aws.queueUrls.payouts }));
});

describe('payrelay payouts enqueue: the merchant', () => {
  it("refuses rows for another merchant than the deployment's, listing them, before anything is created (--dry-run too)", async () => {
    const text = [HEADER, `${MERCHANT},GHS,M-1,10,0244123456,MTN`, 'm1,GHS,M-2,10,0244123456,MTN', 'm1,GHS,M-3,10,0244123456,MTN', 'other,GHS,M-4,1,0244123456,MTN'].join('\n');
    const path = file('merchants.csv', text);
    for (const extra of [[], ['--dry-run']]) {
      const { code, stderr } = await cli(['payouts', 'enqueue', '--file', path, ...extra]);
      expect(code).not.toBe(0);
      expect(stderr).toContain(`row 2 (line 3) platform_merchant_id: "m1" is not this deployment's merchant (${MERCHANT})`);
      expect(stderr).toContain('row 4 (line 5) platform_merchant_id: "other"');
      expect(stderr.trim().split('\n').at(-1)).toBe(
        `payrelay: 3 error(s) in merchants.csv; 3 row(s) name another merchant than ${MERCHANT} (this deployment's): m1 (2), other (1); nothing was enqueued`,
      );
    }
    expect(await storedStates('M')).toEqual(new Map());
    expect(await queueDepth()).toBe(0);
  });

  it('checks a file offline with --dry-run --merchant, and refuses a --merchant that is not the deployment’s', async () => {
    const path = file('offline.csv', rows('O', 3, 'm1'));
    const offline = await cli(['--json', 'payouts', 'enqueue', '--file', path, '--dry-run', '--merchant', 'm1']);
    expect(offline.code).toBe(0);
    expect(JSON.parse(offline.stdout)).toEqual({ valid: true, rows: 3, merchant: 'm1' });
    const wrong = await cli(['payouts', 'enqueue', '--file', path, '--merchant', 'm1']);
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toContain(`--merchant m1 is not the merchant of local stack`);
    expect(await storedStates('O')).toEqual(new Map());
  });

  it('reports a missing required column once', async () => {
    const path = file('nocode.csv', ['platform_merchant_id,currency,withdrawal_reference,amount,account_number', ...Array.from({ length: 30 }, (_, i) => `${MERCHANT},GHS,H-${i},1,0244123456`)].join('\n'));
    const { code, stderr } = await cli(['payouts', 'enqueue', '--file', path]);
    expect(code).not.toBe(0);
    expect(stderr.trim().split('\n')).toEqual([
      'line 1: missing required column(s) in the header: account_code',
      'payrelay: 1 error(s) in nocode.csv; nothing was enqueued',
    ]);
  });
});

describe('payrelay payouts enqueue: a file run again', () => {
  it('sends nothing for a row whose reference is recorded with other data, says which fields, exits 3; the same rows are skipped', async () => {
    const first = file('first.csv', [HEADER, `${MERCHANT},GHS,C-1,10.00,0244123456,MTN`, `${MERCHANT},GHS,C-2,20.00,0244123456,MTN`].join('\n'));
    expect((await cli(['payouts', 'enqueue', '--file', first])).code).toBe(0);
    await drainQueue();
    // C-1 corrected (amount), C-2 to another account with the same last four digits, C-3 new.
    const corrected = file(
      'corrected.csv',
      [HEADER, `${MERCHANT},GHS,C-1,15.00,0244123456,MTN`, `${MERCHANT},GHS,C-2,20.00,0555123456,MTN`, `${MERCHANT},GHS,C-3,30.00,0244123456,MTN`].join('\n'),
    );
    const again = await cli(['--json', 'payouts', 'enqueue', '--file', corrected]);
    expect(again.code).toBe(3);
    const report = JSON.parse(again.stdout) as { enqueued: string[]; skipped: unknown[]; conflicts: Array<{ withdrawal_reference: string; differ: string[] }> };
    expect(report.enqueued).toEqual(['C-3']);
    expect(report.conflicts).toEqual([
      { withdrawal_reference: 'C-1', state: 'ACCEPTED', differ: ['amount'] },
      { withdrawal_reference: 'C-2', state: 'ACCEPTED', differ: ['account_number'] },
    ]);
    expect(again.stderr).toContain('payrelay: 2 row(s) name a reference already recorded with other data; nothing was sent for them');
    expect([...(await drainQueue()).keys()]).toEqual(['C-3']);
    const same = await cli(['--json', 'payouts', 'enqueue', '--file', first]);
    expect(same.code).toBe(0);
    expect((JSON.parse(same.stdout) as { skipped: unknown[] }).skipped).toHaveLength(2);
  });
});

describe('payrelay payouts enqueue: an interrupted run', () => {
  const N = 200;

  it('stops on SIGINT after the batches in flight, says what was sent and what to run; the same command completes it', async () => {
    const path = file('sigint.csv', rows('I', N));
    const first = await cliStoppedBy(['--json', 'payouts', 'enqueue', '--file', path], 'SIGINT', async () => (await queueDepth()) > 0);
    expect(first.code).toBe(130);
    const report = JSON.parse(first.stdout) as { enqueued: string[]; handled: number; interrupted: boolean };
    expect(report.interrupted).toBe(true);
    expect(report.enqueued.length).toBeGreaterThan(0);
    expect(report.enqueued.length).toBeLessThan(N);
    expect(first.stderr).toContain(`payrelay: stopped by SIGINT: ${report.enqueued.length} row(s) sent, 0 skipped, ${N - report.handled} not reached.`);
    expect(first.stderr).toContain(`Run the same command again to enqueue the rest: payrelay --json payouts enqueue --file ${path}`);
    // A graceful stop leaves no payout recorded without its message.
    const afterStop = await storedStates('I');
    expect(afterStop.size).toBe(report.enqueued.length);

    const second = await cli(['--json', 'payouts', 'enqueue', '--file', path]);
    expect(second.code).toBe(0);
    const rest = JSON.parse(second.stdout) as { enqueued: string[]; skipped: unknown[]; recovered: string[] };
    expect(rest.enqueued).toHaveLength(N - report.enqueued.length);
    expect(rest.skipped).toHaveLength(report.enqueued.length);
    const messages = await drainQueue();
    expect(messages.size).toBe(N);
    expect([...messages.values()].every((count) => count === 1)).toBe(true);
    expect((await storedStates('I')).size).toBe(N);
  });

  it('after SIGKILL mid-run, the same command sends the rows recorded but not sent, and skips the rows sent', async () => {
    const path = file('sigkill.csv', rows('K', N));
    const first = await cliStoppedBy(['payouts', 'enqueue', '--file', path], 'SIGKILL', async () => (await queueDepth()) >= 30);
    expect(first.signal).toBe('SIGKILL');
    expect(readdirSync(join(dir, 'enqueue-journal')).length).toBeGreaterThan(0);

    const second = await cli(['--json', 'payouts', 'enqueue', '--file', path]);
    expect(second.code).toBe(0);
    const rest = JSON.parse(second.stdout) as { enqueued: string[]; skipped: unknown[]; recovered: string[] };
    expect(rest.enqueued.length + rest.skipped.length).toBe(N);
    // Every recorded payout has its message; a row may have two (harmless: the worker deduplicates by payout identity).
    const messages = await drainQueue();
    const stored = await storedStates('K');
    expect(stored.size).toBe(N);
    expect([...stored.keys()].filter((ref) => !messages.has(ref))).toEqual([]);
    // The >= 30 rows sent before the kill are skipped (marked sent) or recovered (the kill came before the mark).
    expect(rest.skipped.length + rest.recovered.length).toBeGreaterThanOrEqual(30);
    // Only rows a stopped run recorded may get a second message: at most the batches that were in flight.
    expect([...messages.values()].filter((count) => count > 1).length).toBeLessThanOrEqual(rest.recovered.length);
    expect(rest.recovered.length).toBeLessThanOrEqual(8 * 10);
    // Completed: nothing is left pending in any journal.
    expect(readdirSync(join(dir, 'enqueue-journal'))).toEqual([]);
  });
});
