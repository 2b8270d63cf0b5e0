import { App, Token } from 'aws-cdk-lib';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { buildApp } from '@infra/build-app';
import { type PayrelayConfigInput, parsePayrelayConfig } from '@infra/config';
import { existingResourceProblems, stageEnvironment } from '@infra/environment';
import { buildTestApp, cdkJsonContext } from './cdk-app';
import { configError } from './config-error';

const base = { payoutApiBaseUrl: 'https://payout.example.com', kycApiBaseUrl: 'https://kyc.example.com', removalPolicy: 'destroy' } as const;
const PROD_ACCOUNT = '111111111111';
const SANDBOX_ACCOUNT = '222222222222';
const CREDENTIALS = 'the credentials cdk runs with (CDK_DEFAULT_ACCOUNT, CDK_DEFAULT_REGION) are for';
const config = (input: Partial<PayrelayConfigInput>) => parsePayrelayConfig({ ...base, stage: 'prod', ...input }, 'test');


afterEach(() => {
  vi.unstubAllEnvs();
});

describe('a stage bound to an account and region', () => {
  it('takes account (12 digits) and region as optional keys of the stage configuration', () => {
    expect(config({}).account).toBeUndefined();
    expect(config({ account: PROD_ACCOUNT, region: 'eu-west-1' })).toMatchObject({ account: PROD_ACCOUNT, region: 'eu-west-1' });
    expect(config({ region: 'us-gov-west-1' }).region).toBe('us-gov-west-1');
    expect(configError(() => config({ account: '12345', region: 'Europe' }))).toMatch(/account: must be a 12-digit AWS account id[\s\S]*region: must be an AWS region/);
  });

  it('deploys where the stage says, filling what it leaves out from where the credentials point', () => {
    expect(stageEnvironment(config({}), { account: SANDBOX_ACCOUNT, region: 'eu-west-1' }, CREDENTIALS)).toBeUndefined();
    const bound = config({ account: PROD_ACCOUNT, region: 'eu-west-1' });
    expect(stageEnvironment(bound, {}, CREDENTIALS)).toEqual({ account: PROD_ACCOUNT, region: 'eu-west-1' });
    expect(stageEnvironment(bound, { account: PROD_ACCOUNT, region: 'eu-west-1' }, CREDENTIALS)).toEqual({ account: PROD_ACCOUNT, region: 'eu-west-1' });
    expect(stageEnvironment(config({ account: PROD_ACCOUNT }), { region: 'eu-central-1' }, CREDENTIALS)).toEqual({ account: PROD_ACCOUNT, region: 'eu-central-1' });
    // A token (an embedding app's Aws.ACCOUNT_ID) is not a known account: nothing to compare.
    expect(stageEnvironment(bound, { account: Token.asString({ Ref: 'AWS::AccountId' }) }, CREDENTIALS)).toEqual({ account: PROD_ACCOUNT, region: 'eu-west-1' });
    // No credentials (an offline synth): the CLI's default region us-east-1 says nothing about the deploy.
    expect(stageEnvironment(bound, { region: 'us-east-1' }, CREDENTIALS)).toEqual({ account: PROD_ACCOUNT, region: 'eu-west-1' });
  });

  it('refuses credentials of another account or region, naming the stage, what it expects and what it got', () => {
    const bound = config({ account: PROD_ACCOUNT, region: 'eu-west-1' });
    expect(configError(() => stageEnvironment(bound, { account: SANDBOX_ACCOUNT, region: 'eu-west-1' }, CREDENTIALS))).toBe(
      `stage "prod" deploys to account ${PROD_ACCOUNT}, region eu-west-1 (its account and region in the stage configuration), but ${CREDENTIALS} account ${SANDBOX_ACCOUNT}, not ${PROD_ACCOUNT}: ` +
        "deploy with credentials of the stage's account and region (--profile, AWS_REGION), or correct the stage's account and region",
    );
    expect(configError(() => stageEnvironment(bound, { account: SANDBOX_ACCOUNT, region: 'us-east-1' }, CREDENTIALS))).toMatch(
      /account 222222222222, not 111111111111 and region us-east-1, not eu-west-1/,
    );
    expect(configError(() => stageEnvironment(config({ region: 'eu-west-1' }), { account: SANDBOX_ACCOUNT, region: 'us-east-1' }, CREDENTIALS))).toMatch(
      /^stage "prod" deploys to region eu-west-1 .* are for region us-east-1, not eu-west-1:/,
    );
  });
});

