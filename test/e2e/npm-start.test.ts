import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SQSClient, SendMessageCommand } from '@aws-sdk/client-sqs';
import { REPO_ROOT } from '@local/lambda';
import { readLocalState, type LocalState } from '@local/state';

/*
 * `npm start` as a process: local/main.ts with free ports, found by the CLI through its state file,
 * and stopped by SIGINT (what Ctrl-C sends) with exit code 0, its ports released.
 */
const stateFile = join(mkdtempSync(join(tmpdir(), 'payrelay-start-')), 'state.json');
let child: ChildProcess | undefined;
let output = '';

afterAll(() => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
});

async function waitFor<T>(what: string, probe: () => T | undefined, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; output so far:\n${output}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Runs local/main.ts to its exit (it stops at the usage check, before starting anything). */
function runToExit(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const run = spawn(process.execPath, ['--import', 'tsx', 'local/main.ts', ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, PAYRELAY_STATE_FILE: stateFile, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  run.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  run.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => run.once('close', (code) => resolve({ code, stdout, stderr })));
}

describe('npm start (local/main.ts)', () => {
  let state: LocalState;

  it('a bad option or env value exits 3 and an unknown option 2 (as the payrelay CLI), with one payrelay: line, nothing started', async () => {
    const [badOption, unknownOption, badEnv] = await Promise.all([
      runToExit(['--port', 'abc']),
      runToExit(['--no-such-option']),
      runToExit([], { PAYRELAY_SIMULATOR_PORT: '70000' }),
    ]);
    expect(badOption).toMatchObject({ code: 3, stdout: '' });
    expect(badOption.stderr).toMatch(/^payrelay: option '--port <port>' argument 'abc' is invalid\. must be a port number \(0-65535\)\n$/);
    expect(unknownOption).toMatchObject({ code: 2, stdout: '', stderr: "payrelay: unknown option '--no-such-option'\n" });
    expect(badEnv).toMatchObject({ code: 3, stdout: '', stderr: 'payrelay: PAYRELAY_SIMULATOR_PORT=70000: must be a port number (0-65535)\n' });
    expect(existsSync(stateFile)).toBe(false);
  }, 30_000);

  it('starts everything, prints what runs where, and records it for the CLI', async () => {
    child = spawn(process.execPath, ['--import', 'tsx', 'local/main.ts', '--port', '0', '--simulator-port', '0', '--quiet'], {
      cwd: REPO_ROOT,
      env: { ...process.env, PAYRELAY_STATE_FILE: stateFile },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
    state = await waitFor('the state file', () => readLocalState(stateFile));
    await waitFor('the summary', () => (output.includes('Ctrl-C stops everything') ? true : undefined));
    expect(state.pid).toBe(child.pid);
    expect(output).toContain(state.urls.kycCallback);
    expect(output).toContain(state.env.PAYOUTS_QUEUE_URL);
    expect(output).toContain('payrelay-local-payouts');
    expect(output).toContain('npx payrelay demo');
    // The merchant every payout row must name, as the docs' examples use it.
    expect(output).toMatch(/merchant \(platform_merchant_id\)\s*│\s*local-merchant-1/);
    // A producer of its own, as docs/local.md says: the printed SQS endpoint, the printed queue URL as QueueUrl.
    const endpoint = /SQS endpoint\s*│\s*(http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1];
    expect(endpoint).toBe(state.env.AWS_ENDPOINT_URL_SQS);
    const producer = new SQSClient({ region: 'eu-west-1', endpoint, useQueueUrlAsEndpoint: false, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    const sent = await producer.send(new SendMessageCommand({ QueueUrl: state.env.PAYOUTS_QUEUE_URL, MessageBody: 'not a payout request' }));
    expect(sent.MessageId).toBeTruthy();
    producer.destroy();

    // The gateway serves the API's routes and nothing else; a forged KYC token is refused.
    const unknown = await fetch(`${state.urls.gateway}/nope`, { method: 'POST' });
    expect(unknown.status).toBe(404);
    const forged = await fetch(`${state.urls.gateway}/callbacks/kyc/not-the-token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ event: 'applicantCreated' }),
    });
    expect(forged.status).toBe(401);
    const types = await fetch(`${state.urls.kycApi}/api/v1/kyc_type/`);
    expect(types.status).toBe(200);
  }, 60_000);

  it('a second npm start with the same state file refuses to take it over, names it and says what to do', async () => {
    const second = spawn(process.execPath, ['--import', 'tsx', 'local/main.ts', '--port', '0', '--simulator-port', '0', '--quiet'], {
      cwd: REPO_ROOT,
      env: { ...process.env, PAYRELAY_STATE_FILE: stateFile },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let said = '';
    second.stdout?.on('data', (d: Buffer) => (said += d.toString()));
    second.stderr?.on('data', (d: Buffer) => (said += d.toString()));
    const code = await new Promise<number | null>((resolve) => second.once('exit', (c) => resolve(c)));
    expect(code).toBe(1);
    expect(said).toContain(`another local stack is running with the state file ${stateFile}: pid ${state.pid}`);
    expect(said).toContain(`kill ${state.pid}`);
    expect(said).toContain('PAYRELAY_STATE_FILE=');
    // Nothing was taken over: the file still belongs to the first stack, which still answers.
    expect(readLocalState(stateFile)?.pid).toBe(state.pid);
    expect((await fetch(`${state.urls.kycApi}/api/v1/kyc_type/`)).status).toBe(200);
  }, 30_000);

  it('stops cleanly on SIGINT: exit 0, state file removed, ports released', async () => {
    const exited = new Promise<number | null>((resolve) => child?.once('exit', (code) => resolve(code)));
    child?.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(output).toContain('payrelay: stopped.');
    expect(existsSync(stateFile)).toBe(false);
    await expect(fetch(`${state.urls.gateway}/callbacks/payout-notifications`, { method: 'POST' })).rejects.toThrow();
    await expect(fetch(`${state.urls.simulator}/kyc/api/v1/kyc_type/`)).rejects.toThrow();
  }, 30_000);
});
