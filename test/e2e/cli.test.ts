import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalAws, type LocalAws } from '@local/emulators';
import { writeLocalState } from '@local/state';
import { runPayrelay, type CliRun } from '@test/support/payrelay-cli';

/*
 * The `payrelay` binary as an operator runs it (bin/payrelay.js through tsx), against local AWS
 * emulators recorded in a state file, as `npm start` records them.
 */
const dir = mkdtempSync(join(tmpdir(), 'payrelay-cli-'));
const stateFile = join(dir, 'state.json');
let aws: LocalAws;

const cli = (args: string[], env: Record<string, string> = {}): Promise<CliRun> => runPayrelay(stateFile, args, env);

const file = (name: string, text: string): string => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

const HEADER = 'platform_merchant_id,currency,withdrawal_reference,amount,account_number,account_code';
const rows = (prefix: string, n: number): string =>
  [HEADER, ...Array.from({ length: n }, (_, i) => `m1,GHS,${prefix}-${i + 1},${i + 1}.50,0244123456,MTN`)].join('\n');

async function queueDepth(): Promise<number> {
  const sqsClient = (await import('@shared/adapters/sqs-client')).sqsClient();
  const out = await sqsClient.send(new GetQueueAttributesCommand({ QueueUrl: aws.queueUrls.payouts, AttributeNames: ['ApproximateNumberOfMessages'] }));
  return Number(out.Attributes?.ApproximateNumberOfMessages ?? 0);
}

beforeAll(async () => {
  // The deployment's merchant is m1 (the provider secret's platform_merchant_id): enqueue refuses rows for another.
  aws = await startLocalAws({
    stage: 'clitest',
    secrets: { provider: { partner_public_key: 'pk', partner_secret_key: 'sk', merchant_secret_key: 'mk', partner_id: 'P-1', platform_merchant_id: 'm1' } },
  });
  Object.assign(process.env, aws.env);
  writeLocalState(
    { pid: process.pid, startedAt: new Date().toISOString(), stage: 'clitest', urls: { gateway: 'http://127.0.0.1:9', kycCallback: '', payoutNotification: '', payoutApi: '', kycApi: '' }, env: aws.env },
    stateFile,
  );
});
afterAll(async () => {
  await aws?.stop();
});

describe('payrelay payouts enqueue', () => {
  it('reports every row error with its row number and sends nothing', async () => {
    const bad = file('bad.csv', `${HEADER}\nm1,GHS,B-1,10,0244123456,MTN\nm1,GHS,B-2,1.234,12,MTN\nm1,XX,B-3,1,0244123456,BANK\n`);
    const { code, stderr } = await cli(['payouts', 'enqueue', '--file', bad]);
    expect(code).toBe(3);
    expect(stderr).toContain('row 2 (line 3) account_number: must be 4 to 34 digits');
    expect(stderr).toContain('row 2 (line 3) amount:');
    expect(stderr).toContain('row 3 (line 4) account_code:');
    expect(stderr).toContain('row 3 (line 4) currency:');
    expect(stderr.trim().split('\n').at(-1)).toBe('payrelay: 4 error(s) in bad.csv; nothing was enqueued');
    expect(stderr).not.toMatch(/\n\s+at /);
    expect(await queueDepth()).toBe(0);
  });

  it('enqueues in batches, and a second run of the same file enqueues nothing', async () => {
    const good = file('good.csv', rows('G', 12));
    const first = await cli(['--json', 'payouts', 'enqueue', '--file', good]);
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout).enqueued).toHaveLength(12);
    expect(await queueDepth()).toBe(12);
    const second = await cli(['--json', 'payouts', 'enqueue', '--file', good]);
    expect(second.code).toBe(0);
    const report = JSON.parse(second.stdout);
    expect(report.enqueued).toHaveLength(0);
    expect(report.skipped).toHaveLength(12);
    expect(report.skipped).toContainEqual({ withdrawal_reference: 'G-1', state: 'ACCEPTED' });
    expect(await queueDepth()).toBe(12);
  });

  it('after a crash between "recorded" and "sent", skips the row by default and sends it with --resend-accepted', async () => {
    const { createPayoutRepository } = await import('@shared/adapters/payout-repository');
    const { Payout } = await import('@shared/domain/payout');
    const repository = createPayoutRepository(aws.names.payoutsTable);
    // What a crash leaves: the payout recorded, its message never sent.
    await repository.createAccepted(
      Payout.accept({ identity: { platform_merchant_id: 'm1', currency: 'GHS', withdrawal_reference: 'C-1' }, amount: '1.50', accountMasked: '******3456', accountCode: 'MTN' }, new Date()),
    );
    const path = file('crash.csv', rows('C', 1));
    const skipped = JSON.parse((await cli(['--json', 'payouts', 'enqueue', '--file', path])).stdout);
    expect(skipped.skipped).toEqual([{ withdrawal_reference: 'C-1', state: 'ACCEPTED' }]);
    const before = await queueDepth();
    const resent = JSON.parse((await cli(['--json', 'payouts', 'enqueue', '--file', path, '--resend-accepted'])).stdout);
    expect(resent.enqueued).toEqual(['C-1']);
    expect(await queueDepth()).toBe(before + 1);
  });
});