describe('the repository app (infra/build-app.ts)', () => {
  const stages: Record<string, PayrelayConfigInput> = {
    bound: { ...base, stage: 'bound', account: PROD_ACCOUNT, region: 'eu-west-1' },
    free: { ...base, stage: 'free' },
  };
  const app = (stage: string) => new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [], stage } });

  it('refuses to synthesize a bound stage with a profile of another account (-c stage=prod --profile sandbox)', () => {
    vi.stubEnv('CDK_DEFAULT_ACCOUNT', SANDBOX_ACCOUNT);
    vi.stubEnv('CDK_DEFAULT_REGION', 'eu-west-1');
    expect(configError(() => buildApp(app('bound'), stages))).toMatch(
      /^stage "bound" deploys to account 111111111111, region eu-west-1 .*CDK_DEFAULT_ACCOUNT, CDK_DEFAULT_REGION\) are for account 222222222222, not 111111111111/,
    );
  });

  it('binds both stacks of a bound stage to its account and region, with the credentials of it or offline', () => {
    for (const account of [PROD_ACCOUNT, undefined]) {
      vi.stubEnv('CDK_DEFAULT_ACCOUNT', account);
      vi.stubEnv('CDK_DEFAULT_REGION', account ? 'eu-west-1' : undefined);
      const { payrelay } = buildApp(app('bound'), stages);
      for (const stack of [payrelay.stateful, payrelay.stateless]) expect([stack?.account, stack?.region], String(account)).toEqual([PROD_ACCOUNT, 'eu-west-1']);
    }
  });

  it('deploys an unbound stage where the credentials point, as before, or environment-agnostic when they are not both known', () => {
    vi.stubEnv('CDK_DEFAULT_ACCOUNT', SANDBOX_ACCOUNT);
    vi.stubEnv('CDK_DEFAULT_REGION', 'eu-central-1');
    expect([buildApp(app('free'), stages).payrelay.stateful.account, buildApp(app('free'), stages).payrelay.stateful.region]).toEqual([SANDBOX_ACCOUNT, 'eu-central-1']);
    vi.stubEnv('CDK_DEFAULT_REGION', undefined);
    const agnostic = buildApp(app('free'), stages).payrelay.stateful;
    expect(Token.isUnresolved(agnostic.account) && Token.isUnresolved(agnostic.region)).toBe(true);
  });
});

