import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import { describe, expect, it, vi } from 'vitest';
import { awsRegion, calendarDay, countryCode, lowerCaseChoice, parseSince, redirectUrl, timeArg, upperCaseChoice } from '@cli/context';
import { portArg } from '@local/option-args';
import { demoPayouts } from '@cli/demo-scenario';
import { payoutRequestSchema } from '@shared/messages/payout-request';
import { PAYOUT_STATES } from '@shared/domain/payout';
import { envFromOutputs } from '@cli/target';
import { describeError, exitCodeOf, shellWord, CliError, EXIT } from '@cli/output';
import * as v from '@shared/validation/valibot';

describe('envFromOutputs', () => {
  it('maps stack outputs to the env variables of docs/architecture.md, ignoring construct prefixes and unknown outputs', () => {
    const env = envFromOutputs([
      { OutputKey: 'PayoutsTableName', OutputValue: 'p' },
      { OutputKey: 'PayrelayPayoutsQueueUrl', OutputValue: 'https://sqs/q' },
      { OutputKey: 'ProviderSecretArn', OutputValue: 'arn:secret' },
      { OutputKey: 'SomethingElse', OutputValue: 'x' },
      { OutputKey: 'KycTableName' },
    ]);
    expect(env).toEqual({ PAYOUTS_TABLE_NAME: 'p', PAYOUTS_QUEUE_URL: 'https://sqs/q', PROVIDER_SECRET_ID: 'arn:secret' });
  });
});

describe('parseSince', () => {
  const now = new Date('2026-11-22T12:00:00Z');
  it('accepts durations back from now and ISO times', () => {
    expect(parseSince('30m', now).toISOString()).toBe('2026-11-22T11:30:00.000Z');
    expect(parseSince('6h', now).toISOString()).toBe('2026-11-22T06:00:00.000Z');
    expect(parseSince('2d', now).toISOString()).toBe('2026-11-20T12:00:00.000Z');
    expect(parseSince('2026-11-20T10:00:00Z', now).toISOString()).toBe('2026-11-20T10:00:00.000Z');
  });
  it('refuses anything else with a usable message', () => {
    expect(() => parseSince('yesterday', now)).toThrow(CliError);
    expect(() => parseSince('yesterday', now)).toThrow(/ISO 8601/);
  });
});

describe('timeArg (every --since and --until)', () => {
  it('takes what parseSince reads, as text, and refuses anything else naming the forms', () => {
    for (const time of ['30m', '6h', '2d', '2026-11-20', '2026-11-20T10:00:00Z']) expect(timeArg(` ${time} `)).toBe(time);
    for (const wrong of ['yesterday', '2 days', '2026-13-45']) expect(() => timeArg(wrong), wrong).toThrow('must be ISO 8601 (2026-11-20T10:00:00Z) or a duration back from now (30m, 6h, 2d)');
    expect(() => timeArg(' ')).toThrow('must not be empty');
  });
});

describe('calendarDay (--day)', () => {
  it('takes a real UTC calendar day and refuses anything else, naming the form', () => {
    expect(calendarDay('2024-02-29')).toBe('2024-02-29');
    for (const wrong of ['2026-02-30', '2026-2-3', '2026-11-20T00:00:00Z', 'today']) expect(() => calendarDay(wrong)).toThrow('must be a calendar day as YYYY-MM-DD');
  });
});

describe('countryCode (--country of a business KYC order)', () => {
  it('takes three letters in any case and refuses a country name, naming the form', () => {
    expect(countryCode('gha')).toBe('GHA');
    for (const wrong of ['Ghana', 'GH', 'G1A', '']) expect(() => countryCode(wrong)).toThrow('must be a three-letter country code (ISO 3166 alpha-3), e.g. GHA or NGA');
  });
});

describe('demo scenario', () => {
  it('has 50 valid payouts with unique references: 47 normal, a name mismatch, an unknown account, a time-out', () => {
    const { timeout, rest } = demoPayouts('m1', 'R');
    const all = [timeout, ...rest];
    expect(all).toHaveLength(50);
    expect(new Set(all.map((p) => p.request.withdrawal_reference)).size).toBe(50);
    for (const p of all) expect(v.safeParse(payoutRequestSchema, p.request).success).toBe(true);
    const roles = all.map((p) => p.role);
    expect(roles.filter((r) => r === 'normal')).toHaveLength(47);
    expect(timeout.role).toBe('ambiguous time-out');
    expect(all.filter((p) => p.expect === 'REJECTED').map((p) => p.role).sort()).toEqual(['name mismatch', 'unknown account']);
  });
});