describe('payrelay payouts enqueue --resend-authorized', () => {
  it('sends only the rows whose UNKNOWN payout holds a resubmission token', async () => {
    const { createPayoutRepository } = await import('@shared/adapters/payout-repository');
    const { Payout } = await import('@shared/domain/payout');
    const repository = createPayoutRepository(aws.names.payoutsTable);
    const start = new Date(Date.now() - 60 * 60_000);
    // Two payouts the provider answered ambiguously; for R-1 it has not known the reference for the grace period.
    const unknown = async (ref: string, authorize: boolean) => {
      const accepted = Payout.accept(
        { identity: { platform_merchant_id: 'm1', currency: 'GHS', withdrawal_reference: ref }, amount: ref === 'R-1' ? '1.50' : '2.50', accountMasked: '******3456', accountCode: 'MTN' },
        start,
      );
      await repository.createAccepted(accepted);
      let next = accepted.startVerifying(start).startSubmitting(start, 'Kwame Mensah').unknown('time-out', start);
      if (authorize) next = next.notFound(start).authorizeResubmit(new Date(), 15 * 60_000);
      await repository.save(accepted, next);
    };
    await unknown('R-1', true);
    await unknown('R-2', false);
    const path = file('resubmit.csv', rows('R', 2));
    const before = await queueDepth();
    const plain = JSON.parse((await cli(['--json', 'payouts', 'enqueue', '--file', path])).stdout);
    expect(plain.enqueued).toEqual([]);
    const resent = JSON.parse((await cli(['--json', 'payouts', 'enqueue', '--file', path, '--resend-authorized'])).stdout);
    expect(resent.enqueued).toEqual(['R-1']);
    expect(resent.skipped).toEqual([{ withdrawal_reference: 'R-2', state: 'UNKNOWN' }]);
    expect(await queueDepth()).toBe(before + 1);
  });
});

describe('payrelay payouts status and list', () => {
  it('shows the state and history of a payout, and fails in one line for an unknown reference', async () => {
    const { code, stdout } = await cli(['--json', 'payouts', 'status', 'G-3']);
    expect(code).toBe(0);
    const [payout] = JSON.parse(stdout);
    expect(payout).toMatchObject({ withdrawal_reference: 'G-3', state: 'ACCEPTED', amount: '3.50', account: 'MTN ******3456' });
    expect(payout.history).toEqual([expect.objectContaining({ from: null, to: 'ACCEPTED' })]);
    const missing = await cli(['payouts', 'status', 'NOPE']);
    expect(missing.code).toBe(4);
    expect(missing.stderr.trim()).toBe('payrelay: no payout with withdrawal_reference NOPE');
  });

  it('lists payouts by state as a table by default', async () => {
    const { code, stdout } = await cli(['payouts', 'list', '--state', 'ACCEPTED']);
    expect(code).toBe(0);
    expect(stdout).toContain('G-12');
    expect(stdout).toContain('13 payout(s) in ACCEPTED');
  });

  it('refuses a cursor it did not hand out as invalid input (exit 3), in one line', async () => {
    const { code, stderr } = await cli(['payouts', 'list', '--state', 'accepted', '--cursor', 'not-a-cursor']);
    expect(code).toBe(3);
    expect(stderr.trim()).toBe(
      'payrelay: --cursor: the cursor is not one this listing handed out (altered, cut short, or printed by another listing): run the listing again without --cursor for its first page',
    );
  });
});

