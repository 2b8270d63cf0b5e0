import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PAYOUTS_QUEUE } from '@shared/config/resources';
import { DEFAULT_RECONCILE_EVERY_MINUTES, FUNCTIONS } from '@shared/config/functions';
import { MAX_PROVIDER_TIMEOUT_MS, MAX_RECONCILE_EVERY_MINUTES, parsePayrelayConfig, settingsSchema } from '@infra/config';
import { STAGES, resolveStageConfig } from '@infra/stages';
import { configError } from './config-error';

const context = (values: Record<string, unknown>) => (key: string) => values[key];
const valid = { stage: 'test', payoutApiBaseUrl: 'https://payout.example.com', kycApiBaseUrl: 'https://kyc.example.com', alarms: { email: 'oncall@example.com' } };
const TOPIC_ARN = 'arn:aws:sns:eu-west-1:123456789012:oncall-paging';


describe('payrelay configuration', () => {
  it('fills every default from the shared definitions', () => {
    const config = parsePayrelayConfig(valid, 'test');
    expect(config.maxReceiveCount).toBe(PAYOUTS_QUEUE.defaultMaxReceiveCount);
    expect(config.reconcileEveryMinutes).toBe(DEFAULT_RECONCILE_EVERY_MINUTES);
    expect(config.removalPolicy).toBe('retain');
    expect(config.egress).toEqual({ staticIps: false, natGateways: 1 });
    expect(config.alarms).toMatchObject({ queueAgeMinutes: 15, unknownAgeMinutes: 60, reviewWaitHours: 24 });
    expect(config.alarms.topicArn).toBeUndefined();
  });

  it('refuses a retained stage with no alarm destination, and says how to give one', () => {
    const message = configError(() => parsePayrelayConfig({ ...valid, alarms: {} }, 't'));
    expect(message).toMatch(/alarms: a retained stage \(removalPolicy "retain"\) needs somewhere to send its alarms/);
    expect(message).toContain('-c alarmEmail=oncall@example.com');
    expect(message).toContain('-c alarmTopicArn=arn:aws:sns:<region>:<account>:<topic>');
    expect(parsePayrelayConfig({ ...valid, alarms: { topicArn: TOPIC_ARN } }, 't').alarms.topicArn).toBe(TOPIC_ARN);
    expect(parsePayrelayConfig({ ...valid, alarms: {}, removalPolicy: 'destroy' }, 't').alarms.email).toBeUndefined();
    expect(configError(() => parsePayrelayConfig({ ...valid, alarms: { topicArn: 'arn:aws:sqs:eu-west-1:123456789012:q' } }, 't'))).toMatch(
      /alarms\.topicArn: must be an SNS topic ARN/,
    );
  });

  it('names every bad key in one error', () => {
    const message = configError(() =>
      parsePayrelayConfig(
        { ...valid, payoutApiBaseUrl: 'ftp://x', worker: { maxConcurrency: 1 }, alarms: { email: 'not-an-address' }, logRetentionDays: 4 },
        'unit test',
      ),
    );
    expect(message).toContain('(unit test)');
    expect(message).toMatch(/payoutApiBaseUrl: /);
    expect(message).toMatch(/worker\.maxConcurrency: /);
    expect(message).toMatch(/alarms\.email: /);
    expect(message).toMatch(/logRetentionDays: must be a CloudWatch Logs retention value/);
  });

  it('takes the review SLA (alarms.reviewWaitHours) in whole hours from 1, and names it when it is not', () => {
    expect(parsePayrelayConfig({ ...valid, alarms: { ...valid.alarms, reviewWaitHours: 8 } }, 't').alarms.reviewWaitHours).toBe(8);
    expect(parsePayrelayConfig({ ...valid, alarms: { ...valid.alarms, reviewWaitHours: 1 } }, 't').alarms.reviewWaitHours).toBe(1);
    for (const bad of [0, -4, 1.5, '24']) {
      expect(configError(() => parsePayrelayConfig({ ...valid, alarms: { ...valid.alarms, reviewWaitHours: bad } }, 't')), String(bad)).toMatch(/alarms\.reviewWaitHours: /);
    }
  });

  it('takes the gateway-error review window in whole minutes, and names it when it is not', () => {
    expect(parsePayrelayConfig({ ...valid, settings: { gatewayErrorReviewMinutes: 90 } }, 't').settings.gatewayErrorReviewMinutes).toBe(90);
    expect(configError(() => parsePayrelayConfig({ ...valid, settings: { gatewayErrorReviewMinutes: 0 } }, 't'))).toMatch(/settings\.gatewayErrorReviewMinutes: /);
    expect(configError(() => parsePayrelayConfig({ ...valid, settings: { gatewayErrorReviewMinutes: 1.5 } }, 't'))).toMatch(/settings\.gatewayErrorReviewMinutes: /);
  });

  it('takes reconcileEveryMinutes up to the 6 hours Lambda keeps a tick (maximumEventAge), and names the setting above', () => {
    expect(MAX_RECONCILE_EVERY_MINUTES * 60).toBe(21_600);
    expect(parsePayrelayConfig({ ...valid, reconcileEveryMinutes: MAX_RECONCILE_EVERY_MINUTES }, 't').reconcileEveryMinutes).toBe(360);
    expect(configError(() => parsePayrelayConfig({ ...valid, reconcileEveryMinutes: 361 }, 't'))).toMatch(
      /reconcileEveryMinutes: must be at most 360 \(6 hours\).*maximumEventAge/,
    );
    expect(configError(() => parsePayrelayConfig({ ...valid, reconcileEveryMinutes: 1440 }, 't'))).toMatch(/reconcileEveryMinutes: must be at most 360/);
    expect(configError(() => parsePayrelayConfig({ ...valid, reconcileEveryMinutes: 0 }, 't'))).toMatch(/reconcileEveryMinutes: /);
  });

  it("caps settings.providerTimeoutMs so that three provider calls in a row and a margin fit in the worker's time-out, and names the setting above", () => {
    const workerMs = FUNCTIONS.payoutWorker.timeoutSeconds * 1000;
    expect(3 * MAX_PROVIDER_TIMEOUT_MS).toBeLessThanOrEqual(workerMs - 10_000);
    expect(MAX_PROVIDER_TIMEOUT_MS).toBeGreaterThanOrEqual(10_000); // the handlers' default fits
    expect(parsePayrelayConfig({ ...valid, settings: { providerTimeoutMs: MAX_PROVIDER_TIMEOUT_MS } }, 't').settings.providerTimeoutMs).toBe(MAX_PROVIDER_TIMEOUT_MS);
    for (const tooLong of [MAX_PROVIDER_TIMEOUT_MS + 1, 60_000]) {
      expect(configError(() => parsePayrelayConfig({ ...valid, settings: { providerTimeoutMs: tooLong } }, 't'))).toMatch(
        new RegExp(`settings\\.providerTimeoutMs: must be at most ${MAX_PROVIDER_TIMEOUT_MS} ms: a payout makes up to 3 provider calls in a row.*the worker's ${FUNCTIONS.payoutWorker.timeoutSeconds} s time-out`),
      );
    }
    expect(configError(() => parsePayrelayConfig({ ...valid, settings: { providerTimeoutMs: 0 } }, 't'))).toMatch(/settings\.providerTimeoutMs: /);
  });

  it('refuses unknown keys, so a typo is not silently ignored', () => {
    expect(configError(() => parsePayrelayConfig({ ...valid, settings: { kycGatting: true } }, 't'))).toMatch(
      /settings: unknown key\(s\) kycGatting/,
    );
  });

  it('checks adopted Elastic IPs against static egress and the NAT gateway count', () => {
    const eip = { allocationId: 'eipalloc-0123456789abcdef0', publicIp: '203.0.113.10' };
    expect(configError(() => parsePayrelayConfig({ ...valid, egress: { elasticIps: [eip] } }, 't'))).toMatch(/egress\.elasticIps: needs egress\.staticIps: true/);
    expect(configError(() => parsePayrelayConfig({ ...valid, egress: { staticIps: true, natGateways: 2, elasticIps: [eip] } }, 't'))).toMatch(
      /egress\.elasticIps: 1 address\(es\) given but egress\.natGateways is 2/,
    );
    expect(configError(() => parsePayrelayConfig({ ...valid, egress: { staticIps: true, elasticIps: [{ allocationId: 'eip-1', publicIp: '1.2.3' }] } }, 't'))).toMatch(
      /egress\.elasticIps\.0\.allocationId: must be an Elastic IP allocation id[\s\S]*egress\.elasticIps\.0\.publicIp: /,
    );
    expect(parsePayrelayConfig({ ...valid, egress: { staticIps: true, elasticIps: [eip] } }, 't').egress.elasticIps).toEqual([eip]);
  });

  it('checks the custom domain and its certificate ARN', () => {
    expect(configError(() => parsePayrelayConfig({ ...valid, api: { domain: { name: 'Callbacks.Example.com', certificateArn: 'arn:aws:iam::1:x' } } }, 't'))).toMatch(
      /api\.domain\.name: must be a lower-case DNS name[\s\S]*api\.domain\.certificateArn: must be an ACM certificate ARN/,
    );
  });

  it('encrypts with AWS-managed keys unless encryption.key says customer-managed, and takes an existing key ARN only then', () => {
    const KEY = 'arn:aws:kms:eu-west-1:123456789012:key/0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0';
    const MULTI_REGION_KEY = 'arn:aws:kms:eu-west-1:123456789012:key/mrk-0123456789abcdef0123456789abcdef';
    const encryption = (value: unknown) => parsePayrelayConfig({ ...valid, encryption: value }, 't').encryption;
    expect(parsePayrelayConfig(valid, 't').encryption).toEqual({ key: 'aws-managed', previousKeyArns: [] });
    expect(encryption({ key: 'customer-managed' })).toEqual({ key: 'customer-managed', previousKeyArns: [] });
    expect(encryption({ key: 'customer-managed', keyArn: KEY })).toEqual({ key: 'customer-managed', keyArn: KEY, previousKeyArns: [] });
    expect(encryption({ key: 'customer-managed', keyArn: MULTI_REGION_KEY }).keyArn).toBe(MULTI_REGION_KEY);
    const refused = (value: unknown) => configError(() => encryption(value));
    expect(refused({ key: 'kms' })).toMatch(/\n {2}- encryption\.key: must be one of "aws-managed", "customer-managed"$/);
    expect(refused({ keyArn: KEY })).toMatch(/\n {2}- encryption\.keyArn: needs encryption\.key: 'customer-managed': an existing key is used only by a stage encrypted with a customer-managed key$/);
    expect(refused({ key: 'customer-managed', keyArn: 'arn:aws:kms:eu-west-1:123456789012:alias/payrelay-prod-data' })).toMatch(
      /\n {2}- encryption\.keyArn: must be a KMS key ARN \(arn:aws:kms:<region>:<account>:key\/<key id>\), not an alias or a key id$/,
    );
    expect(refused({ key: 'customer-managed', keyArn: '0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0' })).toMatch(/encryption\.keyArn: must be a KMS key ARN/);
    expect(refused({ key: 'customer-managed', keyId: KEY })).toMatch(/encryption: unknown key\(s\) keyId/);
    // Keys a moved stage used before, readable by the queue consumers while the queues drain: with either key mode.
    expect(parsePayrelayConfig(valid, 't').encryption.previousKeyArns).toEqual([]);
    expect(encryption({ key: 'aws-managed', previousKeyArns: [KEY] })).toEqual({ key: 'aws-managed', previousKeyArns: [KEY] });
    expect(encryption({ key: 'customer-managed', keyArn: MULTI_REGION_KEY, previousKeyArns: [KEY] }).previousKeyArns).toEqual([KEY]);
    expect(refused({ previousKeyArns: ['alias/payrelay-prod-data'] })).toMatch(/encryption\.previousKeyArns\.0: must be a KMS key ARN/);
  });

  it('takes tags a stage adds to every resource, within AWS rules and without redefining payrelay\'s own', () => {
    const tags = (value: unknown) => parsePayrelayConfig({ ...valid, tags: value }, 't').tags;
    expect(parsePayrelayConfig(valid, 't').tags).toEqual({});
    expect(tags({ 'cost-center': 'CC-1234', 'data-classification': 'pci', owner: 'payments@example.com' })).toEqual({
      'cost-center': 'CC-1234',
      'data-classification': 'pci',
      owner: 'payments@example.com',
    });
    const refused = (value: unknown) => configError(() => tags(value));
    expect(refused({ 'aws:cloudformation:stack-name': 'x' })).toMatch(/tags\.aws:cloudformation:stack-name: a tag key must not start with "aws:" \(reserved by AWS\)/);
    expect(refused({ stage: 'prod' })).toMatch(/tags\.stage: payrelay sets the tags app and stage itself/);
    expect(refused({ owner: 'a;b' })).toMatch(/tags\.owner: a tag value may hold letters, digits, spaces and _ \. : \/ = \+ - @/);
    expect(refused({ owner: 'x'.repeat(257) })).toMatch(/tags\.owner: a tag value has at most 256 characters/);
    expect(refused(Object.fromEntries(Array.from({ length: 41 }, (_, i) => [`t${i}`, 'v'])))).toMatch(/tags: at most 40 tags \(AWS allows 50 a resource; payrelay adds 2\)/);
  });

  it('takes a permissions boundary by policy name or by policy ARN', () => {
    const boundary = (value: unknown) => parsePayrelayConfig({ ...valid, permissionsBoundary: value }, 't').permissionsBoundary;
    expect(parsePayrelayConfig(valid, 't').permissionsBoundary).toBeUndefined();
    expect(boundary('payrelay-boundary')).toBe('payrelay-boundary');
    expect(boundary('arn:aws:iam::123456789012:policy/boundaries/payrelay-boundary')).toBe('arn:aws:iam::123456789012:policy/boundaries/payrelay-boundary');
    const message = 'must be an IAM managed policy name (such as payrelay-boundary) or its ARN (arn:aws:iam::<account>:policy/<name>)';
    expect(configError(() => boundary('arn:aws:iam::123456789012:role/admin'))).toContain(`permissionsBoundary: ${message}`);
    expect(configError(() => boundary('two words'))).toContain(`permissionsBoundary: ${message}`);
  });

  it('refuses a provider URL with a trailing slash', () => {
    expect(configError(() => parsePayrelayConfig({ ...valid, kycApiBaseUrl: 'https://kyc.example.com/' }, 't'))).toMatch(
      /kycApiBaseUrl: must not end with "\/"/,
    );
  });
});