describe('describeError', () => {
  it('gives one line in words, never a class name or a stack, and an exit code by class', () => {
    class ProviderUnavailableError extends Error {
      override name = 'ProviderUnavailableError';
    }
    const unavailable = new ProviderUnavailableError('connect ECONNREFUSED\n    at x');
    expect(describeError(unavailable)).toBe('the provider cannot be reached: connect ECONNREFUSED');
    expect(exitCodeOf(unavailable)).toBe(EXIT.unreachable);
    expect(describeError(new CliError('plain reason'))).toBe('plain reason');
    class TypeErrorLike extends Error {
      override name = 'SomethingInternalError';
    }
    expect(describeError(new TypeErrorLike('boom'))).toBe('boom');
    expect(exitCodeOf(new TypeErrorLike('boom'))).toBe(EXIT.failure);
    const kycInput = Object.assign(new Error('reference (the user reference) is required'), { name: 'KycOrderInputError' });
    expect([describeError(kycInput), exitCodeOf(kycInput)]).toEqual(['reference (the user reference) is required', EXIT.invalidInput]);
  });

  it("names the option an operator's use case means when it names an input in plain words", async () => {
    const { InvalidOperatorInputError, OperatorActionRefusedError } = await import('@shared/app/operator-errors');
    const needed = new InvalidOperatorInputError("payrelay keeps only the masked account (******6789): give the beneficiary's full account number", 'accountNumber');
    expect([describeError(needed), exitCodeOf(needed)]).toEqual([
      "payrelay keeps only the masked account (******6789): give the beneficiary's full account number (--account-number)",
      EXIT.invalidInput,
    ]);
    const taken = new OperatorActionRefusedError('reference WD-2 is already used by another payout; choose another new reference', 'state', false, 'newReference');
    expect(describeError(taken)).toBe('reference WD-2 is already used by another payout; choose another new reference (--new-reference)');
    expect(describeError(new InvalidOperatorInputError('evidence is required'))).toBe('evidence is required');
  });

  it('says of a refused --cursor which listing it belongs to, when it can tell, and what to do (invalid input)', async () => {
    const { InvalidListCursorError } = await import('@shared/domain/errors');
    const otherState = new InvalidListCursorError({ kind: 'state', cursorState: 'SUCCEEDED', listedState: 'FAILED' });
    expect([describeError(otherState), exitCodeOf(otherState)]).toEqual([
      '--cursor: this cursor belongs to a --state SUCCEEDED listing, not to this --state FAILED one: give it with the options it was printed under (--state SUCCEEDED), or run the listing again without --cursor for its first page',
      EXIT.invalidInput,
    ]);
    expect(describeError(new InvalidListCursorError({ kind: 'range' }))).toBe(
      '--cursor: this cursor was printed under another --since/--until (a duration such as 2d moves with the clock): give it with the range it was printed under, or run the listing again without --cursor for its first page',
    );
    expect(describeError(new InvalidListCursorError())).toBe(
      '--cursor: the cursor is not one this listing handed out (altered, cut short, or printed by another listing): run the listing again without --cursor for its first page',
    );
  });

  it('names the AWS profile it tried in a credentials error', () => {
    const saved = process.env.AWS_PROFILE;
    process.env.AWS_PROFILE = 'ops-prod';
    try {
      const error = Object.assign(new Error('Could not load credentials from any providers'), { name: 'CredentialsProviderError' });
      expect(describeError(error)).toMatch(/^no usable AWS credentials for profile ops-prod: Could not load credentials/);
      expect(exitCodeOf(error)).toBe(EXIT.unreachable);
    } finally {
      if (saved === undefined) delete process.env.AWS_PROFILE;
      else process.env.AWS_PROFILE = saved;
    }
  });
});

describe('payrelay --version', () => {
  it('prints the version of package.json and exits 0', async () => {
    const { run, PAYRELAY_VERSION } = await import('@cli/program');
    const { readFileSync } = await import('node:fs');
    expect(PAYRELAY_VERSION).toBe(JSON.parse(readFileSync('package.json', 'utf8')).version);
    const written: string[] = [];
    const write = process.stdout.write.bind(process.stdout);
    process.stdout.write = ((chunk: string) => written.push(String(chunk)) > 0) as typeof process.stdout.write;
    try {
      expect(await run(['node', 'payrelay', '--version'])).toBe(0);
    } finally {
      process.stdout.write = write;
    }
    expect(written.join('')).toBe(`${PAYRELAY_VERSION}\n`);
  });
});