describe('a cursor given to another listing', () => {
  it('says which --state listing it belongs to (exit 3), never reading on from it', async () => {
    const first = await cli(['--json', 'payouts', 'list', '--state', 'ACCEPTED', '--limit', '2']);
    const { cursor } = JSON.parse(first.stdout) as { cursor: string };
    expect(cursor).toEqual(expect.any(String));
    const other = await cli(['payouts', 'list', '--state', 'verifying', '--cursor', cursor]);
    expect([other.code, other.stdout, other.stderr.trim()]).toEqual([
      3,
      '',
      'payrelay: --cursor: this cursor belongs to a --state ACCEPTED listing, not to this --state VERIFYING one: give it with the options it was printed under (--state ACCEPTED), or run the listing again without --cursor for its first page',
    ]);
  });
});

describe('an empty listing', () => {
  it('says in one line what matched nothing instead of an empty table, exits 0, and --json stays the empty document', async () => {
    const payouts = await cli(['payouts', 'list', '--state', 'failed', '--merchant', 'no such merchant', '--since', '2d']);
    expect(payouts).toMatchObject({ code: 0, stdout: "No payouts match --state FAILED --merchant 'no such merchant' --since 2d.\n" });
    const events = await cli(['events', 'list', '--day', '2026-01-01', '--source', 'kyc']);
    expect(events).toMatchObject({ code: 0, stdout: 'No callbacks match --day 2026-01-01 --source kyc.\n' });
    const collections = await cli(['collections', 'list', '--since', '2026-01-01T00:00:00Z', '--until', '2026-01-02T00:00:00Z', '--order-status', 'expired']);
    expect(collections).toMatchObject({
      code: 0,
      stdout: 'No collections match --order-status EXPIRED, created between 2026-01-01T00:00:00.000Z and 2026-01-02T00:00:00.000Z.\n',
    });
    const dlq = await cli(['dlq', 'list']);
    expect(dlq).toMatchObject({ code: 0, stdout: 'The dead-letter queue is empty (a message another command is reading right now stays hidden for a moment).\n' });

    const json = await cli(['--json', 'payouts', 'list', '--state', 'FAILED', '--merchant', 'no such merchant']);
    expect([json.code, JSON.parse(json.stdout), json.stderr]).toEqual([0, { payouts: [], cursor: null }, '']);
    const jsonDlq = await cli(['--json', 'dlq', 'list']);
    expect([jsonDlq.code, JSON.parse(jsonDlq.stdout), jsonDlq.stderr]).toEqual([0, [], '']);
  });
});

describe('payrelay dlq redrive (the same command as payouts redrive)', () => {
  it('takes --wait 0 (its default: do not wait) and refuses a negative wait as invalid input (exit 3), in payrelay: words', async () => {
    const now = await cli(['--json', 'dlq', 'redrive', '--wait', '0']);
    expect(now, now.stderr).toMatchObject({ code: 0 });
    expect(JSON.parse(now.stdout)).toMatchObject({ presentAtStart: 0, moved: 0, failedAgain: 0 });
    const negative = await cli(['payouts', 'redrive', '--wait', '-1']);
    expect(negative.code).toBe(3);
    expect(negative.stderr.trim().split('\n')).toEqual([
      "payrelay: option '--wait <seconds>' argument '-1' is invalid. must be a whole number, 0 or more",
      '(run with --help for usage)',
    ]);
  });
});

