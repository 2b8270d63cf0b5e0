import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '@local/stack';
import type { DemoResult } from '@cli/demo-scenario';

/*
 * Money-safety rule 7 over a whole run: every line written while the local stack runs the demo
 * scenario end to end (KYC journey by callbacks, 50 payouts with a time-out, reconciliation,
 * order notifications), plus forged callbacks, a tampered notification and an invalid payout
 * message carrying an account number, is captured at DEBUG level. No secret value and no full
 * account number may appear in any of them.
 */

/** Every account number the run uses (demo accounts, the unknown one, the invalid message's). */
const ACCOUNT_NUMBERS = ['1020304050', '0244123456', '0201234567', '0541234567', '0123456789', '0234567890', '0345678901', '0249999999', '0551234987'];

describe('secret hygiene of a full end-to-end run', () => {
  const lines: string[] = [];
  let restore: () => void = () => {};
  let stack: LocalStack;
  let demo: DemoResult;
  const extraSecrets: string[] = [];

  beforeAll(async () => {
    const streams = [process.stdout, process.stderr] as const;
    const originals = streams.map((s) => s.write.bind(s));
    streams.forEach((stream) => {
      stream.write = ((chunk: unknown, ...rest: unknown[]) => {
        lines.push(typeof chunk === 'string' ? chunk : Buffer.isBuffer(chunk) ? chunk.toString('utf8') : String(chunk));
        (rest.find((r) => typeof r === 'function') as (() => void) | undefined)?.();
        return true;
      }) as typeof stream.write;
    });
    const log = console.log;
    const warn = console.warn;
    const info = console.info;
    const capture = (...args: unknown[]): void => {
      lines.push(args.map(String).join(' '));
    };
    console.log = capture;
    console.warn = capture;
    console.info = capture;
    restore = () => {
      streams.forEach((stream, i) => {
        stream.write = originals[i] as typeof stream.write;
      });
      console.log = log;
      console.warn = warn;
      console.info = info;
    };

    // Every level, so a secret cannot hide in a debug line.
    process.env.POWERTOOLS_LOG_LEVEL = 'DEBUG';
    const { startLocalStack } = await import('@local/stack');
    stack = await startLocalStack({
      gatewayPort: 0,
      simulatorPort: 0,
      reconcileEveryMs: 1000,
      pollWaitSeconds: 1,
      handlerEnv: { POWERTOOLS_LOG_LEVEL: 'DEBUG' },
      log: (line) => lines.push(line),
    });
    const { runDemo } = await import('@cli/demo-scenario');
    demo = await runDemo({ kind: 'local', label: 'hygiene', env: stack.env, urls: stack.urls }, (line) => lines.push(line), {
      timeoutMs: 120_000,
      pollMs: 500,
    });

    // Refused input is where secrets tend to leak: a forged token, a tampered notification, a bad message.
    const token = stack.kycSecret?.callback_token ?? '';
    const forged = await fetch(`${stack.urls.gateway}/callbacks/kyc/${token.slice(0, -1)}x`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ user_reference: 'u-forged', status: 'completed', meta_data: { kyc_status: 'approved' } }),
    });
    expect(forged.status).toBe(401);
    const secret = stack.providerSecret!;
    const tampered = await fetch(stack.urls.payoutNotification, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${secret.partner_public_key}` },
      body: JSON.stringify({ status: 'PAID', data: { withdrawal_reference: 'wr-x', account_number: '0551234987' }, signature: 'ab'.repeat(64) }),
    });
    expect(tampered.status).toBe(401);
    const wrongKey = await fetch(stack.urls.payoutNotification, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${secret.partner_secret_key}` },
      body: JSON.stringify({ status: 'PAID', data: { withdrawal_reference: 'wr-x' }, signature: 'cd'.repeat(64) }),
    });
    expect(wrongKey.status).toBe(401);
    const { SendMessageCommand } = await import('@aws-sdk/client-sqs');
    const sqsClient = (await import('@shared/adapters/sqs-client')).sqsClient();
    await sqsClient.send(
      new SendMessageCommand({
        QueueUrl: stack.queueUrls.payouts,
        MessageBody: JSON.stringify({
          version: 1,
          platform_merchant_id: secret.platform_merchant_id,
          currency: 'GHS',
          withdrawal_reference: 'HYGIENE-INVALID-1',
          amount: '-3',
          account_number: '0551234987',
          account_code: 'MTN',
        }),
      }),
    );
    // Let the poller take the invalid message and the worker dead-letter it, logging why.
    await new Promise((r) => setTimeout(r, 3000));
    extraSecrets.push(token);
  }, 240_000);

  afterAll(async () => {
    restore();
    await stack?.stop();
  });

  it('ran the scenario for real (so the lines below are worth checking)', () => {
    expect(demo.allAsExpected).toBe(true);
    expect(demo.maxExecutions).toBeLessThanOrEqual(1);
    const structured = lines.filter((l) => l.startsWith('{"level"'));
    expect(structured.length).toBeGreaterThan(100);
    expect(structured.some((l) => l.includes('"level":"DEBUG"') || l.includes('"level":"INFO"'))).toBe(true);
    // The refused inputs were seen and logged.
    expect(lines.some((l) => l.includes('HYGIENE-INVALID-1'))).toBe(true);
    expect(lines.some((l) => l.includes('webhook refused'))).toBe(true);
  });

  it('captures what the runtime logger writes (the capture itself is not blind)', async () => {
    const { logger } = await import('@shared/observability/logger');
    logger.info('hygiene probe', { probe: 'probe-7f3a' });
    expect(lines.some((l) => l.includes('probe-7f3a'))).toBe(true);
  });

  it('no line carries a secret value', () => {
    const secret = stack.providerSecret!;
    const values = [secret.partner_public_key, secret.partner_secret_key, secret.merchant_secret_key, ...extraSecrets].filter((v) => v.length >= 8);
    expect(values.length).toBeGreaterThanOrEqual(4);
    const leaks = lines.flatMap((line) => values.filter((v) => line.includes(v)).map(() => line.slice(0, 300)));
    expect(leaks).toEqual([]);
  });

  it('no line carries a full account number (last 4 digits at most)', () => {
    const leaks = lines.flatMap((line) => ACCOUNT_NUMBERS.filter((n) => line.includes(n)).map((n) => `${n}: ${line.slice(0, 300)}`));
    expect(leaks).toEqual([]);
  });
});