describe('PAYRELAY_STATE_FILE', () => {
  it('set but empty is the default path, like unset: never a path of nothing (the enqueue journal lives beside it)', async () => {
    const before = process.env.PAYRELAY_STATE_FILE;
    process.env.PAYRELAY_STATE_FILE = ' ';
    vi.resetModules();
    try {
      const { LOCAL_STATE_PATH } = await import('@local/state');
      const { REPO_ROOT } = await import('@local/lambda');
      expect(LOCAL_STATE_PATH).toBe(join(REPO_ROOT, '.payrelay-local', 'state.json'));
    } finally {
      if (before === undefined) delete process.env.PAYRELAY_STATE_FILE;
      else process.env.PAYRELAY_STATE_FILE = before;
      vi.resetModules();
    }
  });
});

describe('a bad option value', () => {
  /** Runs the CLI in this process and returns its exit code and what it wrote on stderr. */
  async function runCaptured(args: string[]): Promise<{ code: number; stderr: string }> {
    const { run } = await import('@cli/program');
    const written: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string) => written.push(String(chunk)) > 0) as typeof process.stderr.write;
    try {
      return { code: await run(['node', 'payrelay', ...args]), stderr: written.join('') };
    } finally {
      process.stderr.write = write;
    }
  }

  it('is invalid input (exit 3), as a value any later check refuses, naming the option and what it accepts, before any stack or provider is asked', async () => {
    const resetPath = await runCaptured(['partner', 'reset-keys', '--partner-code', 'ACME', '--email', 'ops@acme.example', '--reset-path', 'Reset/Keys']);
    expect(resetPath).toEqual({
      code: EXIT.invalidInput,
      stderr: "payrelay: option '--reset-path <segment>' argument 'Reset/Keys' is invalid. Allowed choices are ResetPartnerKeys, GenKeysForPartner.\n(run with --help for usage)\n",
    });
    const providerUrl = await runCaptured(['--provider-url', 'provider.example', 'partner', 'onboard', '--partner-code', 'ACME', '--email', 'ops@acme.example']);
    expect(providerUrl.code).toBe(EXIT.invalidInput);
    expect(providerUrl.stderr.split('\n')[0]).toBe(
      "payrelay: option '--provider-url <url>' argument 'provider.example' is invalid. must be an absolute http(s) URL, e.g. https://provider.example",
    );
    const kycUrl = await runCaptured(['kyc', 'types', '--kyc-url', 'ftp://kyc.example']);
    expect(kycUrl.code).toBe(EXIT.invalidInput);
    expect(kycUrl.stderr.split('\n')[0]).toBe("payrelay: option '--kyc-url <url>' argument 'ftp://kyc.example' is invalid. must be an http(s) URL, e.g. https://provider.example (got ftp:)");
    const simulatorPort = await runCaptured(['simulator', '--port', '99999']);
    expect(simulatorPort.code).toBe(EXIT.invalidInput);
    expect(simulatorPort.stderr.split('\n')[0]).toBe("payrelay: option '-p, --port <port>' argument '99999' is invalid. port must be an integer from 0 to 65535");
    const consolePort = await runCaptured(['console', '--port', '70000']);
    expect(consolePort.code).toBe(EXIT.invalidInput);
    expect(consolePort.stderr.split('\n')[0]).toBe("payrelay: option '--port <port>' argument '70000' is invalid. must be a port number (0-65535)");
  });

  it('takes --as in any case, as --state (the review: --as Failed exited 3); anything else still exits 3 naming the choices', async () => {
    const printed = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      // The empty reference is refused before any stack is looked for: reaching that refusal shows --as Failed was taken.
      const taken = await runCaptured(['payouts', 'resolve', '', '--as', 'Failed', '--evidence', 'ticket 4711']);
      expect(taken.code).toBe(EXIT.invalidInput);
      expect(`${taken.stderr}${printed.mock.calls.map((call) => String(call[0])).join('\n')}`).toContain('withdrawal_reference is empty');
      const refused = await runCaptured(['payouts', 'resolve', 'WD-1', '--as', 'Done', '--evidence', 'x']);
      expect({ code: refused.code, line: refused.stderr.split('\n')[0] }).toEqual({
        code: EXIT.invalidInput,
        line: "payrelay: option '--as <outcome>' argument 'Done' is invalid. Allowed choices are succeeded, failed.",
      });
    } finally {
      printed.mockRestore();
    }
  });

  it('exits 3 for every value that is not valid, whichever check refuses it, and 2 only for the command line itself (the review: --day and --limit exited 2, --since and --amount 3)', async () => {
    const printed = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      // No stack runs here: each is refused before one is looked for (else: exit 5).
      for (const [args, line] of [
        [['events', 'list', '--day', '2026-13-45'], "payrelay: option '--day <YYYY-MM-DD>' argument '2026-13-45' is invalid. must be a calendar day as YYYY-MM-DD"],
        [['payouts', 'list', '--state', 'FAILED', '--since', 'yesterday'], "payrelay: option '--since <time>' argument 'yesterday' is invalid. must be ISO 8601 (2026-11-20T10:00:00Z) or a duration back from now (30m, 6h, 2d)"],
        [['events', 'replay', '--since', '1h', '--until', 'soon'], "payrelay: option '--until <time>' argument 'soon' is invalid. must be ISO 8601 (2026-11-20T10:00:00Z) or a duration back from now (30m, 6h, 2d)"],
        [['payouts', 'list', '--state', 'FAILED', '--limit', '0'], "payrelay: option '--limit <n>' argument '0' is invalid. must be a positive whole number"],
        [['payouts', 'list', '--state', 'DONE'], `payrelay: option '--state <state>' argument 'DONE' is invalid. Allowed choices are ${PAYOUT_STATES.join(', ')}.`],
      ] as const) {
        const { code, stderr } = await runCaptured([...args]);
        expect({ code, line: stderr.split('\n')[0] }, args.join(' ')).toEqual({ code: EXIT.invalidInput, line });
      }
      for (const [args, line] of [
        [['collections', 'create', '--amount', '-5', '--currency', 'GHS'], 'payrelay: amount "-5" is not a plain decimal number (digits and at most one point)'],
        [['collections', 'create', '--amount', '10.001', '--currency', 'ghs'], 'payrelay: amount "10.001" has more than 2 decimals for GHS'],
        [['collections', 'create', '--amount', '10', '--currency', 'XYZ'], 'payrelay: unsupported currency "XYZ"'],
      ] as const) {
        printed.mockClear();
        expect((await runCaptured([...args])).code, args.join(' ')).toBe(EXIT.invalidInput);
        expect(printed.mock.calls.map((call) => String(call[0])), args.join(' ')).toEqual([line]);
      }
      for (const args of [['payouts', 'list'], ['payouts', 'list', '--state'], ['payouts', 'list', '--state', 'FAILED', '--no-such-option'], ['payouts', 'nosuch']]) {
        expect((await runCaptured(args)).code, args.join(' ')).toBe(EXIT.usage);
      }
    } finally {
      printed.mockRestore();
    }
  });

  it('payrelay demo refuses --stack and --provider-url before any stack is read (it drives the local simulator)', async () => {
    const printed = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      // Both would fail otherwise with another code: the stack at its CloudFormation read, the URL with no local stack here.
      for (const args of [['--stack', 'payrelay-prod', 'demo'], ['--provider-url', 'https://provider.example', 'demo']]) {
        printed.mockClear();
        expect((await runCaptured(args)).code, args.join(' ')).toBe(EXIT.usage);
        expect(printed).toHaveBeenCalledWith('payrelay: the demo drives the local simulator: run it against `npm start` (not --stack, not --provider-url)');
      }
    } finally {
      printed.mockRestore();
    }
  });

  it('an e-mail that is not an address, or an empty partner code or app name, is invalid input (exit 3) before the provider is asked', async () => {
    const email = await runCaptured(['partner', 'onboard', '--partner-code', 'ACME', '--email', 'ops']);
    expect(email).toEqual({
      code: EXIT.invalidInput,
      stderr: "payrelay: option '--email <email>' argument 'ops' is invalid. must be an e-mail address, e.g. ops@acme.example\n(run with --help for usage)\n",
    });
    const code = await runCaptured(['partner', 'reset-keys', '--partner-code', ' ', '--email', 'ops@acme.example']);
    expect(code.code).toBe(EXIT.invalidInput);
    expect(code.stderr.split('\n')[0]).toBe("payrelay: option '--partner-code <code>' argument ' ' is invalid. must not be empty");
    for (const args of [
      ['kyc', 'app', 'register', '--name', '', '--email', 'kyc@acme.example'],
      ['kyc', 'app', 'verify', '--email', 'kyc@', '--code', '123456'],
      ['kyc', 'app', 'request-token', '--email', 'kyc.acme.example'],
      ['kyc', 'order', 'create', '--individual', '--reference', 'u-1', '--email', 'ama'],
      ['kyc', 'order', 'create', '--business', '--reference', 'u-1', '--business-email', 'acme'],
    ]) {
      expect((await runCaptured(args)).code, args.join(' ')).toBe(EXIT.invalidInput);
    }
  });

  it('events list --reference with nothing in it, and kyc status of a reference no subject can have, are invalid input (exit 3), before any table is read', async () => {
    const printed = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      // No stack runs here: reaching the table would fail with another code (no local stack, exit 5).
      expect((await runCaptured(['events', 'list', '--reference', ' '])).code).toBe(EXIT.invalidInput);
      expect(printed).toHaveBeenCalledWith('payrelay: --reference is empty: give the withdrawal_reference or user_reference the callbacks name');
      // Longer than any reference a KYC callback is applied with: said before the table refuses the key.
      expect((await runCaptured(['kyc', 'status', 'u'.repeat(3000)])).code).toBe(EXIT.invalidInput);
      expect(printed).toHaveBeenCalledWith('payrelay: user_reference is longer than 128 characters: no KYC subject has such a reference');
      expect((await runCaptured(['payouts', 'status', 'w'.repeat(5000)])).code).toBe(EXIT.invalidInput);
      expect(printed).toHaveBeenCalledWith('payrelay: withdrawal_reference is longer than 128 characters: no payout has such a reference');
    } finally {
      printed.mockRestore();
    }
  });

  it('--profile or --region where they would be ignored is a usage error; on a command with --signing-profile it names that flag', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'payrelay-aws-options-'));
    const body = join(dir, 'body.json');
    const keys = join(dir, 'keys.json');
    writeFileSync(body, JSON.stringify({ withdrawal_reference: 'WD-1', amount: '1.00', signature: 'x' }));
    writeFileSync(keys, JSON.stringify({ partner_secret_key: 'p', merchant_secret_key: 'm' }));
    const printed = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const refused = async (args: string[]) => {
      printed.mockClear();
      const { code } = await runCaptured(args);
      expect(code, args.join(' ')).toBe(EXIT.usage);
      // The refusal, then the pointer to --help that every usage error ends with.
      expect(printed.mock.calls.map((call) => String(call[0])).slice(1)).toEqual(['(run with --help for usage)']);
      return String(printed.mock.calls[0]?.[0]);
    };
    const signingHint = '; to choose the signing profile, use --signing-profile <profile>';
    try {
      // The trap: a signing profile given as --profile was taken for the AWS profile and ignored.
      expect(await refused(['signature', 'verify', body, '--operation', 'payout', '--secrets-file', keys, '--profile', 'hmac-sha512/compact-sorted/hex'])).toBe(
        `payrelay: --profile is for a deployed stack only (--stack <name>); without --stack this command targets the local stack${signingHint}`,
      );
      expect(await refused(['--stack', 'payrelay-prod', '--profile', 'ops', 'signature', 'sign', body, '--operation', 'payout', '--secrets-file', keys])).toBe(
        `payrelay: --profile is not used with --secrets-file: this command then calls no AWS API${signingHint}`,
      );
      expect(await refused(['--stack', 'payrelay-prod', '--profile', 'ops', 'signature', 'calibrate', body, '--secrets-file', keys])).toBe(
        'payrelay: --profile is not used with --secrets-file: this command then calls no AWS API',
      );
      expect(await refused(['--stack', 'payrelay-prod', '--profile', 'hmac-sha512/compact-sorted/hex', 'signature', 'verify', body])).toBe(
        `payrelay: --profile "hmac-sha512/compact-sorted/hex" is written like a signing profile, but --profile is the AWS profile of --stack${signingHint}`,
      );
      expect(await refused(['simulator', '--profile', 'hmac-sha512/compact-sorted/hex'])).toBe(
        `payrelay: --profile is not used by \`payrelay simulator\`, which calls no AWS API${signingHint}`,
      );
      // Commands without a signing profile: the same rule, without the hint.
      expect(await refused(['--profile', 'ops', '--region', 'eu-west-1', 'payouts', 'status', 'WD-1'])).toBe(
        'payrelay: --profile, --region are for a deployed stack only (--stack <name>); without --stack this command targets the local stack',
      );
      expect(await refused(['--stack', 'payrelay-prod', 'schema', 'payout-request'])).toBe(
        'payrelay: --stack is not used by `payrelay schema payout-request`, which calls no AWS API',
      );
    } finally {
      printed.mockRestore();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('an empty --stack or --profile is invalid input (exit 3): "$STAGE" or "$PROFILE" unset in a script never falls back to the local stack or the default AWS profile', async () => {
    expect(await runCaptured(['--stack', 'payrelay-prod', '--profile', '', 'payouts', 'status', 'WD-1'])).toEqual({
      code: EXIT.invalidInput,
      stderr: "payrelay: option '--profile <aws-profile>' argument '' is invalid. must not be empty\n(run with --help for usage)\n",
    });
    expect(await runCaptured(['--stack', ' ', 'payouts', 'status', 'WD-1'])).toEqual({
      code: EXIT.invalidInput,
      stderr: "payrelay: option '--stack <name>' argument ' ' is invalid. must not be empty\n(run with --help for usage)\n",
    });
  });

  it('an empty value where leaving the option out means a default is invalid input (exit 3), never that default', async () => {
    for (const [args, option] of [
      // Left out, these read the target's provider secret, prompt, or take the target's merchant.
      [['signature', 'sign', 'body.json', '--secrets-file', ''], "'--secrets-file <file>'"],
      [['signature', 'calibrate', 'body.json', '--secrets-file', ' '], "'--secrets-file <file>'"],
      [['secrets', 'put', 'provider', '--file', ''], "'--file <file>'"],
      [['payouts', 'enqueue', '--file', 'payouts.csv', '--dry-run', '--merchant', ''], "'--merchant <platform_merchant_id>'"],
      [['payouts', 'enqueue', '--file', ''], "'--file <file>'"],
      // Left out, these match or pick any payout, name the operator from AWS, or read the kyc secret.
      [['payouts', 'status', 'WD-1', '--merchant', ''], "'--merchant <platform_merchant_id>'"],
      [['payouts', 'status', 'WD-1', '--currency', ' '], "'--currency <code>'"],
      [['payouts', 'list', '--state', 'FAILED', '--merchant', ''], "'--merchant <platform_merchant_id>'"],
      [['payouts', 'resolve', 'WD-1', '--as', 'failed', '--evidence', 'ticket 7', '--merchant', ''], "'--merchant <platform_merchant_id>'"],
      [['payouts', 'retry', 'WD-1', '--new-reference', 'WD-2', '--by', ''], "'--by <name>'"],
      [['payouts', 'retry', 'WD-1', '--new-reference', ' '], "'--new-reference <withdrawal_reference>'"],
      [['dlq', 'delete', 'id-1', '--reason', 'poison', '--by', ' '], "'--by <name>'"],
      [['kyc', 'status', 'user-1', '--app-id', ''], "'--app-id <id>'"],
      // Left out, these mean "until now" or "the first page" or "a new order id".
      [['events', 'replay', '--since', '1h', '--until', ''], "'--until <time>'"],
      [['events', 'backfill-references', '--since', '1d', '--until', ' '], "'--until <time>'"],
      [['events', 'list', '--cursor', ''], "'--cursor <cursor>'"],
      [['payouts', 'list', '--state', 'FAILED', '--cursor', ''], "'--cursor <cursor>'"],
      [['payouts', 'list', '--state', 'FAILED', '--until', ''], "'--until <time>'"],
      [['collections', 'list', '--cursor', ' '], "'--cursor <cursor>'"],
      [['collections', 'list', '--since', ''], "'--since <time>'"],
      [['collections', 'create', '--amount', '10', '--order-id', ''], "'--order-id <id>'"],
    ] as const) {
      const { code, stderr } = await runCaptured([...args]);
      expect({ code, line: stderr.split('\n')[0] }, args.join(' ')).toEqual({
        code: EXIT.invalidInput,
        line: `payrelay: option ${option} argument '${args.at(-1) ?? ''}' is invalid. must not be empty`,
      });
    }
  });

  it('--region that is not a region code is invalid input (exit 3), before AWS is asked for the stack', async () => {
    const region = await runCaptured(['--stack', 'payrelay-prod', '--region', 'eu_west_1', 'payouts', 'status', 'WD-1']);
    expect(region).toEqual({
      code: EXIT.invalidInput,
      stderr: "payrelay: option '--region <region>' argument 'eu_west_1' is invalid. must be an AWS region code, e.g. eu-west-1 or us-east-1\n(run with --help for usage)\n",
    });
    expect((await runCaptured(['dlq', 'list', '--stack', 'payrelay-prod', '--region', 'Ireland'])).code).toBe(EXIT.invalidInput);
  });

  it('kyc order create --phone that is not in international form is invalid input (exit 3), before any stack or the KYC service is asked', async () => {
    const args = ['kyc', 'order', 'create', '--individual', '--reference', 'user-42', '--full-name', 'Ama Mensah', '--email', 'ama@example.com'];
    for (const phone of ['12345', '0244000000', '233200000000']) {
      expect(await runCaptured([...args, '--phone', phone]), phone).toEqual({
        code: EXIT.invalidInput,
        stderr:
          `payrelay: option '--phone <phone>' argument '${phone}' is invalid. must be in international form: + then the country code and the number, 8 to 15 digits in all, ` +
          'e.g. +233200000000 (spaces and dashes between them are allowed)\n(run with --help for usage)\n',
      });
    }
    // The use case's own refusal, for any other caller, is invalid input in the same words.
    const { InvalidPhoneNumberError } = await import('@shared/domain/phone');
    const fromUseCase = new InvalidPhoneNumberError('the phone number must be in international form');
    expect([describeError(fromUseCase), exitCodeOf(fromUseCase)]).toEqual(['the phone number must be in international form', EXIT.invalidInput]);
  });

  it('kyc order create --redirect that is not a URL at all is invalid input (exit 3), before the KYC service is asked', async () => {
    const args = ['kyc', 'order', 'create', '--individual', '--reference', 'user-42', '--full-name', 'Ama Mensah', '--email', 'ama@example.com', '--phone', '+233200000000'];
    const redirect = await runCaptured([...args, '--redirect', 'notaurl']);
    expect(redirect.code).toBe(EXIT.invalidInput);
    expect(redirect.stderr.split('\n')[0]).toBe(
      "payrelay: option '--redirect <url>' argument 'notaurl' is invalid. must be an absolute URL with a scheme, e.g. https://app.example/kyc/done or myapp://kyc/done",
    );
  });
});