describe('payrelay secrets put', () => {
  const secret = {
    partner_public_key: 'pk-SECRETVALUE-1',
    partner_secret_key: 'sk-SECRETVALUE-2',
    merchant_secret_key: 'mk-SECRETVALUE-3',
    partner_id: 'P-1',
    platform_merchant_id: 'm1',
  };

  it('validates and stores the secret without printing any value', async () => {
    const { code, stdout, stderr } = await cli(['secrets', 'put', 'provider', '--file', file('provider.json', JSON.stringify(secret))]);
    expect(code).toBe(0);
    expect(`${stdout}${stderr}`).not.toContain('SECRETVALUE');
    const { GetSecretValueCommand } = await import('@aws-sdk/client-secrets-manager');
    const { secretsClient } = await import('@shared/adapters/secrets-manager-client');
    const stored = await secretsClient.send(new GetSecretValueCommand({ SecretId: aws.names.providerSecret }));
    expect(JSON.parse(stored.SecretString ?? '{}')).toEqual(secret);
  });

  it('refuses an incomplete secret naming the fields, echoing no value, storing nothing', async () => {
    const { code, stderr } = await cli(['secrets', 'put', 'kyc', '--file', file('kyc.json', JSON.stringify({ app_id: 'a', callback_token: 'SHORTSECRET' }))]);
    expect(code).toBe(3);
    expect(stderr).toContain('callback_token');
    expect(stderr).not.toContain('SHORTSECRET');
    expect(stderr).toContain('nothing was stored');
  });

  it('creates the callback token on an empty KYC secret with --new-callback-token, never printing it, and rotates it on purpose', async () => {
    const { GetSecretValueCommand } = await import('@aws-sdk/client-secrets-manager');
    const { secretsClient } = await import('@shared/adapters/secrets-manager-client');
    const stored = async () =>
      JSON.parse((await secretsClient.send(new GetSecretValueCommand({ SecretId: aws.names.kycSecret }))).SecretString ?? '{}') as Record<string, string>;
    const appOnly = file('kyc-app.json', JSON.stringify({ app_id: 'app-1' }));
    const first = await cli(['secrets', 'put', 'kyc', '--file', appOnly, '--new-callback-token']);
    expect(first.code).toBe(0);
    const created = await stored();
    expect(created.app_id).toBe('app-1');
    expect(created.callback_token).toMatch(/^[A-Za-z0-9_-]{48}$/);
    expect(`${first.stdout}${first.stderr}`).not.toContain(created.callback_token);
    const rotated = await cli(['secrets', 'put', 'kyc', '--file', appOnly, '--new-callback-token']);
    expect(rotated.code).toBe(0);
    expect((await stored()).callback_token).not.toBe(created.callback_token);
    const wrongSecret = await cli(['secrets', 'put', 'provider', '--file', appOnly, '--new-callback-token']);
    expect(wrongSecret.code).toBe(2);
    expect(wrongSecret.stderr).toContain('--new-callback-token applies to the kyc secret only; nothing was stored');
  });

  it('says which fields are missing, empty or of the wrong type, in words', async () => {
    const partial = file('partial.json', JSON.stringify({ partner_public_key: 'pk-SECRETVALUE-4', partner_secret_key: 42, merchant_secret_key: 'x', partner_id: '', partner_key: 'sk-SECRETVALUE-5' }));
    const { code, stderr } = await cli(['secrets', 'put', 'provider', '--file', partial]);
    expect(code).toBe(3);
    expect(stderr.trim()).toBe(
      'payrelay: the provider secret is not valid: partner_secret_key must be a string (got a number); partner_id is empty; platform_merchant_id is missing; unknown field(s) partner_key; nothing was stored',
    );
  });

  it('refuses a key pasted with a space or a line break around it, and a field of spaces, storing nothing', async () => {
    const padded = file('padded.json', JSON.stringify({ ...secret, partner_secret_key: 'sk-SECRETVALUE-6\n', partner_id: '  ' }));
    const { code, stderr } = await cli(['secrets', 'put', 'provider', '--file', padded]);
    expect(code).toBe(3);
    expect(stderr.trim()).toBe(
      'payrelay: the provider secret is not valid: partner_secret_key has spaces or line breaks at its start or end (a copy-paste slip?); partner_id is empty; nothing was stored',
    );
  });

  it('refuses to prompt for a secret without a terminal', async () => {
    const { code, stderr } = await cli(['secrets', 'put', 'kyc']);
    expect(code).toBe(2);
    expect(stderr).toContain('no terminal to prompt on');
  });
});