describe('existing resources a stage names, against where it deploys', () => {
  const CERTIFICATE = (region: string, account: string) => `arn:aws:acm:${region}:${account}:certificate/0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0`;
  const TOPIC = (region: string, account: string) => `arn:aws:sns:${region}:${account}:oncall-paging`;
  const domain = (certificateArn: string) => ({ api: { domain: { name: 'callbacks.example.com', certificateArn } } });
  const here = { account: PROD_ACCOUNT, region: 'eu-west-1' };

  it('refuses a custom-domain certificate of another region or account', () => {
    expect(existingResourceProblems(config(domain(CERTIFICATE('eu-west-1', PROD_ACCOUNT))), here)).toEqual({ errors: [], warnings: [] });
    expect(existingResourceProblems(config(domain(CERTIFICATE('us-east-1', SANDBOX_ACCOUNT))), here).errors).toEqual([
      `api.domain.certificateArn: the certificate is in region us-east-1, account ${SANDBOX_ACCOUNT}, but stage "prod" deploys to account ${PROD_ACCOUNT}, region eu-west-1: ` +
        'a regional API domain needs an ACM certificate issued in its own account and region (request or import it there)',
    ]);
    // Only what is known is compared: an environment-agnostic synth checks nothing.
    expect(existingResourceProblems(config(domain(CERTIFICATE('us-east-1', SANDBOX_ACCOUNT))), { region: 'us-east-1' }).errors).toEqual([]);
    expect(existingResourceProblems(config(domain(CERTIFICATE('us-east-1', SANDBOX_ACCOUNT))), undefined).errors).toEqual([]);
  });

  it('refuses an alarm topic of another region, and warns about one of another account (its policy must let this account publish)', () => {
    expect(existingResourceProblems(config({ alarms: { topicArn: TOPIC('eu-west-1', PROD_ACCOUNT) } }), here)).toEqual({ errors: [], warnings: [] });
    expect(existingResourceProblems(config({ alarms: { topicArn: TOPIC('us-east-1', PROD_ACCOUNT) } }), here).errors).toEqual([
      `alarms.topicArn: the topic is in region us-east-1, but stage "prod" deploys to account ${PROD_ACCOUNT}, region eu-west-1: ` +
        "CloudWatch alarms notify only SNS topics in their own region; give a topic in the stage's region",
    ]);
    const crossAccount = existingResourceProblems(config({ alarms: { topicArn: TOPIC('eu-west-1', SANDBOX_ACCOUNT) } }), here);
    expect(crossAccount.errors).toEqual([]);
    expect(crossAccount.warnings).toEqual([expect.stringMatching(/^alarms\.topicArn: the topic is in account 222222222222, not in account 111111111111 .*cloudwatch\.amazonaws\.com to publish/)]);
  });

  it('refuses a permissions boundary policy of another account (an IAM ARN names no region)', () => {
    const onBoundary = (permissionsBoundary: string) => config({ permissionsBoundary });
    expect(existingResourceProblems(onBoundary(`arn:aws:iam::${PROD_ACCOUNT}:policy/payrelay-boundary`), here)).toEqual({ errors: [], warnings: [] });
    expect(existingResourceProblems(onBoundary('payrelay-boundary'), here)).toEqual({ errors: [], warnings: [] });
    expect(existingResourceProblems(onBoundary(`arn:aws:iam::${SANDBOX_ACCOUNT}:policy/payrelay-boundary`), here).errors).toEqual([
      `permissionsBoundary: the policy is in account ${SANDBOX_ACCOUNT}, but stage "prod" deploys to account ${PROD_ACCOUNT}, region eu-west-1: ` +
        "a role's permissions boundary must be a managed policy of the role's own account; give that account's policy (or just its name)",
    ]);
    expect(existingResourceProblems(onBoundary(`arn:aws:iam::${SANDBOX_ACCOUNT}:policy/payrelay-boundary`), undefined).errors).toEqual([]);
  });

  it('refuses an existing data key (encryption.keyArn) of another region or account', () => {
    const KEY = (region: string, account: string) => `arn:aws:kms:${region}:${account}:key/0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0`;
    const onKey = (keyArn: string) => config({ encryption: { key: 'customer-managed', keyArn } });
    expect(existingResourceProblems(onKey(KEY('eu-west-1', PROD_ACCOUNT)), here)).toEqual({ errors: [], warnings: [] });
    expect(existingResourceProblems(onKey(KEY('us-east-1', SANDBOX_ACCOUNT)), here).errors).toEqual([
      `encryption.keyArn: the key is in region us-east-1, account ${SANDBOX_ACCOUNT}, but stage "prod" deploys to account ${PROD_ACCOUNT}, region eu-west-1: ` +
        "DynamoDB, SQS, Secrets Manager and CloudWatch Logs take only a KMS key of their own region, and payrelay grants the key to its roles by this account's IAM policies; " +
        "give a key in the stage's account and region, or leave keyArn out to create one",
    ]);
    expect(existingResourceProblems(onKey(KEY('eu-west-1', SANDBOX_ACCOUNT)), here).errors).toEqual([expect.stringMatching(/^encryption\.keyArn: the key is in account 222222222222, but/)]);
    // Only what is known is compared.
    expect(existingResourceProblems(onKey(KEY('us-east-1', SANDBOX_ACCOUNT)), { account: PROD_ACCOUNT }).errors).toEqual([expect.stringMatching(/the key is in account 222222222222, but stage "prod" deploys to account 111111111111:/)]);
    expect(existingResourceProblems(onKey(KEY('us-east-1', SANDBOX_ACCOUNT)), undefined).errors).toEqual([]);
  });

  it('refuses a previous key (encryption.previousKeyArns) of another region or account', () => {
    const OLD = (region: string, account: string) => `arn:aws:kms:${region}:${account}:key/0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0`;
    const moved = (previousKeyArns: string[]) => config({ encryption: { key: 'aws-managed', previousKeyArns } });
    expect(existingResourceProblems(moved([OLD('eu-west-1', PROD_ACCOUNT)]), here)).toEqual({ errors: [], warnings: [] });
    expect(existingResourceProblems(moved([OLD('eu-west-1', PROD_ACCOUNT), OLD('eu-west-1', SANDBOX_ACCOUNT)]), here).errors).toEqual([
      `encryption.previousKeyArns[1]: the key is in account ${SANDBOX_ACCOUNT}, but stage "prod" deploys to account ${PROD_ACCOUNT}, region eu-west-1: ` +
        "a previous key of this stage's stores is in its own account and region; check the ARN",
    ]);
  });

  it('the payrelay construct refuses them at synth, with the key at fault, and records the warning on the app stack', () => {
    expect(configError(() => buildTestApp({ ...base, stage: 'prod', ...here, ...domain(CERTIFICATE('us-east-1', PROD_ACCOUNT)) }))).toMatch(
      /^invalid payrelay configuration \(props of Payrelay\):\n {2}- api\.domain\.certificateArn: the certificate is in region us-east-1, but stage "prod" deploys to account 111111111111, region eu-west-1/,
    );
    expect(configError(() => buildTestApp({ ...base, stage: 'prod', env: here, alarms: { topicArn: TOPIC('us-east-1', PROD_ACCOUNT) } }))).toMatch(
      /- alarms\.topicArn: the topic is in region us-east-1/,
    );
    expect(
      configError(() =>
        buildTestApp({ ...base, stage: 'prod', ...here, encryption: { key: 'customer-managed', keyArn: `arn:aws:kms:us-east-1:${PROD_ACCOUNT}:key/mrk-0123456789abcdef0123456789abcdef` } }),
      ),
    ).toMatch(/- encryption\.keyArn: the key is in region us-east-1, but stage "prod" deploys to account 111111111111, region eu-west-1/);
    // An env that contradicts the configuration's account is refused too.
    expect(configError(() => buildTestApp({ ...base, stage: 'prod', ...here, env: { account: SANDBOX_ACCOUNT, region: 'eu-west-1' } }))).toMatch(
      /^stage "prod" deploys to account 111111111111, region eu-west-1 .* but the env given to Payrelay is account 222222222222, not 111111111111/,
    );
    const { payrelay } = buildTestApp({ ...base, stage: 'prod', ...here, alarms: { topicArn: TOPIC('eu-west-1', SANDBOX_ACCOUNT) } });
    const warnings = (payrelay.stateless?.node.metadata ?? []).filter((entry) => entry.type === 'aws:cdk:warning').map((entry) => String(entry.data));
    expect(warnings).toContainEqual(expect.stringMatching(/alarms\.topicArn: the topic is in account 222222222222/));
  }, 60_000);
});
