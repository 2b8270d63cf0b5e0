import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { GetCommand, QueryCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { OUTPUT } from '@infra/outputs';
import { CliError, EXIT } from '@cli/output';
import { KycNotDeployedError, applyTargetEnv, requireEnv, resolveTarget } from '@cli/target';

// No CloudFormation emulator exists: DescribeStacks is the one call mocked, to check how a deployed
// stack's outputs become the CLI's target.
const cfn = mockClient(CloudFormationClient);
// The callbacks table, for `events replay` on a stack without KYC (mocked as DescribeStacks is).
const dynamo = mockClient(DynamoDBDocumentClient);
const profileBefore = process.env.AWS_PROFILE;
// The profiles these tests name, in an AWS config file of their own (never the machine's).
const awsDir = mkdtempSync(join(tmpdir(), 'payrelay-aws-'));
const configFileBefore = process.env.AWS_CONFIG_FILE;
const credentialsFileBefore = process.env.AWS_SHARED_CREDENTIALS_FILE;
beforeAll(() => {
  writeFileSync(join(awsDir, 'config'), '[profile ops]\nregion = eu-west-1\n');
  writeFileSync(join(awsDir, 'credentials'), '[ops-keys]\naws_access_key_id = AKIAEXAMPLE\naws_secret_access_key = example\n');
  process.env.AWS_CONFIG_FILE = join(awsDir, 'config');
  process.env.AWS_SHARED_CREDENTIALS_FILE = join(awsDir, 'credentials');
});
afterAll(() => {
  rmSync(awsDir, { recursive: true, force: true });
  for (const [name, before] of [['AWS_CONFIG_FILE', configFileBefore], ['AWS_SHARED_CREDENTIALS_FILE', credentialsFileBefore]] as const) {
    if (before === undefined) delete process.env[name];
    else process.env[name] = before;
  }
});
afterEach(() => {
  cfn.reset();
  dynamo.reset();
  if (profileBefore === undefined) delete process.env.AWS_PROFILE;
  else process.env.AWS_PROFILE = profileBefore;
});

describe('resolveTarget --stack', () => {
  it('reads the app stack outputs into the env the adapters use, and the API URLs', async () => {
    cfn.on(DescribeStacksCommand, { StackName: 'payrelay-prod' }).resolves({
      Stacks: [
        {
          StackName: 'payrelay-prod',
          CreationTime: new Date(),
          StackStatus: 'CREATE_COMPLETE',
          Outputs: [
            { OutputKey: OUTPUT.apiUrl, OutputValue: 'https://abc.execute-api.eu-west-1.amazonaws.com/' },
            { OutputKey: OUTPUT.payoutNotificationUrl, OutputValue: 'https://abc.execute-api.eu-west-1.amazonaws.com/callbacks/payout-notifications' },
            { OutputKey: OUTPUT.payoutsTableName, OutputValue: 'payrelay-prod-payouts' },
            { OutputKey: OUTPUT.payoutsQueueUrl, OutputValue: 'https://sqs.eu-west-1.amazonaws.com/1/payrelay-prod-payouts' },
            { OutputKey: OUTPUT.providerSecretArn, OutputValue: 'arn:aws:secretsmanager:eu-west-1:1:secret:payrelay-prod-provider' },
            { OutputKey: OUTPUT.payoutApiBaseUrl, OutputValue: 'https://provider.example' },
            { OutputKey: OUTPUT.egressIps, OutputValue: '1.2.3.4' },
          ],
        },
      ],
    });
    const target = await resolveTarget({ stack: 'payrelay-prod', profile: 'ops', region: 'eu-west-1', kycUrl: 'https://kyc.example' });
    expect(target.kind).toBe('deployed');
    expect(target.env).toEqual({
      PAYOUTS_TABLE_NAME: 'payrelay-prod-payouts',
      PAYOUTS_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/1/payrelay-prod-payouts',
      PROVIDER_SECRET_ID: 'arn:aws:secretsmanager:eu-west-1:1:secret:payrelay-prod-provider',
      PAYOUT_API_BASE_URL: 'https://provider.example',
      KYC_API_BASE_URL: 'https://kyc.example',
      AWS_PROFILE: 'ops',
      AWS_REGION: 'eu-west-1',
    });
    expect(target.urls).toMatchObject({
      gateway: 'https://abc.execute-api.eu-west-1.amazonaws.com',
      payoutNotification: 'https://abc.execute-api.eu-west-1.amazonaws.com/callbacks/payout-notifications',
      kycApi: 'https://kyc.example',
    });
    expect(target.urls.simulator).toBeUndefined();
  });

  it('signs and reads GetPayout with the stack functions\' provider client settings, not the shell\'s', async () => {
    const shell = { SIGNING_PROFILE: process.env.SIGNING_PROFILE, BEARER_PREFIX: process.env.BEARER_PREFIX, PROVIDER_STATUS_MAP: process.env.PROVIDER_STATUS_MAP };
    const stack = (settings?: string) => ({
      Stacks: [
        {
          StackName: 'payrelay-prod',
          CreationTime: new Date(),
          StackStatus: 'CREATE_COMPLETE' as const,
          Outputs: [
            { OutputKey: OUTPUT.payoutsTableName, OutputValue: 'payrelay-prod-payouts' },
            ...(settings === undefined ? [] : [{ OutputKey: OUTPUT.providerClientSettings, OutputValue: settings }]),
          ],
        },
      ],
    });
    try {
      process.env.SIGNING_PROFILE = 'from-the-shell';
      process.env.PROVIDER_STATUS_MAP = '{"PAID_OUT":"succeeded"}';
      cfn.on(DescribeStacksCommand).resolves(stack('{"BEARER_PREFIX":"false"}'));
      const target = await resolveTarget({ stack: 'payrelay-prod', profile: 'ops', region: 'eu-west-1' });
      expect(target.env.BEARER_PREFIX).toBe('false');
      expect(target.unset).toEqual(['SIGNING_PROFILE', 'PROVIDER_STATUS_MAP']);
      applyTargetEnv(target);
      expect([process.env.SIGNING_PROFILE, process.env.BEARER_PREFIX, process.env.PROVIDER_STATUS_MAP]).toEqual([undefined, 'false', undefined]);
      // A stack deployed before the output existed: the shell's settings stay, as before.
      process.env.SIGNING_PROFILE = 'from-the-shell';
      cfn.on(DescribeStacksCommand).resolves(stack());
      const older = await resolveTarget({ stack: 'payrelay-prod', profile: 'ops', region: 'eu-west-1' });
      expect(older.unset).toEqual([]);
      applyTargetEnv(older);
      expect(process.env.SIGNING_PROFILE).toBe('from-the-shell');
      cfn.on(DescribeStacksCommand).resolves(stack('not json'));
      await expect(resolveTarget({ stack: 'payrelay-prod', profile: 'ops', region: 'eu-west-1' })).rejects.toThrow(/ProviderClientSettings output is not a JSON object/);
    } finally {
      for (const [name, value] of Object.entries(shell)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });

  it('turns a missing stack into one line naming it', async () => {
    cfn.on(DescribeStacksCommand).rejects(Object.assign(new Error('Stack with id nope does not exist'), { name: 'ValidationError' }));
    const error = await resolveTarget({ stack: 'nope' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CliError);
    expect((error as Error).message).toBe('cannot read the outputs of stack nope: Stack with id nope does not exist');
    expect((error as CliError).exitCode).toBe(EXIT.notFound);
  });

  it('says how to give a region when neither --region nor the profile has one', async () => {
    cfn.on(DescribeStacksCommand).rejects(new Error('Region is missing'));
    const error = await resolveTarget({ stack: 'payrelay-prod', profile: 'ops' }).catch((e: unknown) => e);
    expect((error as Error).message).toBe('cannot read the outputs of stack payrelay-prod: no AWS region: pass --region, or set a region for profile ops');
    expect((error as CliError).exitCode).toBe(EXIT.unreachable);
  });

  it('refuses a --profile no AWS config file defines before asking AWS, and accepts one from either file', async () => {
    const error = await resolveTarget({ stack: 'payrelay-prod', profile: 'opps', region: 'eu-west-1' }).catch((e: unknown) => e);
    expect((error as Error).message).toBe(
      `no AWS profile named opps in ${join(awsDir, 'config')} or ${join(awsDir, 'credentials')}: set it up (e.g. \`aws configure sso --profile opps\`), or pass the name of one that exists with --profile`,
    );
    expect((error as CliError).exitCode).toBe(EXIT.unreachable);
    expect(cfn.commandCalls(DescribeStacksCommand)).toHaveLength(0);
    cfn.on(DescribeStacksCommand).resolves({ Stacks: [{ StackName: 'payrelay-prod', CreationTime: new Date(), StackStatus: 'CREATE_COMPLETE', Outputs: [] }] });
    await expect(resolveTarget({ stack: 'payrelay-prod', profile: 'ops-keys', region: 'eu-west-1' })).resolves.toMatchObject({ kind: 'deployed' });
  });

  it('names the --profile it tried when that profile has no usable credentials', async () => {
    delete process.env.AWS_PROFILE;
    cfn.on(DescribeStacksCommand).rejects(Object.assign(new Error('Could not load credentials from any providers'), { name: 'CredentialsProviderError' }));
    const error = await resolveTarget({ stack: 'payrelay-prod', profile: 'ops', region: 'eu-west-1' }).catch((e: unknown) => e);
    expect((error as Error).message).toBe(
      'cannot read the outputs of stack payrelay-prod: no usable AWS credentials for profile ops: Could not load credentials from any providers (log in, e.g. `aws sso login --profile ops`, or pass --profile)',
    );
    expect((error as CliError).exitCode).toBe(EXIT.unreachable);
  });
});

describe('payouts enqueue --dry-run --merchant with --stack', () => {
  it('asks the stack, so its merchant is checked too (without --stack it checks the file offline)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'payrelay-enqueue-'));
    const file = join(dir, 'payouts.csv');
    writeFileSync(file, 'platform_merchant_id,currency,withdrawal_reference,amount,account_number,account_code\nm-1,GHS,W-1,10,0241234567,MTN\n');
    cfn.on(DescribeStacksCommand).rejects(Object.assign(new Error('Stack with id payrelay-prod does not exist'), { name: 'ValidationError' }));
    const printed = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    try {
      const { run } = await import('@cli/program');
      const args = ['payouts', 'enqueue', '--file', file, '--dry-run', '--merchant', 'm-1'];
      expect(await run(['node', 'payrelay', '--stack', 'payrelay-prod', '--region', 'eu-west-1', ...args])).toBe(EXIT.notFound);
      expect(printed).toHaveBeenCalledWith(expect.stringMatching(/^payrelay: cannot read the outputs of stack payrelay-prod: /));
      expect(await run(['node', 'payrelay', ...args])).toBe(EXIT.ok);
    } finally {
      printed.mockRestore();
      log.mockRestore();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a stack whose stage leaves KYC out (output KycNotDeployed)', () => {
  const outputs = [
    { OutputKey: OUTPUT.payoutsTableName, OutputValue: 'payrelay-payouts-payouts' },
    // Kept in the data stack while KYC is off, and still output: they must not let a KYC command through.
    { OutputKey: OUTPUT.kycTableName, OutputValue: 'payrelay-payouts-kyc' },
    { OutputKey: OUTPUT.kycSecretArn, OutputValue: 'arn:aws:secretsmanager:eu-west-1:1:secret:payrelay-payouts-kyc' },
    { OutputKey: OUTPUT.kycNotDeployed, OutputValue: 'kyc.enabled is false: no KYC route or KYC functions on this stage' },
  ];
  const stack = { Stacks: [{ StackName: 'payrelay-payouts', CreationTime: new Date(), StackStatus: 'CREATE_COMPLETE' as const, Outputs: outputs }] };

  it('refuses every KYC variable with one error that says KYC is not deployed there and how to turn it on', async () => {
    cfn.on(DescribeStacksCommand).resolves(stack);
    const target = await resolveTarget({ stack: 'payrelay-payouts', profile: 'ops', region: 'eu-west-1', kycUrl: 'https://kyc.example' });
    expect(target.kycNotDeployed).toBe(true);
    expect(requireEnv(target, 'PAYOUTS_TABLE_NAME')).toBe('payrelay-payouts-payouts');
    for (const name of ['KYC_TABLE_NAME', 'KYC_SECRET_ID', 'KYC_API_BASE_URL']) {
      const error = (() => {
        try {
          return requireEnv(target, name);
        } catch (e) {
          return e;
        }
      })();
      expect(error, name).toBeInstanceOf(KycNotDeployedError);
      expect((error as CliError).exitCode).toBe(EXIT.notFound);
      expect((error as Error).message).toMatch(/^KYC is not deployed on stack payrelay-payouts: its stage has kyc\.enabled: false/);
      expect((error as Error).message).toContain('set kyc: { enabled: true } and kycApiBaseUrl in its stage');
      expect((error as Error).message).toContain('then put the KYC secret (payrelay secrets put kyc --new-callback-token)');
    }
    // A stack with KYC: nothing changes.
    cfn.on(DescribeStacksCommand).resolves({ Stacks: [{ ...stack.Stacks[0], Outputs: outputs.filter((o) => o.OutputKey !== OUTPUT.kycNotDeployed) }] } as typeof stack);
    const withKyc = await resolveTarget({ stack: 'payrelay-payouts', profile: 'ops', region: 'eu-west-1' });
    expect(withKyc.kycNotDeployed).toBeUndefined();
    expect(requireEnv(withKyc, 'KYC_TABLE_NAME')).toBe('payrelay-payouts-kyc');
  });

  it('replays order notifications with `events replay` (exit 0), counting the range\'s KYC callbacks as not applied, never reading the KYC table', async () => {
    cfn.on(DescribeStacksCommand).resolves({
      Stacks: [
        {
          ...stack.Stacks[0],
          Outputs: [
            ...outputs,
            { OutputKey: OUTPUT.eventsTableName, OutputValue: 'payrelay-payouts-events' },
            { OutputKey: OUTPUT.collectionsTableName, OutputValue: 'payrelay-payouts-collections' },
          ],
        },
      ],
    } as typeof stack);
    // One older KYC callback in the time listing (stored before KYC was turned off); every other partition empty.
    const kycItem = { pk: 'kyc#old', source: 'kyc', receivedAt: '2026-11-20T00:10:00.000Z', recognized: true, appId: 'app-1', userReference: 'user-42' };
    dynamo.on(QueryCommand).resolvesOnce({ Items: [kycItem] }).resolves({ Items: [] });
    const errors = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    try {
      const { run } = await import('@cli/program');
      const globals = ['node', 'payrelay', '--stack', 'payrelay-payouts', '--profile', 'ops', '--region', 'eu-west-1'];
      const range = ['events', 'replay', '--since', '2026-11-20T00:00:00Z', '--until', '2026-11-20T01:00:00Z'];
      expect(await run([...globals, ...range])).toBe(0);
      expect(errors).not.toHaveBeenCalled();
      const text = log.mock.calls.map((call) => String(call[0])).join('\n');
      expect(text).toContain('kyc not deployed');
      expect(text).toContain('KYC is not deployed on stack payrelay-payouts (kyc.enabled: false): 1 KYC callback(s) in the range were not applied');
      dynamo.reset();
      dynamo.on(QueryCommand).resolvesOnce({ Items: [kycItem] }).resolves({ Items: [] });
      const out = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
      try {
        expect(await run([...globals, '--json', ...range])).toBe(0);
        const json = JSON.parse(out.mock.calls.map((call) => String(call[0])).join('')) as Record<string, unknown>;
        expect(json).toMatchObject({ scanned: 1, applied: 0, unchanged: 0, unrecognized: 0, skipped: 0, kycNotDeployed: 1 });
      } finally {
        out.mockRestore();
      }
      // The KYC callback was never read, and nothing touched the KYC table.
      expect(dynamo.commandCalls(GetCommand)).toHaveLength(0);
      expect(dynamo.calls().every((call) => (call.args[0].input as { TableName?: string }).TableName === 'payrelay-payouts-events')).toBe(true);
    } finally {
      errors.mockRestore();
      log.mockRestore();
    }
  });

  it('ends the kyc commands and `secrets put kyc` with that line and exit 4, before calling anything but CloudFormation', async () => {
    cfn.on(DescribeStacksCommand).resolves(stack);
    const printed = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    try {
      const { run } = await import('@cli/program');
      const globals = ['node', 'payrelay', '--stack', 'payrelay-payouts', '--profile', 'ops', '--region', 'eu-west-1'];
      for (const args of [['kyc', 'status', 'user-42'], ['kyc', 'confirm'], ['kyc', 'types'], ['kyc', 'catch-up', '--dry-run'], ['secrets', 'put', 'kyc', '--new-callback-token']]) {
        printed.mockClear();
        expect(await run([...globals, ...args]), args.join(' ')).toBe(EXIT.notFound);
        expect(printed, args.join(' ')).toHaveBeenCalledTimes(1);
        expect(printed).toHaveBeenCalledWith(expect.stringMatching(/^payrelay: KYC is not deployed on stack payrelay-payouts: its stage has kyc\.enabled: false .* docs\/deploy\.md, "A stage without KYC"$/));
      }
    } finally {
      printed.mockRestore();
      log.mockRestore();
    }
  });
});