describe('payrelay kyc app register and request-token', () => {
  it('never print the verification token (it verifies the app) unless --show-token asks, and say where it went', async () => {
    const { startSimulator } = await import('@simulator/index');
    const sim = await startSimulator();
    const email = 'kyc@token.example';
    const tokens = (): string[] => sim.admin.outbox(email).map((m) => String((m as { token?: string }).token));
    try {
      const registered = await cli(['--kyc-url', sim.kycBaseUrl, 'kyc', 'app', 'register', '--name', 'acme', '--email', email]);
      expect(registered.code, registered.stderr).toBe(0);
      const [first] = tokens();
      expect(first).toMatch(/^\d{6}$/);
      expect(registered.stdout + registered.stderr).not.toContain(first);
      expect(registered.stdout).toContain(`The 6-digit verification token was e-mailed to ${email}. It is not shown here (--show-token prints it).`);
      expect(registered.stdout).toContain(`payrelay kyc app verify --email ${email} --code <token>`);

      const json = await cli(['--json', '--kyc-url', sim.kycBaseUrl, 'kyc', 'app', 'request-token', '--email', email]);
      expect(json.code).toBe(0);
      expect(JSON.parse(json.stdout)).not.toHaveProperty('value');
      expect(json.stdout + json.stderr).not.toContain(tokens().at(-1));

      const shown = await cli(['--json', '--kyc-url', sim.kycBaseUrl, 'kyc', 'app', 'request-token', '--email', email, '--show-token']);
      expect(JSON.parse(shown.stdout)).toMatchObject({ value: tokens().at(-1) });
    } finally {
      await sim.stop();
    }
  });
});

describe('payrelay signature', () => {
  it('signs a body and verifies it; a tampered body fails verification with exit 7', async () => {
    const keys = file('keys.json', JSON.stringify({ partner_secret_key: 'ps', merchant_secret_key: 'ms' }));
    const body = file('payout.json', JSON.stringify({ amount: '10.00', currency: 'GHS', withdrawal_reference: 'S-1', account_number: '0244123456' }));
    const signed = await cli(['--json', 'signature', 'sign', body, '--secrets-file', keys]);
    expect(signed.code).toBe(0);
    const { operation, signature, body: withSig } = JSON.parse(signed.stdout);
    expect(operation).toBe('payout');
    expect(signature).toMatch(/^[0-9a-f]{128}$/);
    const ok = await cli(['signature', 'verify', file('signed.json', JSON.stringify(withSig)), '--secrets-file', keys]);
    expect(ok.code).toBe(0);
    const tampered = await cli(['signature', 'verify', file('tampered.json', JSON.stringify({ ...withSig, amount: '99.00' })), '--secrets-file', keys]);
    expect(tampered.code).toBe(7);
    expect(tampered.stderr.trim()).toBe('payrelay: signature does not match');
    const calibrated = await cli(['--json', 'signature', 'calibrate', file('signed2.json', JSON.stringify(withSig)), '--secrets-file', keys]);
    expect(JSON.parse(calibrated.stdout).map((p: { name: string }) => p.name)).toContain('hmac-sha512/compact-insertion/hex');
  });

  it('refuses a body without a signature and a wrong --signing-profile as invalid input (exit 3), saying what to give', async () => {
    const keys = file('keys.json', JSON.stringify({ partner_secret_key: 'ps', merchant_secret_key: 'ms' }));
    const unsigned = await cli(['signature', 'verify', file('unsigned.json', JSON.stringify({ amount: '10.00', currency: 'GHS', withdrawal_reference: 'S-2' })), '--secrets-file', keys]);
    expect(unsigned.code).toBe(3);
    expect(unsigned.stderr.trim()).toBe('payrelay: the body has no signature field to check (payrelay signature sign prints a body with one)');
    const profile = await cli(['signature', 'sign', file('p.json', JSON.stringify({ amount: '1.00', withdrawal_reference: 'S-3' })), '--signing-profile', 'sha1', '--secrets-file', keys]);
    expect(profile.code).toBe(3);
    expect(profile.stderr.trim()).toMatch(/^payrelay: --signing-profile: algorithm must be one of .*; got "sha1" \(a profile name is <algorithm>\/<serialization>\/<encoding>, e\.g\. hmac-sha512\/compact-insertion\/hex; docs\/signing\.md\)$/);
  });
});