describe('awsRegion, redirectUrl and portArg (option parsers)', () => {
  it('awsRegion takes region codes of every partition in any case, and nothing else', () => {
    for (const region of ['eu-west-1', 'us-east-1', 'ap-southeast-2', 'us-gov-west-1', 'cn-north-1', 'us-isob-east-1', 'il-central-1']) expect(awsRegion(region)).toBe(region);
    expect(awsRegion(' EU-West-1 ')).toBe('eu-west-1');
    for (const bad of ['eu_west_1', 'euwest1', 'eu-west', 'Ireland', '', 'eu-west-1.amazonaws.com', 'eu-west-1a']) {
      expect(() => awsRegion(bad), bad).toThrow('must be an AWS region code, e.g. eu-west-1 or us-east-1');
    }
  });

  it('redirectUrl takes any absolute URL with a scheme (web pages and app deep links), and refuses what is not a URL', () => {
    expect(redirectUrl('https://app.example/kyc/done?x=1')).toBe('https://app.example/kyc/done?x=1');
    expect(redirectUrl('myapp://kyc/done')).toBe('myapp://kyc/done');
    for (const bad of ['notaurl', '/kyc/done', 'app.example/kyc', '']) expect(() => redirectUrl(bad), bad).toThrow('must be an absolute URL with a scheme');
  });

  it('portArg takes 0-65535 and refuses the rest, an empty value included', () => {
    expect(portArg('0')).toBe(0);
    expect(portArg('3900')).toBe(3900);
    expect(portArg('65535')).toBe(65535);
    for (const bad of ['65536', '-1', '80.5', 'http', '', ' ']) expect(() => portArg(bad), bad).toThrow('must be a port number (0-65535)');
  });
});