describe('stage selection and context overrides', () => {
  it('uses the dev stage file when no stage is given', () => {
    expect(resolveStageConfig(context({})).stage).toBe('dev');
  });

  it('applies -c overrides given as strings by the CDK CLI', () => {
    const config = resolveStageConfig(
      context({ stage: 'prod', staticEgress: 'false', natGateways: '3', alarmEmail: 'ops@example.com', payoutApiBaseUrl: 'https://p.example.com' }),
    );
    expect(config.stage).toBe('prod');
    expect(config.egress).toEqual({ staticIps: false, natGateways: 3 });
    expect(config.alarms.email).toBe('ops@example.com');
    expect(config.payoutApiBaseUrl).toBe('https://p.example.com');
    // The rest of the prod stage file is kept.
    expect(config.logRetentionDays).toBe(STAGES.prod?.logRetentionDays);
  });

  it('traces every function unless the stage or -c tracing=false turns X-Ray off', () => {
    expect(resolveStageConfig(context({})).tracing).toBe(true);
    expect(resolveStageConfig(context({ tracing: 'false' })).tracing).toBe(false);
    expect(resolveStageConfig(context({ tracing: 'true' })).tracing).toBe(true);
    expect(configError(() => resolveStageConfig(context({ tracing: 'off' })))).toBe('context key tracing: expected true or false, got "off"');
  });

  it('reads a signing profile and a status map with the functions\' own parsers, so a value they would refuse fails the synth', () => {
    const profile = 'sha512-secret-body/compact-sorted/hex/payout=merchant';
    expect(resolveStageConfig(context({ signingProfile: profile })).signingProfile).toBe(profile);
    expect(configError(() => resolveStageConfig(context({ signingProfile: 'nope' })))).toMatch(/\n {2}- signingProfile: algorithm must be one of hmac-sha512, /);
    expect(configError(() => resolveStageConfig(context({ signingProfile: '{"algorithm":"hmac-sha512"' })))).toMatch(/\n {2}- signingProfile: starts with "\{" but is not valid JSON: Expected ',' or '\}' after property value in JSON at position \d+$/);
    expect(configError(() => resolveStageConfig(context({ signingProfile: '  ' })))).toMatch(/\n {2}- signingProfile: is empty: leave the key out to use the default, or give a value$/);
    const statusMap = '{"PAID":"succeeded"}';
    expect(parsePayrelayConfig({ ...valid, settings: { providerStatusMap: statusMap } }, 't').settings.providerStatusMap).toBe(statusMap);
    expect(configError(() => parsePayrelayConfig({ ...valid, settings: { providerStatusMap: '{"X":"weird"}' } }, 't'))).toMatch(
      /settings\.providerStatusMap: maps X to "weird"; allowed: succeeded, /,
    );
    expect(configError(() => parsePayrelayConfig({ ...valid, settings: { providerStatusMap: '[]' } }, 't'))).toMatch(/settings\.providerStatusMap: must be a JSON object/);
  });

  it('refuses at synth the worker and receiver settings the functions would refuse at their cold start', () => {
    const settings = (values: Record<string, unknown>) => configError(() => parsePayrelayConfig({ ...valid, settings: values }, 't'));
    expect(settings({ payoutDefiniteRefusals: [{ status: 429, message: 'slow down' }] })).toMatch(
      /settings\.payoutDefiniteRefusals: \[0\]\.status 429 is never a refusal of the payout/,
    );
    expect(settings({ payoutDefiniteRefusals: [{ status: 400, message: 'insufficient (funds' }] })).toMatch(/settings\.payoutDefiniteRefusals: \[0\]\.message is not a valid regular expression$/);
    expect(settings({ webhookAllowedIps: ['203.0.113.7', 'partner.example'] })).toMatch(/settings\.webhookAllowedIps: "partner\.example" is not an IP address or CIDR block$/);
    expect(settings({ webhookAllowedIps: [' '] })).toMatch(/settings\.webhookAllowedIps\.0: is empty: leave the key out to use the default, or give a value$/);
    expect(settings({ webhookMaxBodyBytes: 500_000 })).toMatch(/settings\.webhookMaxBodyBytes: must be at most 358400/);
    const fine = { payoutDefiniteRefusals: [{ status: 400, message: 'insufficient (balance|funds)' }], webhookAllowedIps: ['198.51.100.0/24'], webhookMaxBodyBytes: 358_400 };
    expect(parsePayrelayConfig({ ...valid, settings: fine }, 't').settings).toMatchObject(fine);
  });

  it('names the context key of a malformed override', () => {
    expect(configError(() => resolveStageConfig(context({ staticEgress: 'yes' })))).toBe(
      'context key staticEgress: expected true or false, got "yes"',
    );
    expect(configError(() => resolveStageConfig(context({ natGateways: 'two' })))).toMatch(/^context key natGateways: expected a whole number/);
  });

  it('takes adopted Elastic IPs and the custom domain from -c', () => {
    const config = resolveStageConfig(
      context({
        stage: 'prod',
        alarmTopicArn: TOPIC_ARN,
        egressElasticIps: 'eipalloc-0123456789abcdef0=203.0.113.10,eipalloc-0fedcba9876543210=203.0.113.11',
        apiDomainName: 'callbacks.example.com',
        apiCertificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0',
      }),
    );
    expect(config.egress.elasticIps).toEqual([
      { allocationId: 'eipalloc-0123456789abcdef0', publicIp: '203.0.113.10' },
      { allocationId: 'eipalloc-0fedcba9876543210', publicIp: '203.0.113.11' },
    ]);
    expect(config.api.domain?.name).toBe('callbacks.example.com');
    expect(configError(() => resolveStageConfig(context({ egressElasticIps: 'eipalloc-0123456789abcdef0' })))).toMatch(
      /^context key egressElasticIps: expected <allocation id>=<ip>/,
    );
  });

  it('refuses the prod stage file without an alarm destination from -c', () => {
    expect(configError(() => resolveStageConfig(context({ stage: 'prod' })))).toMatch(/stage "prod"[\s\S]*alarms: a retained stage/);
    expect(resolveStageConfig(context({ stage: 'prod', alarmTopicArn: TOPIC_ARN })).alarms.topicArn).toBe(TOPIC_ARN);
  });

  it('lists the known stages when the stage is unknown', () => {
    expect(configError(() => resolveStageConfig(context({ stage: 'staging' })))).toMatch(/unknown stage "staging"; known stages: dev, prod/);
  });

  it('turns the scheduled KYC catch-up on with -c kycCatchUp, checking the schedule and the look-back against the retention', () => {
    expect(resolveStageConfig(context({})).kycCatchUp).toBeUndefined();
    expect(resolveStageConfig(context({ kycCatchUp: 'rate(1 day)' })).kycCatchUp).toEqual({ schedule: 'rate(1 day)', lookbackHours: 48 });
    expect(resolveStageConfig(context({ kycCatchUp: 'cron(0 3 * * ? *)', kycCatchUpLookbackHours: '30' })).kycCatchUp).toEqual({
      schedule: 'cron(0 3 * * ? *)',
      lookbackHours: 30,
    });
    expect(configError(() => resolveStageConfig(context({ kycCatchUp: 'daily' })))).toMatch(
      /kycCatchUp\.schedule: must be an EventBridge schedule expression such as "rate\(1 day\)"/,
    );
    expect(configError(() => resolveStageConfig(context({ kycCatchUp: 'rate(1 day)', kycCatchUpLookbackHours: 'two days' })))).toMatch(
      /^context key kycCatchUpLookbackHours: expected a whole number/,
    );
    // The look-back must end inside the events' retention, or an expired callback is "recovered" again.
    const tooLong = { ...valid, settings: { eventRetentionDays: 2 }, kycCatchUp: { schedule: 'rate(1 day)' } };
    expect(configError(() => parsePayrelayConfig(tooLong, 't'))).toMatch(/kycCatchUp\.lookbackHours: must be less than the events' retention \(48 hours/);
    expect(parsePayrelayConfig({ ...tooLong, kycCatchUp: { schedule: 'rate(1 day)', lookbackHours: 47 } }, 't').kycCatchUp?.lookbackHours).toBe(47);
  });

  it('takes -c deferIndexes as a comma-separated list of the data stack\'s index names, and refuses any other name', () => {
    expect(resolveStageConfig(context({})).deferIndexes).toEqual([]);
    expect(resolveStageConfig(context({ deferIndexes: 'by-reference, not-yet-applied' })).deferIndexes).toEqual(['by-reference', 'not-yet-applied']);
    expect(configError(() => resolveStageConfig(context({ deferIndexes: 'by-referense' })))).toMatch(/deferIndexes\.0: must name an index of the data stack \(open-by-next-check, .*by-reference/);
  });

  it('turns customer-managed encryption on with -c encryptionKey, on an existing key with -c encryptionKeyArn', () => {
    const KEY = 'arn:aws:kms:eu-west-1:123456789012:key/0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0';
    expect(resolveStageConfig(context({})).encryption).toEqual({ key: 'aws-managed', previousKeyArns: [] });
    expect(resolveStageConfig(context({ encryptionKey: 'customer-managed' })).encryption).toEqual({ key: 'customer-managed', previousKeyArns: [] });
    expect(resolveStageConfig(context({ encryptionKey: 'customer-managed', encryptionKeyArn: KEY })).encryption).toEqual({ key: 'customer-managed', keyArn: KEY, previousKeyArns: [] });
    expect(configError(() => resolveStageConfig(context({ encryptionKeyArn: KEY })))).toMatch(/encryption\.keyArn: needs encryption\.key: 'customer-managed'/);
  });

  it('reports a bad override by its config key after validation', () => {
    expect(configError(() => resolveStageConfig(context({ natGateways: '9' })))).toMatch(/egress\.natGateways: /);
  });
});

describe('docs/deploy.md', () => {
  it('lists every key of settings.* the stage schema takes, and no other', () => {
    const row = readFileSync(new URL('../../docs/deploy.md', import.meta.url), 'utf8')
      .split('\n')
      .find((line) => line.startsWith('| `settings.*` |'));
    const listed = [...(row?.split('|')[3] ?? '').split('. A setting left out')[0]!.matchAll(/`([a-zA-Z]+)`/g)].map((m) => m[1]);
    expect(listed.sort()).toEqual(Object.keys(settingsSchema.entries).sort());
  });
});

describe('kyc.enabled: a stage without the KYC service', () => {
  it('is on by default, in both shipped stages', () => {
    expect(parsePayrelayConfig(valid, 't').kyc).toEqual({ enabled: true });
    expect(resolveStageConfig(context({ stage: 'dev' })).kyc.enabled).toBe(true);
    expect(resolveStageConfig(context({ stage: 'prod', alarmEmail: 'oncall@example.com' })).kyc.enabled).toBe(true);
  });

  it('is turned off with -c kycEnabled=false, and refuses a value that is not true or false', () => {
    expect(resolveStageConfig(context({ kycEnabled: 'false' })).kyc.enabled).toBe(false);
    expect(resolveStageConfig(context({ kycEnabled: 'true' })).kyc.enabled).toBe(true);
    expect(configError(() => resolveStageConfig(context({ kycEnabled: 'off' })))).toBe('context key kycEnabled: expected true or false, got "off"');
  });

  it('refuses KYC gating on a stage without KYC, naming both settings (the shipped prod stage gates on KYC)', () => {
    const message = configError(() => resolveStageConfig(context({ stage: 'prod', alarmEmail: 'oncall@example.com', kycEnabled: 'false' })));
    expect(message).toContain('settings.kycGating: KYC gating needs the KYC service, which kyc.enabled: false leaves out of this stage');
    expect(message).toContain('remove settings.kycGating (or set it to false), or turn KYC on (kyc: { enabled: true }, -c kycEnabled=true)');
    expect(parsePayrelayConfig({ ...valid, kyc: { enabled: false }, settings: { kycGating: false } }, 't').settings.kycGating).toBe(false);
  });

  it('refuses the scheduled KYC catch-up on a stage without KYC, naming both settings', () => {
    const message = configError(() => resolveStageConfig(context({ kycEnabled: 'false', kycCatchUp: 'rate(1 day)' })));
    expect(message).toContain('kycCatchUp: the scheduled KYC catch-up needs the KYC service, which kyc.enabled: false leaves out of this stage');
    expect(message).toContain('remove kycCatchUp (and -c kycCatchUp), or turn KYC on (kyc: { enabled: true }, -c kycEnabled=true)');
  });

  it('needs kycApiBaseUrl only while KYC is on', () => {
    const { kycApiBaseUrl: _left, ...withoutKycUrl } = valid;
    expect(configError(() => parsePayrelayConfig(withoutKycUrl, 't'))).toContain(
      'kycApiBaseUrl: is required while kyc.enabled is true (the default): give the KYC service\'s base URL (-c kycApiBaseUrl=https://...), or leave KYC out of this stage with kyc: { enabled: false } (-c kycEnabled=false)',
    );
    expect(parsePayrelayConfig({ ...withoutKycUrl, kyc: { enabled: false } }, 't').kycApiBaseUrl).toBeUndefined();
    // Kept for the day KYC is turned back on, and still checked.
    expect(parsePayrelayConfig({ ...valid, kyc: { enabled: false } }, 't').kycApiBaseUrl).toBe('https://kyc.example.com');
    expect(configError(() => parsePayrelayConfig({ ...valid, kyc: { enabled: false }, kycApiBaseUrl: 'kyc' }, 't'))).toMatch(/kycApiBaseUrl: must be an http\(s\) URL/);
    expect(configError(() => parsePayrelayConfig({ ...valid, kyc: { enabled: 'no' } }, 't'))).toMatch(/kyc\.enabled: /);
  });
});