describe('without a running stack', () => {
  it('says how to start one, in one line, exit 5 (stack unreachable)', async () => {
    const { code, stderr } = await cli(['payouts', 'list', '--state', 'FAILED'], { PAYRELAY_STATE_FILE: join(dir, 'none.json') });
    expect(code).toBe(5);
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).toContain('npm start');
  });

  it('ends a command group without its command, or help for an unknown one, with the help and one payrelay: line (exit 2)', async () => {
    const group = await cli(['payouts'], { PAYRELAY_STATE_FILE: join(dir, 'none.json') });
    expect(group.code).toBe(2);
    expect(group.stderr).toContain('Commands:');
    expect(group.stderr.trim().split('\n').at(-1)).toBe('payrelay: a command is needed here: choose one of those listed above');
    const help = await cli(['help', 'bogus'], { PAYRELAY_STATE_FILE: join(dir, 'none.json') });
    expect(help.code).toBe(2);
    expect(help.stderr.trim().split('\n').at(-1)).toBe('payrelay: no such command: choose one of those listed above');
    const afterOption = await cli(['--stack', 'payrelay-prod', 'help', 'bogus'], { PAYRELAY_STATE_FILE: join(dir, 'none.json') });
    expect(afterOption.stderr.trim().split('\n').at(-1)).toBe('payrelay: no such command: choose one of those listed above');
    expect((await cli(['help', 'payouts'], { PAYRELAY_STATE_FILE: join(dir, 'none.json') })).code).toBe(0);
  });

  it('refuses a kyc order without an option its kind requires as a usage error (exit 2), before looking for a stack', async () => {
    const { code, stderr } = await cli(['kyc', 'order', 'create', '--individual', '--reference', 'user-42'], { PAYRELAY_STATE_FILE: join(dir, 'none.json') });
    expect([code, stderr.trim()]).toEqual([2, 'payrelay: --full-name is required for --individual\n(run with --help for usage)']);
  });

  it('refuses an empty --since/--until range (exit 3) before looking for a stack', async () => {
    const { code, stderr } = await cli(['events', 'replay', '--since', '2026-11-21T00:00:00Z', '--until', '2026-11-20T00:00:00Z'], { PAYRELAY_STATE_FILE: join(dir, 'none.json') });
    expect(code).toBe(3);
    expect(stderr.trim()).toBe('payrelay: --since/--until: the range is empty: 2026-11-20T00:00:00.000Z is not after 2026-11-21T00:00:00.000Z');
    // payouts list (both ends inclusive) the same way, instead of DynamoDB's refusal of its BETWEEN.
    const list = await cli(['payouts', 'list', '--state', 'FAILED', '--since', '1d', '--until', '2d'], { PAYRELAY_STATE_FILE: join(dir, 'none.json') });
    expect(list.code).toBe(3);
    expect(list.stderr.trim()).toMatch(/^payrelay: --since\/--until: the range is empty: \S+ is before \S+$/);
  });

  it('says a simulator port is taken in one line (exit 1), not EADDRINUSE', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as AddressInfo;
    try {
      const { code, stderr } = await cli(['simulator', '--port', String(port)]);
      expect(code).toBe(1);
      expect(stderr.trim()).toBe(`payrelay: port ${port} on 127.0.0.1 is in use (npm start runs a simulator on 4010): pick another with --port, or 0 for a free one`);
    } finally {
      taken.close();
    }
  });

  it('refuses a wrong option value first (exit 3), before looking for a stack', async () => {
    const { code, stderr } = await cli(['payouts', 'list', '--state', 'FAILED', '--since', 'yesterday'], { PAYRELAY_STATE_FILE: join(dir, 'none.json') });
    expect(code).toBe(3);
    expect(stderr.trim().split('\n')).toEqual([
      "payrelay: option '--since <time>' argument 'yesterday' is invalid. must be ISO 8601 (2026-11-20T10:00:00Z) or a duration back from now (30m, 6h, 2d)",
      '(run with --help for usage)',
    ]);
    const empty = await cli(['kyc', 'status', ' '], { PAYRELAY_STATE_FILE: join(dir, 'none.json') });
    expect([empty.code, empty.stderr.trim()]).toEqual([3, 'payrelay: user_reference is empty: give the reference the KYC order was created with']);
    const noReference = await cli(['payouts', 'status', ''], { PAYRELAY_STATE_FILE: join(dir, 'none.json') });
    expect([noReference.code, noReference.stderr.trim()]).toEqual([3, 'payrelay: withdrawal_reference is empty: give the reference the payout was requested with']);
    const text = file('payouts.txt', `${HEADER}\n`);
    const named = await cli(['payouts', 'enqueue', '--file', text, '--dry-run', '--merchant', 'm1'], { PAYRELAY_STATE_FILE: join(dir, 'none.json') });
    expect([named.code, named.stderr.trim()]).toEqual([3, `payrelay: ${text}: the name must end in .csv, or in .jsonl or .ndjson for one JSON object a line`]);
  });
});