describe('payrelay --help of every command', () => {
  it('describes the command and each of its options, and shows an example', async () => {
    const { buildProgram } = await import('@cli/program');
    const gaps: string[] = [];
    const visit = (command: Command, path: string[]): void => {
      const name = ['payrelay', ...path].join(' ');
      if (command.description().trim() === '') gaps.push(`${name}: no description`);
      for (const option of command.options) if (option.description.trim() === '') gaps.push(`${name} ${option.flags}: no description`);
      let help = '';
      command.configureOutput({ writeOut: (text) => (help += text) });
      command.outputHelp();
      if (!/\nExamples?:\n/.test(help)) gaps.push(`${name}: no example`);
      for (const sub of command.commands) if (sub.name() !== 'help') visit(sub, [...path, sub.name()]);
    };
    visit(buildProgram(), []);
    expect(gaps).toEqual([]);
  });
});

describe('payrelay --help marks the required options', () => {
  /** Every command of the program with its path (`payouts resolve`). */
  const commands = (command: Command, path: string[] = []): Array<[string, Command]> => [
    [path.join(' '), command],
    ...command.commands.filter((sub) => sub.name() !== 'help').flatMap((sub) => commands(sub, [...path, sub.name()])),
  ];
  /** An option's entry in its command's help, wrapped lines joined. */
  const helpEntry = (command: Command, flags: string): string => {
    let help = '';
    command.configureOutput({ writeOut: (text) => (help += text) });
    command.outputHelp();
    const lines = help.split('\n');
    const start = lines.findIndex((line) => line.trimStart().startsWith(`${flags} `) || line.trim() === flags);
    const entry = [lines[start] as string];
    for (const line of lines.slice(start + 1)) {
      if (!/^ {10,}\S/.test(line)) break;
      entry.push(line);
    }
    return entry.join(' ').trim().replace(/\s+/g, ' ');
  };

  it('says "(required" on the help line of every option a command cannot run without, and on no other (but "required with" another option)', async () => {
    const { buildProgram } = await import('@cli/program');
    const marked: string[] = [];
    for (const [path, command] of commands(buildProgram())) {
      for (const option of command.options) {
        const entry = helpEntry(command, option.flags);
        expect(/\(required[,)]/.test(entry), `${path} ${option.flags}: ${entry}`).toBe(option.mandatory);
        if (option.mandatory) marked.push(`${path} ${option.long}`);
      }
    }
    // The review's list: each is refused when left out, so each is mandatory and marked.
    for (const required of [
      'payouts enqueue --file',
      'payouts list --state',
      'payouts resolve --as',
      'payouts resolve --evidence',
      'payouts retry --new-reference',
      'dlq delete --reason',
      'events replay --since',
      'events backfill-references --since',
      'collections create --amount',
      'collections create --currency',
      'kyc order create --reference',
    ]) {
      expect(marked, required).toContain(required);
    }
  });

  it('puts "required" first in the parenthesis commander adds for choices or a default', async () => {
    const { buildProgram } = await import('@cli/program');
    const resolve = commands(buildProgram()).find(([path]) => path === 'payouts resolve')?.[1] as Command;
    expect(helpEntry(resolve, '--as <outcome>')).toBe('--as <outcome> what happened to the money (required, choices: "succeeded", "failed")');
    expect(helpEntry(resolve, '--evidence <text>')).toBe('--evidence <text> what shows it (bank statement line, provider ticket); recorded in history (required)');
    expect(helpEntry(resolve, '--by <name>')).not.toContain('required');
  });
});

describe('shellWord (the commands the CLI prints for you to paste)', () => {
  it('leaves plain words alone and quotes anything a shell would split or expand', () => {
    expect(shellWord('INV-2026-0042')).toBe('INV-2026-0042');
    expect(shellWord('payouts/may.csv')).toBe('payouts/may.csv');
    expect(shellWord('bad id')).toBe("'bad id'");
    expect(shellWord("it's")).toBe("'it'\\''s'");
    expect(shellWord('$HOME')).toBe("'$HOME'");
  });
});

describe('lowerCaseChoice (--as)', () => {
  it('takes an outcome in any case, and refuses anything else naming the choices', async () => {
    const { Command, Option } = await import('commander');
    const parse = (value: string): unknown =>
      new Command()
        .exitOverride()
        .configureOutput({ writeErr: () => undefined })
        .addOption(lowerCaseChoice(new Option('--as <outcome>'), ['succeeded', 'failed']))
        .parse(['--as', value], { from: 'user' })
        .opts().as;
    expect(parse('Failed')).toBe('failed');
    expect(parse(' SUCCEEDED ')).toBe('succeeded');
    expect(() => parse('done')).toThrow("option '--as <outcome>' argument 'done' is invalid. Allowed choices are succeeded, failed.");
  });
});

describe('upperCaseChoice (--state, --order-status, --payment-status)', () => {
  it('takes a state in any case, and refuses anything else naming the choices', async () => {
    const { Command, Option } = await import('commander');
    const parse = (value: string): unknown =>
      new Command()
        .exitOverride()
        .configureOutput({ writeErr: () => undefined })
        .addOption(upperCaseChoice(new Option('--state <state>'), ['SUCCEEDED', 'NEEDS_REVIEW']))
        .parse(['--state', value], { from: 'user' })
        .opts().state;
    expect(parse('succeeded')).toBe('SUCCEEDED');
    expect(parse(' Needs_Review ')).toBe('NEEDS_REVIEW');
    expect(() => parse('done')).toThrow("option '--state <state>' argument 'done' is invalid. Allowed choices are SUCCEEDED, NEEDS_REVIEW.");
  });
});
