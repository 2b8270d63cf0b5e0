import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { App, Validations } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import type { IConstruct } from 'constructs';
import { beforeAll, describe, expect, it } from 'vitest';
import { APPLY_SWEEP_EVERY_MINUTES, FUNCTIONS, KYC_CATCH_UP_FUNCTION, ROUTES, type FunctionDefinition } from '@shared/config/functions';
import { CALLBACK_APPLY_FAILURES_QUEUE, EVENTS_TABLE, QUARANTINE_TABLE, TABLES, resourceName } from '@shared/config/resources';
import { CHECK_BACKOFF_MINUTES } from '@shared/domain/payout';
import { METRIC, METRICS_NAMESPACE, METRICS_SERVICE, OLDEST_UNKNOWN_WINDOW_MINUTES, REVIEW_GAUGE_EVERY_MINUTES } from '@shared/observability/metric-names';
import { buildApp } from '@infra/build-app';
import { OUTPUT, stackNames } from '@infra/outputs';
import { PAYRELAY_PROJECT_ROOT } from '@infra/payrelay';
import { PayrelayStatefulStack, VISIBILITY_TIMEOUT_FACTOR } from '@infra/stateful-stack';
import { MAX_RECONCILE_EVERY_MINUTES, parsePayrelayConfig } from '@infra/config';
import { buildTestApp, cdkJsonContext, synthPayrelay, type SynthesizedPayrelay } from './cdk-app';

type Resources = Record<string, { Type: string; Properties: Record<string, unknown>; DeletionPolicy?: string }>;

const base = { payoutApiBaseUrl: 'https://payout.example.com', kycApiBaseUrl: 'https://kyc.example.com:8443' };

const PAGING_TOPIC_ARN = 'arn:aws:sns:eu-west-1:123456789012:oncall-paging';

const CERTIFICATE_ARN = 'arn:aws:acm:eu-west-1:123456789012:certificate/0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0';

/** Production-like: static egress with 2 NAT gateways, alarm e-mail, RETAIN, the daily KYC catch-up. */
let prod: SynthesizedPayrelay;
/** Defaults plus DESTROY: no VPC, no alarm topic. */
let dev: SynthesizedPayrelay;
/** RETAIN with static egress on Elastic IPs kept from an earlier deploy, no custom domain, alarms to an existing topic, X-Ray off. */
let adopted: SynthesizedPayrelay;
const ADOPTED_IPS = [
  { allocationId: 'eipalloc-0123456789abcdef0', publicIp: '203.0.113.10' },
  { allocationId: 'eipalloc-0fedcba9876543210', publicIp: '203.0.113.11' },
];

/** The props of `prod` but its stage name. */
const PROD_LIKE = {
  ...base,
  egress: { staticIps: true, natGateways: 2 },
  alarms: { email: 'oncall@example.com', unknownAgeMinutes: 30, reviewWaitHours: 8 },
  worker: { maxConcurrency: 4, batchSize: 3 },
  maxReceiveCount: 7,
  reconcileEveryMinutes: 2,
  settings: { kycGating: true, webhookAllowedIps: ['203.0.113.0/24', '198.51.100.7'], gatewayErrorReviewMinutes: 90 },
  api: { domain: { name: 'callbacks.example.com', certificateArn: CERTIFICATE_ARN } },
  kycCatchUp: { schedule: 'rate(1 day)' },
};

beforeAll(() => {
  prod = synthPayrelay({ ...PROD_LIKE, stage: 'prod' });
  dev = synthPayrelay({ ...base, stage: 'dev', removalPolicy: 'destroy' });
  adopted = synthPayrelay({
    ...base,
    stage: 'adopted',
    egress: { staticIps: true, natGateways: 2, elasticIps: ADOPTED_IPS },
    alarms: { topicArn: PAGING_TOPIC_ARN },
    tracing: false,
    settings: { bearerPrefix: false },
  });
  // Three synthesized deployments take about 15 s on an idle 2-core machine and over a minute when it is loaded.
}, 240_000);

const resourcesOf = (template: Template, type: string): Resources => template.findResources(type) as Resources;

/** The payrelay function of this id in a template (`payrelay-<stage>-<id>`; no id is the end of another). */
const functionEntry = (template: Template, functionId: string) =>
  Object.entries(resourcesOf(template, 'AWS::Lambda::Function')).find(([, r]) => /^payrelay-[a-z][a-z0-9-]*$/.test(String(r.Properties.FunctionName)) && String(r.Properties.FunctionName).endsWith(`-${functionId}`));

/** The functions a template deploys: every one of FUNCTIONS, plus the KYC catch-up where the stage sets it (prod). */
const deployed = (template: Template): FunctionDefinition[] => [...Object.values(FUNCTIONS), ...(functionEntry(template, KYC_CATCH_UP_FUNCTION.id) ? [KYC_CATCH_UP_FUNCTION] : [])];

/** The logical id of the Lambda function with this physical name suffix. */
function functionLogicalId(template: Template, functionId: string): string {
  const entry = functionEntry(template, functionId);
  if (!entry) throw new Error(`no function ${functionId}`);
  return entry[0];
}

function functionProps(template: Template, functionId: string): Record<string, unknown> {
  return (resourcesOf(template, 'AWS::Lambda::Function')[functionLogicalId(template, functionId)] as { Properties: Record<string, unknown> })
    .Properties;
}

/** Stateful resources by the logical-id prefix CDK gives them in the data stack. */
const RESOURCE_PREFIXES = ['PayoutsTable', 'EventsTable', 'KycTable', 'QuarantineTable', 'CollectionsTable', 'PayoutsQueue', 'PayoutsDlq', 'CallbackApplyFailures', 'PayoutChecksQueue', 'PayoutChecksDlq', 'ProviderSecret', 'KycSecret', 'AccountKeySecret', 'DataKey'] as const;

/**
 * The IAM actions a function's role grants (inline policies and managed policies), keyed by the
 * payrelay resource they apply to (found through the cross-stack reference): `PayoutsTable`,
 * `PayoutsTable/index/<name>`, `OwnLogGroup`, `*`, or the raw resource text for anything else.
 */
function grantsOf(template: Template, functionId: string): Record<string, string[]> {
  const fn = functionProps(template, functionId);
  const roleId = JSON.stringify(fn.Role).match(/"(\w+Role\w*)"/)?.[1] ?? '\u0000';
  const logGroupId = JSON.stringify(fn.LoggingConfig).match(/"(\w+Logs\w*)"/)?.[1] ?? '\u0000';
  const role = resourcesOf(template, 'AWS::IAM::Role')[roleId];
  const grants: Record<string, Set<string>> = {};
  for (const managed of (role?.Properties.ManagedPolicyArns as unknown[] | undefined) ?? []) grants[`managed:${JSON.stringify(managed)}`] = new Set(['*']);
  for (const policy of Object.values(resourcesOf(template, 'AWS::IAM::Policy'))) {
    if (!JSON.stringify(policy.Properties.Roles).includes(roleId)) continue;
    const statements = (policy.Properties.PolicyDocument as { Statement: Array<{ Action: string | string[]; Resource: unknown }> }).Statement;
    for (const statement of statements) {
      const actions = Array.isArray(statement.Action) ? statement.Action : [statement.Action];
      const resources = Array.isArray(statement.Resource) ? statement.Resource : [statement.Resource];
      for (const resource of resources) {
        const text = JSON.stringify(resource);
        const prefix = RESOURCE_PREFIXES.find((p) => text.includes(p));
        const index = text.match(/\/index\/([\w-]+)/)?.[1];
        const key =
          text === '"*"' ? '*' : text.includes(logGroupId) ? 'OwnLogGroup' : prefix ? (index ? `${prefix}/index/${index}` : prefix) : text;
        grants[key] ??= new Set();
        for (const action of actions) grants[key].add(action);
      }
    }
  }
  return Object.fromEntries(Object.entries(grants).map(([k, v]) => [k, [...v].sort()]));
}

const dynamo = (...actions: string[]) => actions.map((a) => `dynamodb:${a}`).sort();
const SECRET_READ = ['secretsmanager:GetSecretValue'];
const XRAY = ['xray:PutTelemetryRecords', 'xray:PutTraceSegments'];
const LOGS = ['logs:CreateLogStream', 'logs:PutLogEvents'];
/** What a DynamoDB stream event source grants its function. */
const STREAM_READ = dynamo('DescribeStream', 'GetRecords', 'GetShardIterator', 'ListStreams');
const ENI = [
  'ec2:AssignPrivateIpAddresses',
  'ec2:CreateNetworkInterface',
  'ec2:DeleteNetworkInterface',
  'ec2:DescribeNetworkInterfaces',
  'ec2:DescribeSubnets',
  'ec2:UnassignPrivateIpAddresses',
];
const CONSUME = ['sqs:ChangeMessageVisibility', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:ReceiveMessage'];

describe('stateful stack', () => {
  it('builds every table of shared/config/resources.ts on demand, with PITR, encryption and its indexes', () => {
    for (const definition of TABLES) {
      prod.stateful.hasResourceProperties('AWS::DynamoDB::Table', {
        TableName: resourceName('prod', definition.id),
        BillingMode: 'PAY_PER_REQUEST',
        KeySchema: [
          { AttributeName: definition.partitionKey.name, KeyType: 'HASH' },
          ...('sortKey' in definition ? [{ AttributeName: definition.sortKey.name, KeyType: 'RANGE' }] : []),
        ],
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        SSESpecification: { SSEEnabled: true },
        GlobalSecondaryIndexes:
          definition.indexes.length > 0 ? definition.indexes.map((index) => Match.objectLike({ IndexName: index.indexName })) : Match.absent(),
      });
    }
    for (const ttl of [EVENTS_TABLE, QUARANTINE_TABLE]) {
      prod.stateful.hasResourceProperties('AWS::DynamoDB::Table', {
        TableName: resourceName('prod', ttl.id),
        TimeToLiveSpecification: { AttributeName: ttl.timeToLiveAttribute, Enabled: true },
      });
    }
  });

  it('leaves the indexes named by -c deferIndexes out of this deploy only, with a warning that says what to do next', () => {
    const app = new App({ context: cdkJsonContext() });
    const config = parsePayrelayConfig({ ...base, stage: 'upgrade', removalPolicy: 'destroy', deferIndexes: ['by-reference'] }, 'test');
    const stack = new PayrelayStatefulStack(app, 'Upgrade', { config });
    const template = Template.fromStack(stack);
    const others = EVENTS_TABLE.indexes.filter((index) => index.indexName !== 'by-reference');
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      TableName: resourceName('upgrade', EVENTS_TABLE.id),
      GlobalSecondaryIndexes: others.map((index) => Match.objectLike({ IndexName: index.indexName })),
    });
    Annotations.fromStack(stack).hasWarning('*', Match.stringLikeRegexp('index by-reference of payrelay-upgrade-events is left out of this deploy'));
  });

  it('with -c deferIndexes synthesizes the data stack alone, so the functions can never be deployed beside a missing index', () => {
    const app = new App({ context: { ...cdkJsonContext(), stage: 'dev', deferIndexes: 'by-reference', 'aws:cdk:bundling-stacks': [] } });
    const { payrelay } = buildApp(app);
    const assembly = app.synth();
    expect(payrelay.stateless).toBeUndefined();
    expect(assembly.stacks.map((stack) => stack.stackName)).toEqual([stackNames('dev').stateful]);
    const warnings = assembly.getStackByName(stackNames('dev').stateful).messages.map((m) => String(m.entry.data));
    expect(warnings).toContainEqual(expect.stringMatching(/the app stack payrelay-dev is left out of this synth \(-c deferIndexes\)/));
  });

  it('retains data by default and deletes it only when the stage says so', () => {
    for (const type of ['AWS::DynamoDB::Table', 'AWS::SQS::Queue', 'AWS::SecretsManager::Secret', 'AWS::EC2::EIP']) {
      const resources = Object.values(resourcesOf(prod.stateful, type));
      expect(resources.length, type).toBeGreaterThan(0);
      for (const r of resources) expect(r.DeletionPolicy, type).toBe('Retain');
    }
    for (const r of Object.values(resourcesOf(prod.stateful, 'AWS::DynamoDB::Table'))) expect(r.Properties.DeletionProtectionEnabled).toBe(true);
    for (const type of ['AWS::DynamoDB::Table', 'AWS::SQS::Queue', 'AWS::SecretsManager::Secret']) {
      for (const r of Object.values(resourcesOf(dev.stateful, type))) expect(r.DeletionPolicy, type).toBe('Delete');
    }
  });

  it('wires the DLQ with the configured maxReceiveCount and a visibility timeout of at least 6x the worker timeout', () => {
    const queues = resourcesOf(prod.stateful, 'AWS::SQS::Queue');
    const [queueId, queue] = Object.entries(queues).find(([, q]) => q.Properties.QueueName === 'payrelay-prod-payouts') ?? [];
    const [dlqId] = Object.entries(queues).find(([, q]) => q.Properties.QueueName === 'payrelay-prod-payouts-dlq') ?? [];
    expect(queueId && dlqId).toBeTruthy();
    expect(queue?.Properties.RedrivePolicy).toEqual({ deadLetterTargetArn: { 'Fn::GetAtt': [dlqId, 'Arn'] }, maxReceiveCount: 7 });
    const workerTimeout = functionProps(prod.stateless, FUNCTIONS.payoutWorker.id).Timeout as number;
    expect(workerTimeout).toBe(FUNCTIONS.payoutWorker.timeoutSeconds);
    expect(queue?.Properties.VisibilityTimeout as number).toBeGreaterThanOrEqual(VISIBILITY_TIMEOUT_FACTOR * workerTimeout);
    for (const q of Object.values(queues)) expect(q.Properties.SqsManagedSseEnabled).toBe(true);
  });

  it('keeps delayed checks on their own encrypted queue with a DLQ, held no longer than a day', () => {
    const queues = resourcesOf(prod.stateful, 'AWS::SQS::Queue');
    const [, checks] = Object.entries(queues).find(([, q]) => q.Properties.QueueName === 'payrelay-prod-payout-checks') ?? [];
    const [dlqId] = Object.entries(queues).find(([, q]) => q.Properties.QueueName === 'payrelay-prod-payout-checks-dlq') ?? [];
    expect(checks && dlqId).toBeTruthy();
    expect(checks?.Properties.RedrivePolicy).toEqual({ deadLetterTargetArn: { 'Fn::GetAtt': [dlqId, 'Arn'] }, maxReceiveCount: 3 });
    expect(checks?.Properties.MessageRetentionPeriod).toBe(86_400);
    expect(checks?.Properties.VisibilityTimeout as number).toBeGreaterThanOrEqual(VISIBILITY_TIMEOUT_FACTOR * FUNCTIONS.payoutChecker.timeoutSeconds);
    // enforceSSL: the queue policy denies any request not made over TLS.
    const policies = Object.values(resourcesOf(prod.stateful, 'AWS::SQS::QueuePolicy'));
    expect(JSON.stringify(policies)).toContain('aws:SecureTransport');
    expect(policies.length).toBeGreaterThanOrEqual(4);
  });

  it('creates the keys\' secrets empty (no value, no generator a deploy could write over them), and only the account key generated, never a value', () => {
    for (const template of [prod.stateful, dev.stateful, adopted.stateful]) {
      const secrets = Object.values(resourcesOf(template, 'AWS::SecretsManager::Secret'));
      expect(secrets.map((s) => String(s.Properties.Name).replace(/^payrelay-[a-z0-9-]+?-(provider|kyc|account-key)$/, '$1')).sort()).toEqual(['account-key', 'kyc', 'provider']);
      for (const secret of secrets) {
        const valueKeys = Object.keys(secret.Properties).filter((key) => /SecretString|GenerateSecretString/.test(key));
        if (String(secret.Properties.Name).endsWith('-account-key')) {
          // Secrets Manager generates it once, at creation: the template holds the generator's settings only.
          expect(valueKeys).toEqual(['GenerateSecretString']);
          // Pinned whole: CloudFormation generates a new value when this property changes.
          expect(secret.Properties.GenerateSecretString).toEqual({ GenerateStringKey: 'key', SecretStringTemplate: '{}', PasswordLength: 64, ExcludePunctuation: true });
        } else expect(valueKeys, String(secret.Properties.Name)).toEqual([]);
      }
      // Nothing else may write a secret value either (a rotation schedule or a version resource).
      expect(Object.keys(template.findResources('AWS::SecretsManager::RotationSchedule'))).toEqual([]);
    }
  });
});

describe('functions', () => {
  it('run Node.js 24 (nodejs24.x) on arm64 with tracing, their timeouts and the Powertools environment', () => {
    for (const definition of deployed(prod.stateless)) {
      const fn = functionProps(prod.stateless, definition.id);
      expect(fn.Runtime).toBe('nodejs24.x');
      expect(fn.Architectures).toEqual(['arm64']);
      expect(fn.TracingConfig).toEqual({ Mode: 'Active' });
      expect(fn.Timeout).toBe(definition.timeoutSeconds);
      expect(fn.MemorySize).toBe(definition.memoryMb);
      expect(fn.LoggingConfig).toEqual({ LogGroup: expect.anything() });
      expect((fn.Environment as { Variables: Record<string, unknown> }).Variables).toMatchObject({
        POWERTOOLS_SERVICE_NAME: METRICS_SERVICE,
        POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
        POWERTOOLS_LOG_LEVEL: 'INFO',
        NODE_OPTIONS: '--enable-source-maps',
      });
    }
    for (const group of Object.values(resourcesOf(prod.stateless, 'AWS::Logs::LogGroup'))) expect(group.Properties.RetentionInDays).toBeGreaterThan(0);
  });

  it('with tracing off: no active tracing, no X-Ray grant, and the Powertools tracer off in every function', () => {
    const policies = JSON.stringify(resourcesOf(adopted.stateless, 'AWS::IAM::Policy'));
    expect(policies).not.toContain('xray:');
    expect(JSON.stringify(resourcesOf(prod.stateless, 'AWS::IAM::Policy'))).toContain('xray:PutTraceSegments');
    const functions = Object.values(resourcesOf(adopted.stateless, 'AWS::Lambda::Function')).filter((r) =>
      String(r.Properties.FunctionName).startsWith('payrelay-adopted-'),
    );
    expect(functions.map((r) => r.Properties.FunctionName).sort()).toEqual(Object.values(FUNCTIONS).map((d) => `payrelay-adopted-${d.id}`).sort());
    for (const fn of functions) {
      const name = String(fn.Properties.FunctionName);
      expect(fn.Properties.TracingConfig, name).toBeUndefined();
      expect((fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables, name).toMatchObject({ POWERTOOLS_TRACE_ENABLED: 'false' });
    }
    for (const definition of deployed(prod.stateless)) {
      expect((functionProps(prod.stateless, definition.id).Environment as { Variables: Record<string, unknown> }).Variables).not.toHaveProperty('POWERTOOLS_TRACE_ENABLED');
    }
  });

  // The exact action set of every role, read off the adapters each function's code path uses
  // (infra/access.ts). A new action fails here until it is added on purpose.
  it('each get exactly the IAM actions their code performs', () => {
    expect(grantsOf(prod.stateless, 'payout-worker')).toEqual({
      '*': [...ENI, ...XRAY].sort(),
      OwnLogGroup: LOGS,
      PayoutsTable: dynamo('GetItem', 'PutItem'),
      KycTable: dynamo('GetItem', 'PutItem'),
      // Before a refusal, the gate applies the user's stored callbacks not yet applied: listed by reference, read, recorded.
      EventsTable: dynamo('GetItem', 'UpdateItem'),
      'EventsTable/index/by-reference': dynamo('Query'),
      ProviderSecret: SECRET_READ,
      // The key of the account fingerprints each new payout stores.
      AccountKeySecret: SECRET_READ,
      KycSecret: SECRET_READ,
      PayoutsDlq: ['sqs:SendMessage'],
      // The event source's set; ChangeMessageVisibility is also the worker's own grant (a Retry-After delays a message).
      PayoutsQueue: CONSUME,
      // The first delayed check of each submitted payout.
      PayoutChecksQueue: ['sqs:SendMessage'],
    });
    expect(grantsOf(prod.stateless, 'reconciler')).toEqual({
      '*': [...ENI, ...XRAY].sort(),
      OwnLogGroup: LOGS,
      PayoutsTable: dynamo('GetItem', 'PutItem'),
      'PayoutsTable/index/open-by-next-check': dynamo('Query'),
      // The reversal watch reads the successes by age from the listing index.
      'PayoutsTable/index/by-state': dynamo('Query'),
      // Where "not found" for the whole grace period would decide a payout: the stored notifications naming it, read only.
      EventsTable: dynamo('GetItem'),
      'EventsTable/index/by-reference': dynamo('Query'),
      ProviderSecret: SECRET_READ,
      PayoutChecksQueue: ['sqs:SendMessage'],
    });
    // One payout per check: never the index. It consumes the checks queue and sends the next check.
    expect(grantsOf(prod.stateless, 'payout-checker')).toEqual({
      '*': [...ENI, ...XRAY].sort(),
      OwnLogGroup: LOGS,
      PayoutsTable: dynamo('GetItem', 'PutItem'),
      // The reconciler's decision: the same read-only look at the stored notifications naming a payout.
      EventsTable: dynamo('GetItem'),
      'EventsTable/index/by-reference': dynamo('Query'),
      ProviderSecret: SECRET_READ,
      PayoutChecksQueue: [...new Set([...CONSUME, 'sqs:SendMessage'])].sort(),
    });
    // The receivers store and answer: one conditional PutItem on the events table, nothing they would apply.
    expect(grantsOf(prod.stateless, 'kyc-callback')).toEqual({
      '*': XRAY,
      OwnLogGroup: LOGS,
      EventsTable: dynamo('PutItem'),
      KycSecret: SECRET_READ,
    });
    expect(grantsOf(prod.stateless, 'payout-notification')).toEqual({
      '*': XRAY,
      OwnLogGroup: LOGS,
      EventsTable: dynamo('PutItem'),
      // Only the quarantine's throttled nudge of the payout a mismatched notification names.
      PayoutsTable: dynamo('UpdateItem'),
      'PayoutsTable/index/by-withdrawal-reference': dynamo('Query'),
      // The quarantine of mismatched notifications: the hour counter (UpdateItem), the kept body (PutItem).
      QuarantineTable: dynamo('PutItem', 'UpdateItem'),
      ProviderSecret: SECRET_READ,
    });
    // The applier: the stream's reads (event source), the sweep's index, the apply record, and the projections.
    expect(grantsOf(prod.stateless, 'callback-applier')).toEqual({
      // The stream event source lists streams account-wide (ListStreams has no resource-level scoping).
      '*': [...XRAY, 'dynamodb:ListStreams'].sort(),
      OwnLogGroup: LOGS,
      EventsTable: [...dynamo('GetItem', 'UpdateItem'), ...STREAM_READ.filter((a) => a !== 'dynamodb:ListStreams')].sort(),
      'EventsTable/index/not-yet-applied': dynamo('Query'),
      KycTable: dynamo('GetItem', 'PutItem'),
      PayoutsTable: dynamo('UpdateItem'),
      'PayoutsTable/index/by-withdrawal-reference': dynamo('Query'),
      CollectionsTable: dynamo('GetItem', 'PutItem'),
      // The stream's failure destination: records every retry failed on.
      CallbackApplyFailures: ['sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:SendMessage'],
    });
    // The scheduled catch-up stores and applies like the KYC receiver; it calls the KYC service, so it runs in the egress VPC.
    expect(grantsOf(prod.stateless, 'kyc-catch-up')).toEqual({
      '*': [...ENI, ...XRAY].sort(),
      OwnLogGroup: LOGS,
      EventsTable: dynamo('PutItem'),
      KycTable: dynamo('GetItem', 'PutItem'),
      KycSecret: SECRET_READ,
    });
  });

  it('give the worker the KYC table, the events table and the KYC secret only when KYC gating is on', () => {
    expect(grantsOf(dev.stateless, 'payout-worker')).toEqual({
      '*': XRAY,
      OwnLogGroup: LOGS,
      PayoutsTable: dynamo('GetItem', 'PutItem'),
      ProviderSecret: SECRET_READ,
      AccountKeySecret: SECRET_READ,
      PayoutsDlq: ['sqs:SendMessage'],
      PayoutsQueue: CONSUME,
      PayoutChecksQueue: ['sqs:SendMessage'],
    });
    const env = (functionProps(dev.stateless, 'payout-worker').Environment as { Variables: Record<string, unknown> }).Variables;
    expect(Object.keys(env)).not.toEqual(expect.arrayContaining(['KYC_TABLE_NAME']));
    expect(env.EVENTS_TABLE_NAME).toBeUndefined();
    expect(env.KYC_SECRET_ID).toBeUndefined();
    expect(env.KYC_API_BASE_URL).toBeUndefined();
  });

  it('never let a webhook function Scan, DeleteItem or BatchWriteItem, nor any function manage tables', () => {
    for (const template of [prod.stateless, dev.stateless]) {
      for (const definition of deployed(template)) {
        const actions = Object.values(grantsOf(template, definition.id)).flat();
        // Stream reads only for the applier, the one function the events table's stream triggers.
        const streamReads = definition.id === FUNCTIONS.callbackApplier.id ? STREAM_READ : [];
        const managing = actions.filter((a) => /^dynamodb:((Create|Delete|Update)Table|\*|PartiQL.*|.*Stream.*)$/.test(a) && !streamReads.includes(a));
        expect(managing, definition.id).toEqual([]);
        if (definition.callsProvider) continue;
        expect(actions.filter((a) => ['dynamodb:Scan', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'].includes(a)), definition.id).toEqual([]);
      }
    }
  });

  it('scope logs to each function\'s own log group: no AWS-managed policy on any role', () => {
    for (const template of [prod.stateless, dev.stateless]) {
      for (const role of Object.values(resourcesOf(template, 'AWS::IAM::Role'))) {
        if (!JSON.stringify(role.Properties.AssumeRolePolicyDocument).includes('lambda.amazonaws.com')) continue;
        expect(role.Properties.ManagedPolicyArns).toBeUndefined();
      }
      for (const definition of deployed(template)) {
        const logActions = Object.entries(grantsOf(template, definition.id)).filter(([, actions]) => actions.some((a) => a.startsWith('logs:')));
        expect(logActions, definition.id).toEqual([['OwnLogGroup', LOGS]]);
      }
    }
  });

  it('scope table grants to the named indexes, never index/*', () => {
    const text = JSON.stringify(resourcesOf(prod.stateless, 'AWS::IAM::Policy'));
    expect(text).not.toContain('/index/*');
    expect(text).toContain('/index/open-by-next-check');
  });

  it('set no variable to a blank value: the functions refuse one at start, so "unset" is always left out', () => {
    for (const { stateless } of [prod, dev, adopted]) {
      const functions = Object.values(resourcesOf(stateless, 'AWS::Lambda::Function'));
      expect(functions.length).toBeGreaterThanOrEqual(Object.keys(FUNCTIONS).length);
      for (const { Properties } of functions) {
        const variables = (Properties.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {};
        const blank = Object.entries(variables).filter(([, value]) => typeof value === 'string' && value.trim() === '');
        expect(blank, String(Properties.FunctionName)).toEqual([]);
      }
    }
  });

  it('get the env var of each resource they were granted, and only their own settings', () => {
    const env = (id: string) => (functionProps(prod.stateless, id).Environment as { Variables: Record<string, unknown> }).Variables;
    expect(Object.keys(env('payout-worker'))).toEqual(
      expect.arrayContaining(['PAYOUTS_TABLE_NAME', 'KYC_TABLE_NAME', 'EVENTS_TABLE_NAME', 'PROVIDER_SECRET_ID', 'KYC_SECRET_ID', 'PAYOUTS_DLQ_URL', 'PAYOUTS_QUEUE_URL', 'PAYOUT_API_BASE_URL', 'KYC_API_BASE_URL']),
    );
    expect(env('payout-worker').KYC_GATING).toBe('on');
    expect(env('payout-worker').PAYOUTS_MAX_RECEIVE_COUNT).toBe('7');
    // Unless a stage sets it, a whole SQS batch is processed at once.
    expect(env('payout-worker').WORKER_CONCURRENCY).toBe('3');
    expect(env('kyc-callback').KYC_GATING).toBeUndefined();
    expect(env('kyc-callback').WEBHOOK_ALLOWED_IPS).toBe('203.0.113.0/24,198.51.100.7');
    expect(env('kyc-callback').PAYOUTS_TABLE_NAME).toBeUndefined();
    expect(env('payout-notification').PROVIDER_SECRET_ID).toBeDefined();
    expect(env('reconciler').PAYOUT_API_BASE_URL).toBe(base.payoutApiBaseUrl);
    expect(env('reconciler').KYC_TABLE_NAME).toBeUndefined();
    // The gateway-error review window is the reconciler's setting alone.
    expect(env('reconciler').GATEWAY_ERROR_REVIEW_MINUTES).toBe('90');
    // The schedule's interval, set even at its default: the review gauge counts once per window of it.
    expect(env('reconciler').RECONCILE_EVERY_MINUTES).toBe('2');
    expect((functionProps(dev.stateless, 'reconciler').Environment as { Variables: Record<string, unknown> }).Variables.RECONCILE_EVERY_MINUTES).toBe('1');
    expect(env('payout-worker').RECONCILE_EVERY_MINUTES).toBeUndefined();
    expect(env('payout-worker').GATEWAY_ERROR_REVIEW_MINUTES).toBeUndefined();
    for (const id of ['payout-worker', 'reconciler', 'kyc-callback', 'payout-notification']) expect(env(id).PAYRELAY_STAGE).toBe('prod');
    expect(env('kyc-callback').KYC_API_BASE_URL).toBeUndefined();
    expect(env('kyc-catch-up')).toMatchObject({
      KYC_API_BASE_URL: base.kycApiBaseUrl,
      KYC_CATCH_UP_LOOKBACK_HOURS: '48',
      PAYRELAY_STAGE: 'prod',
      EVENTS_TABLE_NAME: expect.anything(),
      KYC_TABLE_NAME: expect.anything(),
      KYC_SECRET_ID: expect.anything(),
    });
    expect(Object.keys(env('kyc-catch-up')).filter((k) => /PAYOUT|PROVIDER_SECRET|QUARANTINE|WEBHOOK/.test(k))).toEqual([]);
  });

  it('consumes the payouts queue with partial batch failures, the batch size and a maximum concurrency', () => {
    // Three mappings: the payouts queue (worker), the checks queue (payout checker) and the events stream (callback applier).
    prod.stateless.resourceCountIs('AWS::Lambda::EventSourceMapping', 3);
    prod.stateless.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: functionLogicalId(prod.stateless, 'payout-worker') },
      BatchSize: 3,
      ScalingConfig: { MaximumConcurrency: 4 },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    const mapping = Object.values(resourcesOf(prod.stateless, 'AWS::Lambda::EventSourceMapping')).find(
      (m) => JSON.stringify(m.Properties.FunctionName) === JSON.stringify({ Ref: functionLogicalId(prod.stateless, 'payout-worker') }),
    );
    expect(JSON.stringify(mapping?.Properties.EventSourceArn)).toContain('PayoutsQueue');
  });

  it('consumes the checks queue with the payout checker, two batches at most at once', () => {
    prod.stateless.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: functionLogicalId(prod.stateless, 'payout-checker') },
      BatchSize: 10,
      ScalingConfig: { MaximumConcurrency: 2 },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    const mappings = Object.values(resourcesOf(prod.stateless, 'AWS::Lambda::EventSourceMapping'));
    const ofChecker = mappings.find((m) => JSON.stringify(m.Properties.FunctionName).includes(functionLogicalId(prod.stateless, 'payout-checker')));
    expect(JSON.stringify(ofChecker?.Properties.EventSourceArn)).toContain('PayoutChecksQueue');
  });

  it('applies stored callbacks from the events stream: inserts of recognized events only, bisected, retried, then to an encrypted failure queue', () => {
    for (const stage of [prod, dev]) {
      stage.stateful.hasResourceProperties('AWS::DynamoDB::Table', {
        TableName: resourceName(stage === prod ? 'prod' : 'dev', EVENTS_TABLE.id),
        StreamSpecification: { StreamViewType: 'NEW_IMAGE' },
      });
      stage.stateful.hasResourceProperties('AWS::SQS::Queue', {
        QueueName: resourceName(stage === prod ? 'prod' : 'dev', CALLBACK_APPLY_FAILURES_QUEUE.id),
        SqsManagedSseEnabled: true,
      });
    }
    const mapping = Object.values(resourcesOf(prod.stateless, 'AWS::Lambda::EventSourceMapping')).find(
      (m) => JSON.stringify(m.Properties.FunctionName) === JSON.stringify({ Ref: functionLogicalId(prod.stateless, 'callback-applier') }),
    );
    expect(mapping?.Properties).toMatchObject({
      StartingPosition: 'TRIM_HORIZON',
      BisectBatchOnFunctionError: true,
      MaximumRetryAttempts: 5,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    expect(JSON.stringify(mapping?.Properties.EventSourceArn)).toMatch(/EventsTable.*StreamArn/);
    expect(JSON.stringify(mapping?.Properties.DestinationConfig)).toContain('CallbackApplyFailures');
    const filters = (mapping?.Properties.FilterCriteria as { Filters: Array<{ Pattern: string }> }).Filters.map((f) => JSON.parse(f.Pattern) as unknown);
    expect(filters).toEqual([{ eventName: ['INSERT'], dynamodb: { NewImage: { applyShard: { S: [{ exists: true }] } } } }]);
    // The sweep: the same function on a schedule, for anything the stream left.
    prod.stateless.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: `rate(${APPLY_SWEEP_EVERY_MINUTES} minutes)`,
      Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [functionLogicalId(prod.stateless, 'callback-applier'), 'Arn'] } })],
    });
  });

  it('runs the reconciler on the configured schedule', () => {
    prod.stateless.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(2 minutes)',
      State: 'ENABLED',
      Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [functionLogicalId(prod.stateless, 'reconciler'), 'Arn'] } })],
    });
    dev.stateless.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'rate(1 minute)' });
    // The reconcile schedule and the callback applier's sweep.
    dev.stateless.resourceCountIs('AWS::Events::Rule', 2);
    prod.stateless.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: functionLogicalId(prod.stateless, 'reconciler') },
      MaximumRetryAttempts: 0,
      // A tick throttled behind a running reconcile is dropped after one interval, never queued for hours.
      MaximumEventAgeInSeconds: 120,
    });
  });

  it('synthesizes the longest reconcile interval the configuration accepts (the tick\'s maximumEventAge is at most 6 hours)', () => {
    const { app } = buildTestApp({ ...base, stage: 'slow', removalPolicy: 'destroy', reconcileEveryMinutes: MAX_RECONCILE_EVERY_MINUTES });
    const template = Template.fromJSON(app.synth().getStackByName(stackNames('slow').stateless).template as Record<string, unknown>);
    template.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'rate(6 hours)' });
    template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', { MaximumEventAgeInSeconds: 21_600, MaximumRetryAttempts: 0 });
    // Every 6-hour run counts the review gauge, so its alarm's period is the schedule's (a 5-minute one would show dots).
    template.hasResourceProperties('AWS::CloudWatch::Alarm', { AlarmName: 'payrelay-slow-PayoutsAwaitingReview', Period: 21_600, TreatMissingData: 'ignore' });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', { AlarmName: 'payrelay-slow-PayoutAwaitingReviewTooLong', Period: 21_600, TreatMissingData: 'ignore' });
    const notCounted = Object.values(template.findResources('AWS::CloudWatch::Alarm') as Resources).find((a) => a.Properties.AlarmName === 'payrelay-slow-PayoutsAwaitingReviewNotCounted')?.Properties;
    expect(notCounted).toMatchObject({ EvaluationPeriods: 3 });
    expect(JSON.stringify(notCounted?.Metrics).match(/"Period":\d+/g)).toEqual(['"Period":21600', '"Period":21600']);
    // CloudWatch refuses an alarm whose periods span more than a day (seven days for periods of an hour or more).
    for (const alarm of Object.values(template.findResources('AWS::CloudWatch::Alarm') as Resources)) {
      const { AlarmName, EvaluationPeriods, Period, Metrics } = alarm.Properties as { AlarmName: string; EvaluationPeriods: number; Period?: number; Metrics?: Array<{ MetricStat?: { Period: number } }> };
      const seconds = Period ?? Math.max(...(Metrics ?? []).map((m) => m.MetricStat?.Period ?? 0));
      expect(seconds * EvaluationPeriods, AlarmName).toBeLessThanOrEqual(seconds >= 3600 ? 7 * 86_400 : 86_400);
    }
  }, 120_000);

  it('runs the KYC catch-up on its schedule only where the stage sets kycCatchUp', () => {
    prod.stateless.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(1 day)',
      State: 'ENABLED',
      Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [functionLogicalId(prod.stateless, 'kyc-catch-up'), 'Arn'] } })],
    });
    expect(functionProps(prod.stateless, 'kyc-catch-up').Timeout).toBe(KYC_CATCH_UP_FUNCTION.timeoutSeconds);
    const devNames = Object.values(resourcesOf(dev.stateless, 'AWS::Lambda::Function')).map((f) => f.Properties.FunctionName);
    expect(devNames).not.toContain('payrelay-dev-kyc-catch-up');
  });

  it('never runs two reconciler runs at once: reserved concurrency 1, and only the reconciler reserves any', () => {
    for (const [template, stage] of [[prod.stateless, 'prod'], [dev.stateless, 'dev']] as const) {
      const functions = Object.values(resourcesOf(template, 'AWS::Lambda::Function'));
      const reserved = functions.filter((f) => f.Properties.ReservedConcurrentExecutions !== undefined);
      expect(reserved.map((f) => [f.Properties.FunctionName, f.Properties.ReservedConcurrentExecutions])).toEqual([[`payrelay-${stage}-reconciler`, 1]]);
    }
  });
});

describe('callback API', () => {
  it('keeps its custom domain in the data stack and maps the API to it from the app stack, so the URLs survive a recreated app stack', () => {
    prod.stateful.hasResourceProperties('AWS::ApiGatewayV2::DomainName', {
      DomainName: 'callbacks.example.com',
      DomainNameConfigurations: [Match.objectLike({ CertificateArn: CERTIFICATE_ARN, EndpointType: 'REGIONAL', SecurityPolicy: 'TLS_1_2' })],
    });
    expect(Object.values(resourcesOf(prod.stateful, 'AWS::ApiGatewayV2::DomainName'))[0]?.DeletionPolicy).toBe('Retain');
    prod.stateless.resourceCountIs('AWS::ApiGatewayV2::DomainName', 0);
    prod.stateless.hasResourceProperties('AWS::ApiGatewayV2::ApiMapping', { DomainName: Match.anyValue(), Stage: Match.anyValue() });
    const outputs = prod.stateless.toJSON().Outputs as Record<string, { Value: unknown }>;
    expect(outputs[OUTPUT.payoutNotificationUrl]?.Value).toBe('https://callbacks.example.com/callbacks/payout-notifications');
    expect(outputs[OUTPUT.kycCallbackBaseUrl]?.Value).toBe('https://callbacks.example.com/callbacks/kyc/');
    expect(JSON.stringify(outputs[OUTPUT.apiDomainTarget]?.Value)).toContain('RegionalDomainName');
    // Without a domain: the default hostname, no mapping.
    dev.stateless.resourceCountIs('AWS::ApiGatewayV2::ApiMapping', 0);
    expect(JSON.stringify((dev.stateless.toJSON().Outputs as Record<string, { Value: unknown }>)[OUTPUT.payoutNotificationUrl]?.Value)).toContain('execute-api');
  });

  it('turns the default execute-api hostname off when the API has a custom domain, and keeps it when it is the only URL', () => {
    prod.stateless.hasResourceProperties('AWS::ApiGatewayV2::Api', { Name: 'payrelay-prod-callbacks', DisableExecuteApiEndpoint: true });
    for (const template of [dev.stateless, adopted.stateless]) {
      const apis = Object.values(resourcesOf(template, 'AWS::ApiGatewayV2::Api'));
      expect(apis).toHaveLength(1);
      expect(apis[0]?.Properties.DisableExecuteApiEndpoint).not.toBe(true);
    }
  });

  it('warns a retained stage that has no custom domain', () => {
    const warnings = adopted.assembly.getStackByName(stackNames(adopted.payrelay.config.stage).stateless).messages.filter((m) => m.level === 'warning');
    expect(warnings.map((w) => String(w.entry.data))).toEqual(expect.arrayContaining([expect.stringMatching(/api\.domain is not set/)]));
    const devWarnings = dev.assembly.getStackByName(stackNames(dev.payrelay.config.stage).stateless).messages.map((m) => String(m.entry.data));
    expect(devWarnings.join()).not.toMatch(/api\.domain is not set/);
  });

  it('serves exactly the ROUTES of shared/config/functions.ts, each on its function', () => {
    const routes = Object.values(resourcesOf(prod.stateless, 'AWS::ApiGatewayV2::Route'));
    expect(routes.map((r) => r.Properties.RouteKey).sort()).toEqual(ROUTES.map((r) => `${r.method} ${r.path}`).sort());
    const integrations = resourcesOf(prod.stateless, 'AWS::ApiGatewayV2::Integration');
    for (const route of ROUTES) {
      const r = routes.find((x) => x.Properties.RouteKey === `${route.method} ${route.path}`);
      const integrationId = JSON.stringify(r?.Properties.Target).match(/"(\w+Integration\w*)"/)?.[1] ?? '';
      expect(JSON.stringify(integrations[integrationId]?.Properties.IntegrationUri)).toContain(functionLogicalId(prod.stateless, route.functionId));
    }
  });

  it('throttles the stage and writes access logs without the request path (it holds the KYC token)', () => {
    prod.stateless.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: '$default',
      DefaultRouteSettings: { ThrottlingRateLimit: 50, ThrottlingBurstLimit: 100 },
      AccessLogSettings: { DestinationArn: Match.anyValue(), Format: Match.stringLikeRegexp('routeKey') },
    });
    const stage = Object.values(resourcesOf(prod.stateless, 'AWS::ApiGatewayV2::Stage'))[0];
    const format = (stage?.Properties.AccessLogSettings as { Format: string }).Format;
    expect(format).not.toMatch(/\$context\.(path|routePath|http\.path)/);
  });
});

describe('static egress', () => {
  it('puts only the provider-calling functions in private subnets behind NAT gateways with Elastic IPs', () => {
    prod.stateful.resourceCountIs('AWS::EC2::EIP', 2);
    prod.stateful.resourceCountIs('AWS::EC2::NatGateway', 2);
    prod.stateful.resourceCountIs('AWS::EC2::FlowLog', 1);
    const endpoints = Object.values(resourcesOf(prod.stateful, 'AWS::EC2::VPCEndpoint'));
    expect(endpoints.map((e) => [e.Properties.VpcEndpointType, JSON.stringify(e.Properties.ServiceName).includes('.dynamodb')])).toEqual([['Gateway', true]]);
    for (const definition of deployed(prod.stateless)) {
      const fn = functionProps(prod.stateless, definition.id);
      expect(fn.VpcConfig !== undefined, definition.id).toBe(definition.callsProvider);
    }
    prod.stateless.hasResourceProperties('AWS::EC2::SecurityGroup', {
      SecurityGroupEgress: Match.arrayWith([Match.objectLike({ FromPort: 443, ToPort: 443 }), Match.objectLike({ FromPort: 8443, ToPort: 8443 })]),
    });
  });

  it('lists in EgressIps exactly the IPs the NAT gateways hold', () => {
    const natAllocations = (template: Template) =>
      Object.values(resourcesOf(template, 'AWS::EC2::NatGateway')).map((n) => JSON.stringify(n.Properties.AllocationId));
    const eipIds = Object.keys(resourcesOf(prod.stateful, 'AWS::EC2::EIP')).sort();
    expect(natAllocations(prod.stateful).map((a) => eipIds.find((id) => a.includes(id)))).toEqual(eipIds);
    const egressOutput = JSON.stringify((prod.stateless.toJSON().Outputs as Record<string, { Value: unknown }>)[OUTPUT.egressIps]?.Value);
    expect(eipIds.filter((id) => egressOutput.includes(id))).toEqual(eipIds);
  });

  it('reuses Elastic IPs kept from an earlier deploy instead of allocating new ones', () => {
    adopted.stateful.resourceCountIs('AWS::EC2::EIP', 0);
    const allocations = Object.values(resourcesOf(adopted.stateful, 'AWS::EC2::NatGateway')).map((n) => n.Properties.AllocationId);
    expect(allocations.sort()).toEqual(ADOPTED_IPS.map((ip) => ip.allocationId).sort());
    expect((adopted.stateless.toJSON().Outputs as Record<string, { Value: unknown }>)[OUTPUT.egressIps]?.Value).toBe('203.0.113.10,203.0.113.11');
  });

  it('refuses more NAT gateways than the stack has availability zones', () => {
    expect(() => buildTestApp({ ...base, stage: 'three', egress: { staticIps: true, natGateways: 3 }, alarms: { topicArn: PAGING_TOPIC_ARN } })).toThrow(
      /egress\.natGateways: 3 NAT gateways need 3 availability zones, but payrelay-three-data has 2 \(an environment-agnostic stack always has 2/,
    );
  });

  it('is off by default: no VPC, no NAT, functions outside any VPC', () => {
    dev.stateful.resourceCountIs('AWS::EC2::VPC', 0);
    dev.stateful.resourceCountIs('AWS::EC2::EIP', 0);
    for (const definition of Object.values(FUNCTIONS)) expect(functionProps(dev.stateless, definition.id).VpcConfig).toBeUndefined();
  });
});

describe('alarms and dashboard', () => {
  const alarmNamed = (template: Template, name: string) => {
    const found = Object.values(resourcesOf(template, 'AWS::CloudWatch::Alarm')).find((a) => a.Properties.AlarmName === name)?.Properties;
    if (!found) throw new Error(`no alarm ${name}`);
    return found;
  };
  // The stage is a dimension: two stages in one account and region never set off each other's alarms.
  const service = [{ Name: 'service', Value: METRICS_SERVICE }, { Name: 'stage', Value: 'prod' }];
  /** An alarm that fires on any count of a payrelay metric in a period, and stays quiet without data. */
  const anyCount = (metricName: string) => ({
    MetricName: metricName,
    Namespace: METRICS_NAMESPACE,
    Dimensions: service,
    Statistic: 'Sum',
    Threshold: 0,
    ComparisonOperator: 'GreaterThanThreshold',
    TreatMissingData: 'notBreaching',
  });
  /** The stage-wide alarms, an errors and a throttles alarm per function, and KycCallbacksRecovered with the catch-up (prod). */
  const alarmCount = (template: Template) => 18 + 2 * deployed(template).length + (template === prod.stateless ? 1 : 0);

  it('alarm on the queues: DLQ depth and the age of the oldest payout request', () => {
    expect(alarmNamed(prod.stateless, 'payrelay-prod-DlqNotEmpty')).toMatchObject({
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Namespace: 'AWS/SQS',
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
      TreatMissingData: 'notBreaching',
    });
    const stale = alarmNamed(prod.stateless, 'payrelay-prod-PayoutsQueueStale');
    expect(stale).toMatchObject({
      MetricName: 'ApproximateAgeOfOldestMessage',
      Namespace: 'AWS/SQS',
      Statistic: 'Maximum',
      Threshold: 15 * 60,
      ComparisonOperator: 'GreaterThanThreshold',
      TreatMissingData: 'notBreaching',
    });
    // The payouts queue, not the DLQ.
    expect(JSON.stringify(stale.Dimensions)).toMatch(/PayoutsQueue(?!Dlq)/);
    expect(JSON.stringify(stale.Dimensions)).not.toContain('Dlq');
    expect(JSON.stringify(alarmNamed(prod.stateless, 'payrelay-prod-DlqNotEmpty').Dimensions)).toMatch(/PayoutsDlq/);
  });

  it('alarm when a delayed payout check lands in the checks DLQ (the checker is failing)', () => {
    const checks = alarmNamed(prod.stateless, 'payrelay-prod-PayoutChecksDlqNotEmpty');
    expect(checks).toMatchObject({
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Namespace: 'AWS/SQS',
      Statistic: 'Maximum',
      Period: 60,
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
      TreatMissingData: 'notBreaching',
    });
    expect(JSON.stringify(checks.Dimensions)).toMatch(/PayoutChecksDlq/);
    expect(alarmNamed(dev.stateless, 'payrelay-dev-PayoutChecksDlqNotEmpty')).toBeDefined();
  });

  it('alarm when the worker fails whole batches and when the reconciler stops running (missing data breaches)', () => {
    expect(alarmNamed(prod.stateless, 'payrelay-prod-WorkerBatchFailed')).toMatchObject(anyCount(METRIC.workerBatchFailed));
    // prod runs the reconciler every 2 minutes: three 2-minute periods without a finished run.
    expect(alarmNamed(prod.stateless, 'payrelay-prod-ReconcilerHeartbeat')).toMatchObject({
      MetricName: METRIC.reconcileRunCompleted,
      Namespace: METRICS_NAMESPACE,
      Dimensions: service,
      Statistic: 'Sum',
      Period: 120,
      EvaluationPeriods: 3,
      DatapointsToAlarm: 3,
      Threshold: 1,
      ComparisonOperator: 'LessThanThreshold',
      TreatMissingData: 'breaching',
    });
    expect(alarmNamed(dev.stateless, 'payrelay-dev-ReconcilerHeartbeat')).toMatchObject({ Period: 60, EvaluationPeriods: 3 });
  });

  it('alarm on payouts entering NEEDS_REVIEW or REVERSED, and on UNKNOWN payouts older than the setting', () => {
    for (const [name, metricName] of [['PayoutNeedsReview', METRIC.payoutNeedsReview], ['PayoutReversed', METRIC.payoutReversed]] as const) {
      expect(alarmNamed(prod.stateless, `payrelay-prod-${name}`), name).toMatchObject(anyCount(metricName));
    }
    expect(alarmNamed(prod.stateless, 'payrelay-prod-UnknownPayoutTooOld')).toMatchObject({
      MetricName: METRIC.oldestUnknownAgeSeconds,
      Statistic: 'Maximum',
      Dimensions: service,
      Period: OLDEST_UNKNOWN_WINDOW_MINUTES * 60,
      Threshold: 30 * 60,
      TreatMissingData: 'notBreaching',
    });
    // Every UNKNOWN payout is checked at least once per window, so a window never misses one.
    expect(Math.max(...CHECK_BACKOFF_MINUTES)).toBeLessThanOrEqual(OLDEST_UNKNOWN_WINDOW_MINUTES);
  });

  it('alarm while any payout waits for a person (the PayoutsAwaitingReview gauge), and send OK once none waits', () => {
    const topicId = Object.keys(resourcesOf(prod.stateless, 'AWS::SNS::Topic'))[0];
    // prod runs the reconciler every 2 minutes: one count per 5-minute window, so one per period.
    expect(alarmNamed(prod.stateless, 'payrelay-prod-PayoutsAwaitingReview')).toMatchObject({
      MetricName: METRIC.payoutsAwaitingReview,
      Namespace: METRICS_NAMESPACE,
      Dimensions: service,
      Statistic: 'Maximum',
      Period: REVIEW_GAUGE_EVERY_MINUTES * 60,
      EvaluationPeriods: 1,
      DatapointsToAlarm: 1,
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
      // A period without a count holds the state: never an OK for silence, never a re-sent alarm.
      TreatMissingData: 'ignore',
      AlarmActions: [{ Ref: topicId }],
      OKActions: [{ Ref: topicId }],
    });
    expect(alarmNamed(dev.stateless, 'payrelay-dev-PayoutsAwaitingReview')).toMatchObject({ Period: REVIEW_GAUGE_EVERY_MINUTES * 60, TreatMissingData: 'ignore' });
    expect(alarmNamed(adopted.stateless, 'payrelay-adopted-PayoutsAwaitingReview')).toMatchObject({ AlarmActions: [PAGING_TOPIC_ARN], OKActions: [PAGING_TOPIC_ARN] });
    // The hand-over alarm stays per event, without OK.
    expect(alarmNamed(prod.stateless, 'payrelay-prod-PayoutNeedsReview').OKActions).toBeUndefined();
  });

  it('alarm when a payout has waited for a person longer than alarms.reviewWaitHours (the oldest NEEDS_REVIEW), and send OK once none has', () => {
    const topicId = Object.keys(resourcesOf(prod.stateless, 'AWS::SNS::Topic'))[0];
    // prod sets 8 hours; the figure is published in seconds, one per gauge window, beside the count.
    expect(alarmNamed(prod.stateless, 'payrelay-prod-PayoutAwaitingReviewTooLong')).toMatchObject({
      MetricName: METRIC.oldestPayoutAwaitingReviewSeconds,
      Namespace: METRICS_NAMESPACE,
      Dimensions: service,
      Statistic: 'Maximum',
      Period: REVIEW_GAUGE_EVERY_MINUTES * 60,
      EvaluationPeriods: 1,
      DatapointsToAlarm: 1,
      Threshold: 8 * 3600,
      ComparisonOperator: 'GreaterThanThreshold',
      // As the count's alarm: a period without a figure holds the state, never an OK for silence.
      TreatMissingData: 'ignore',
      AlarmActions: [{ Ref: topicId }],
      OKActions: [{ Ref: topicId }],
    });
    expect(String(alarmNamed(prod.stateless, 'payrelay-prod-PayoutAwaitingReviewTooLong').AlarmDescription)).toMatch(/more than 8 hours.*docs\/alarms\.md#payoutawaitingreviewtoolong\.$/);
    // The default: a day.
    expect(alarmNamed(dev.stateless, 'payrelay-dev-PayoutAwaitingReviewTooLong')).toMatchObject({ Threshold: 24 * 3600, Period: REVIEW_GAUGE_EVERY_MINUTES * 60, TreatMissingData: 'ignore' });
    expect(alarmNamed(adopted.stateless, 'payrelay-adopted-PayoutAwaitingReviewTooLong')).toMatchObject({ AlarmActions: [PAGING_TOPIC_ARN], OKActions: [PAGING_TOPIC_ARN] });
  });

  it('alarm when finished reconciler runs publish no PayoutsAwaitingReview count for 3 periods (that alarm would hold a stale state), quiet where no run finished', () => {
    const topicId = Object.keys(resourcesOf(prod.stateless, 'AWS::SNS::Topic'))[0];
    const period = REVIEW_GAUGE_EVERY_MINUTES * 60;
    const notCounted = alarmNamed(prod.stateless, 'payrelay-prod-PayoutsAwaitingReviewNotCounted');
    expect(notCounted).toMatchObject({
      EvaluationPeriods: 3,
      DatapointsToAlarm: 3,
      Threshold: 1,
      ComparisonOperator: 'LessThanThreshold',
      // A period without a finished run is no data: it holds the state (ReconcilerHeartbeat's case), so a
      // new stage does not fire before its first run, as "breaching" would at its first evaluation.
      TreatMissingData: 'ignore',
      AlarmActions: [{ Ref: topicId }],
      OKActions: [{ Ref: topicId }],
    });
    // Per period: the samples of the gauge where a run finished, 0 where runs finished without one.
    expect(notCounted.Metrics).toEqual([
      expect.objectContaining({ Expression: 'IF(runs, counted, 0)', ReturnData: true }),
      {
        Id: 'runs',
        MetricStat: { Metric: { MetricName: METRIC.reconcileRunCompleted, Namespace: METRICS_NAMESPACE, Dimensions: service }, Stat: 'Sum', Period: period },
        ReturnData: false,
      },
      {
        Id: 'counted',
        MetricStat: { Metric: { MetricName: METRIC.payoutsAwaitingReview, Namespace: METRICS_NAMESPACE, Dimensions: service }, Stat: 'SampleCount', Period: period },
        ReturnData: false,
      },
    ]);
    expect(notCounted.MetricName).toBeUndefined();
    expect(alarmNamed(dev.stateless, 'payrelay-dev-PayoutsAwaitingReviewNotCounted')).toMatchObject({ EvaluationPeriods: 3, TreatMissingData: 'ignore' });
    expect(alarmNamed(adopted.stateless, 'payrelay-adopted-PayoutsAwaitingReviewNotCounted')).toMatchObject({ AlarmActions: [PAGING_TOPIC_ARN], OKActions: [PAGING_TOPIC_ARN] });
  });

  it('alarm when a stored callback fails every stream retry, and when the sweep finds one applied late', () => {
    expect(alarmNamed(prod.stateless, 'payrelay-prod-CallbackApplyFailed')).toMatchObject({
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Namespace: 'AWS/SQS',
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
    });
    expect(JSON.stringify(alarmNamed(prod.stateless, 'payrelay-prod-CallbackApplyFailed').Dimensions)).toContain('CallbackApplyFailures');
    expect(alarmNamed(prod.stateless, 'payrelay-prod-CallbacksAppliedLate')).toMatchObject(anyCount(METRIC.callbacksAppliedLate));
  });

  it('alarm on an authentic callback payrelay does not recognize, on a KYC answer that changed, and on a contradicted collection', () => {
    expect(alarmNamed(prod.stateless, 'payrelay-prod-WebhookUnrecognized')).toMatchObject(anyCount(METRIC.webhookUnrecognized));
    expect(alarmNamed(prod.stateless, 'payrelay-prod-KycDecisionChanged')).toMatchObject(anyCount(METRIC.kycDecisionChanged));
    expect(alarmNamed(prod.stateless, 'payrelay-prod-CollectionStatusContradicted')).toMatchObject(anyCount(METRIC.collectionStatusContradicted));
  });

  it('alarm on 401 spikes, API 5xx, and each function\'s errors and throttles', () => {
    expect(alarmNamed(prod.stateless, 'payrelay-prod-WebhookUnauthorizedSpike')).toMatchObject({ MetricName: METRIC.webhookUnauthorized, Threshold: 10 });
    expect(alarmNamed(prod.stateless, 'payrelay-prod-Api5xx')).toMatchObject({ MetricName: '5xx', Namespace: 'AWS/ApiGateway', Threshold: 0 });
    for (const [key, definition] of Object.entries({ ...FUNCTIONS, kycCatchUp: KYC_CATCH_UP_FUNCTION })) {
      const name = key.replace(/^./, (c) => c.toUpperCase());
      for (const kind of ['Errors', 'Throttles']) {
        const found = alarmNamed(prod.stateless, `payrelay-prod-${name}${kind}`);
        expect(found, `${name}${kind}`).toMatchObject({ MetricName: kind, Namespace: 'AWS/Lambda', Statistic: 'Sum', Threshold: 0, TreatMissingData: 'notBreaching' });
        expect(found.Dimensions, `${name}${kind}`).toEqual([{ Name: 'FunctionName', Value: { Ref: functionLogicalId(prod.stateless, definition.id) } }]);
      }
    }
    prod.stateless.resourceCountIs('AWS::CloudWatch::Alarm', alarmCount(prod.stateless));
    dev.stateless.resourceCountIs('AWS::CloudWatch::Alarm', alarmCount(dev.stateless));
  });

  it('alarm when the scheduled KYC catch-up recovers any callback (deliveries were missed), only where it is deployed', () => {
    expect(alarmNamed(prod.stateless, 'payrelay-prod-KycCallbacksRecovered')).toMatchObject(anyCount(METRIC.kycCallbacksRecovered));
    expect(() => alarmNamed(dev.stateless, 'payrelay-dev-KycCallbacksRecovered')).toThrow(/no alarm/);
  });

  it('notify an encrypted SNS topic with the e-mail subscription when an address is configured', () => {
    prod.stateless.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'oncall@example.com' });
    prod.stateless.hasResourceProperties('AWS::SNS::Topic', { KmsMasterKeyId: Match.anyValue() });
    // CloudWatch may use the topic key only for this stage's alarms in this account.
    const keys = Object.values(resourcesOf(prod.stateless, 'AWS::KMS::Key'));
    expect(keys).toHaveLength(1);
    const statements = (keys[0]?.Properties.KeyPolicy as { Statement: Array<{ Principal?: { Service?: string }; Condition?: Record<string, Record<string, unknown>> }> }).Statement;
    const forCloudWatch = statements.filter((st) => st.Principal?.Service === 'cloudwatch.amazonaws.com');
    expect(forCloudWatch).toHaveLength(1);
    expect(JSON.stringify(forCloudWatch[0]?.Condition?.ArnLike?.['aws:SourceArn'])).toContain(':alarm:payrelay-prod-*');
    expect(forCloudWatch[0]?.Condition?.StringEquals?.['aws:SourceAccount']).toEqual({ Ref: 'AWS::AccountId' });
    const topicId = Object.keys(resourcesOf(prod.stateless, 'AWS::SNS::Topic'))[0];
    // Alarms on events that do not undo themselves send no OK: their OK would read as "settled".
    const perEvent = ['PayoutNeedsReview', 'PayoutReversed', 'WebhookUnrecognized', 'KycDecisionChanged', 'CollectionStatusContradicted', 'KycCallbacksRecovered'];
    for (const alarm of Object.values(resourcesOf(prod.stateless, 'AWS::CloudWatch::Alarm'))) {
      const name = String(alarm.Properties.AlarmName);
      expect(alarm.Properties.AlarmActions, name).toEqual([{ Ref: topicId }]);
      expect(alarm.Properties.OKActions, name).toEqual(perEvent.includes(name.replace('payrelay-prod-', '')) ? undefined : [{ Ref: topicId }]);
    }
    dev.stateless.resourceCountIs('AWS::SNS::Topic', 0);
  });

  it('let CloudWatch publish to the e-mail topic, for this stage\'s alarms only, beside the TLS-only Deny (enforceSSL replaces the default topic policy)', () => {
    const policies = Object.values(resourcesOf(prod.stateless, 'AWS::SNS::TopicPolicy'));
    expect(policies).toHaveLength(1);
    const topicId = Object.keys(resourcesOf(prod.stateless, 'AWS::SNS::Topic'))[0];
    expect(policies[0]?.Properties.Topics).toEqual([{ Ref: topicId }]);
    type Statement = { Effect: string; Action: string | string[]; Principal?: unknown; Resource: unknown; Condition?: Record<string, Record<string, unknown>> };
    const statements = (policies[0]?.Properties.PolicyDocument as { Statement: Statement[] }).Statement;
    expect(statements).toContainEqual(
      expect.objectContaining({ Effect: 'Deny', Action: 'sns:Publish', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
    );
    const allows = statements.filter((st) => st.Effect === 'Allow');
    expect(allows).toHaveLength(1);
    expect(allows[0]).toMatchObject({ Action: 'sns:Publish', Principal: { Service: 'cloudwatch.amazonaws.com' }, Resource: { Ref: topicId } });
    expect(allows[0]?.Condition).toEqual({
      StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
      ArnLike: {
        'aws:SourceArn': {
          'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':cloudwatch:', { Ref: 'AWS::Region' }, ':', { Ref: 'AWS::AccountId' }, ':alarm:payrelay-prod-*']],
        },
      },
    });
    // The pattern covers every alarm the stage has.
    for (const alarm of Object.values(resourcesOf(prod.stateless, 'AWS::CloudWatch::Alarm'))) expect(String(alarm.Properties.AlarmName)).toMatch(/^payrelay-prod-/);
  });

  it('each name the section of docs/alarms.md that says what to do', () => {
    const headings = new Set(
      readFileSync(path.join(PAYRELAY_PROJECT_ROOT, 'docs/alarms.md'), 'utf8')
        .split('\n')
        .filter((line) => line.startsWith('## '))
        .map((line) => line.slice(3).trim().toLowerCase().replace(/[^a-z0-9 -]/g, '').replace(/ /g, '-')),
    );
    for (const alarm of Object.values(resourcesOf(prod.stateless, 'AWS::CloudWatch::Alarm'))) {
      const anchor = String(alarm.Properties.AlarmDescription).match(/docs\/alarms\.md#([a-z0-9-]+)\.$/)?.[1];
      expect(anchor && headings.has(anchor), `${String(alarm.Properties.AlarmName)} -> #${anchor}`).toBe(true);
    }
  });

  it('notify an existing SNS topic given by ARN, without creating one', () => {
    adopted.stateless.resourceCountIs('AWS::SNS::Topic', 0);
    adopted.stateless.resourceCountIs('AWS::KMS::Key', 0);
    const alarms = Object.values(resourcesOf(adopted.stateless, 'AWS::CloudWatch::Alarm'));
    expect(alarms.length).toBeGreaterThan(0);
    for (const alarm of alarms) expect(alarm.Properties.AlarmActions, String(alarm.Properties.AlarmName)).toEqual([PAGING_TOPIC_ARN]);
    expect((adopted.stateless.toJSON().Outputs as Record<string, { Value: unknown }>)[OUTPUT.alarmTopicArn]?.Value).toBe(PAGING_TOPIC_ARN);
  });

  it('refuse a retained stage with no alarm destination, saying how to give one', () => {
    expect(() => buildTestApp({ ...base, stage: 'bare' })).toThrow(
      /alarms: a retained stage \(removalPolicy "retain"\) needs somewhere to send its alarms.*-c alarmEmail=.*-c alarmTopicArn=arn:aws:sns:/,
    );
    expect(() => buildTestApp({ ...base, stage: 'bare', removalPolicy: 'destroy' })).not.toThrow();
  });

  it('has a dashboard of the payout and webhook flow', () => {
    const dashboards = Object.values(resourcesOf(prod.stateless, 'AWS::CloudWatch::Dashboard'));
    expect(dashboards.map((d) => d.Properties.DashboardName)).toEqual(['payrelay-prod-flow']);
    const body = JSON.stringify(dashboards[0]?.Properties.DashboardBody);
    for (const name of [METRIC.payoutSucceeded, METRIC.payoutUnknownOutcome, METRIC.payoutsAwaitingReview, METRIC.oldestPayoutAwaitingReviewSeconds, METRIC.webhookStored, METRIC.webhookUnauthorized, 'ApproximateNumberOfMessagesVisible']) {
      expect(body, name).toContain(name);
    }
  });
});

describe('outputs', () => {
  it('name everything an operator and the CLI need on the app stack', () => {
    const outputs = prod.stateless.toJSON().Outputs as Record<string, { Value: unknown }>;
    // KycNotDeployed is output only by a stage without KYC (test/infra/kyc-off.test.ts).
    expect(Object.keys(outputs)).toEqual(expect.arrayContaining(Object.values(OUTPUT).filter((key) => key !== OUTPUT.kycNotDeployed)));
    expect(Object.keys(outputs)).not.toContain(OUTPUT.kycNotDeployed);
    expect(JSON.stringify(outputs[OUTPUT.egressIps]?.Value)).toContain('EgressIp2');
    expect(outputs[OUTPUT.kycApiBaseUrl]?.Value).toBe(base.kycApiBaseUrl);
    expect((dev.stateless.toJSON().Outputs as Record<string, { Value: unknown }>)[OUTPUT.egressIps]?.Value).toBe('none (static egress is off)');
  });

  it('give the CLI the payout service client settings the functions run with, only those the stage sets', () => {
    const outputOf = (template: Template) => (template.toJSON().Outputs as Record<string, { Value: unknown }>)[OUTPUT.providerClientSettings]?.Value;
    expect(outputOf(prod.stateless)).toBe('{}');
    expect(outputOf(adopted.stateless)).toBe('{"BEARER_PREFIX":"false"}');
    const worker = Object.values(resourcesOf(adopted.stateless, 'AWS::Lambda::Function')).find((r) => r.Properties.FunctionName === 'payrelay-adopted-payout-worker');
    expect((worker?.Properties.Environment as { Variables: Record<string, unknown> }).Variables.BEARER_PREFIX).toBe('false');
  });

  it('names the stacks payrelay-<stage> and payrelay-<stage>-data', () => {
    expect(prod.payrelay.stateless?.stackName).toBe('payrelay-prod');
    expect(prod.payrelay.stateful.stackName).toBe('payrelay-prod-data');
  });
});

/** Every cdk-nag acknowledgment recorded in the construct tree, with the path it applies to. */
function acknowledgments(root: IConstruct): Array<{ path: string; id: string; reason: string }> {
  return root.node.findAll().flatMap((construct) =>
    construct.node.metadata
      .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((entry) => Object.entries(entry.data as Record<string, string>).map(([id, reason]) => ({ path: construct.node.path, id, reason }))),
  );
}

describe('customer-managed encryption (encryption.key)', () => {
  /** prod's settings with the stage's own key: every function, static egress (the flow log group), RETAIN. */
  let kms: SynthesizedPayrelay;
  /** A destroy stage on an existing key (encryption.keyArn): nothing created, every store on that key. */
  let byok: SynthesizedPayrelay;
  const KEY_ARN = 'arn:aws:kms:eu-west-1:123456789012:key/0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0';

  beforeAll(() => {
    kms = synthPayrelay({ ...PROD_LIKE, stage: 'kms', encryption: { key: 'customer-managed' } });
    byok = synthPayrelay({ ...base, stage: 'byok', removalPolicy: 'destroy', encryption: { key: 'customer-managed', keyArn: KEY_ARN } });
  }, 240_000);

  /** The stage key's logical id in the data stack (the one AWS::KMS::Key there). */
  const keyId = () => {
    const keys = Object.keys(resourcesOf(kms.stateful, 'AWS::KMS::Key'));
    expect(keys).toHaveLength(1);
    return keys[0] as string;
  };
  const keyArn = () => ({ 'Fn::GetAtt': [keyId(), 'Arn'] });
  const stores = (template: Template) => ({
    tables: Object.values(resourcesOf(template, 'AWS::DynamoDB::Table')),
    queues: Object.values(resourcesOf(template, 'AWS::SQS::Queue')),
    secrets: Object.values(resourcesOf(template, 'AWS::SecretsManager::Secret')),
  });

  it('creates one key in the data stack: rotated, alias/payrelay-<stage>-data, described, kept with the data', () => {
    const key = resourcesOf(kms.stateful, 'AWS::KMS::Key')[keyId()];
    expect(key?.Properties).toMatchObject({
      EnableKeyRotation: true,
      Description: 'payrelay kms: encrypts the tables, queues, secrets and log groups of the stacks payrelay-kms-data and payrelay-kms',
    });
    expect(key?.DeletionPolicy).toBe('Retain');
    kms.stateful.hasResourceProperties('AWS::KMS::Alias', { AliasName: 'alias/payrelay-kms-data', TargetKeyId: keyArn() });
    // The app stack only references it; its one key stays the alarm topic's.
    expect(Object.keys(resourcesOf(kms.stateless, 'AWS::KMS::Key'))).toEqual([expect.stringMatching(/^MonitoringAlarmTopicKey/)]);
    // A destroy stage schedules its key's deletion with the stack.
    const app = new App({ context: cdkJsonContext() });
    const stack = new PayrelayStatefulStack(app, 'Scratch', { config: parsePayrelayConfig({ ...base, stage: 'scratch', removalPolicy: 'destroy', encryption: { key: 'customer-managed' } }, 'test') });
    expect(Object.values(resourcesOf(Template.fromStack(stack), 'AWS::KMS::Key')).map((k) => k.DeletionPolicy)).toEqual(['Delete']);
  });

  it('encrypts every table, queue (DLQs included) and secret with it, queues reusing a data key for 5 minutes', () => {
    const { tables, queues, secrets } = stores(kms.stateful);
    expect([tables.length, queues.length, secrets.length]).toEqual([TABLES.length, 5, 3]);
    for (const table of tables) expect(table.Properties.SSESpecification, String(table.Properties.TableName)).toEqual({ SSEEnabled: true, SSEType: 'KMS', KMSMasterKeyId: keyArn() });
    for (const queue of queues) {
      expect(queue.Properties, String(queue.Properties.QueueName)).toMatchObject({ KmsMasterKeyId: keyArn(), KmsDataKeyReusePeriodSeconds: 300 });
      expect(queue.Properties.SqsManagedSseEnabled, String(queue.Properties.QueueName)).toBeUndefined();
    }
    for (const secret of secrets) expect(secret.Properties.KmsKeyId, String(secret.Properties.Name)).toEqual(keyArn());
    // Adding the key changes nothing that would regenerate the account key.
    const accountKey = secrets.find((secret) => String(secret.Properties.Name).endsWith('-account-key'));
    expect(accountKey?.Properties.GenerateSecretString).toEqual({ GenerateStringKey: 'key', SecretStringTemplate: '{}', PasswordLength: 64, ExcludePunctuation: true });
  });

  it("encrypts every log group of both stacks with it, and lets CloudWatch Logs use it for log groups named payrelay-<stage>-* only", () => {
    const groups = [...Object.entries(resourcesOf(kms.stateless, 'AWS::Logs::LogGroup')), ...Object.entries(resourcesOf(kms.stateful, 'AWS::Logs::LogGroup'))];
    // Each function's, the API access log group, the VPC flow log group.
    expect(groups.length).toBe(deployed(kms.stateless).length + 2);
    for (const [id, group] of groups) {
      expect(JSON.stringify(group.Properties.KmsKeyId), id).toContain(keyId());
      // No fixed name: CloudFormation names it after its stack, so the key policy's pattern below holds it.
      expect(group.Properties.LogGroupName, id).toBeUndefined();
    }
    expect(Object.values(stackNames('kms')).every((name) => name.startsWith('payrelay-kms'))).toBe(true);
    const statements = (resourcesOf(kms.stateful, 'AWS::KMS::Key')[keyId()]?.Properties.KeyPolicy as { Statement: Array<Record<string, unknown>> }).Statement;
    const logs = statements.filter((statement) => JSON.stringify(statement.Principal).includes('logs.'));
    expect(logs).toEqual([
      {
        Sid: 'AllowThisStageLogGroups',
        Effect: 'Allow',
        Principal: { Service: { 'Fn::Join': ['', ['logs.', { Ref: 'AWS::Region' }, '.amazonaws.com']] } },
        Action: ['kms:Decrypt*', 'kms:Describe*', 'kms:Encrypt*', 'kms:GenerateDataKey*', 'kms:ReEncrypt*'],
        Resource: '*',
        Condition: {
          ArnLike: {
            'kms:EncryptionContext:aws:logs:arn': {
              'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':logs:', { Ref: 'AWS::Region' }, ':', { Ref: 'AWS::AccountId' }, ':log-group:payrelay-kms-*']],
            },
          },
        },
      },
    ]);
    // No other service principal may use the key: nothing but the functions sends to the queues.
    const services = statements.filter((statement) => JSON.stringify(statement.Principal).includes('"Service"'));
    expect(services).toEqual(logs);
  });

  // The same grants as prod's (the table and queue actions are the stage's, not the key's), plus on the
  // key exactly what each role's stores need: Decrypt for a table, a secret or a received message,
  // GenerateDataKey besides for a sent one (KEY_ACTIONS in infra/access.ts).
  it("give each function role exactly the key actions its stores need, beside prod's grants", () => {
    const onKey: Record<string, string[]> = {
      'payout-worker': ['kms:Decrypt', 'kms:GenerateDataKey'],
      reconciler: ['kms:Decrypt', 'kms:GenerateDataKey'],
      'payout-checker': ['kms:Decrypt', 'kms:GenerateDataKey'],
      'kyc-callback': ['kms:Decrypt'],
      'payout-notification': ['kms:Decrypt'],
      // kms:DescribeKey is the DynamoDB stream event source's own grant (grantStreamRead); it reads the
      // key's metadata only. GenerateDataKey: the failure queue, which Lambda sends to with this role.
      'callback-applier': ['kms:Decrypt', 'kms:DescribeKey', 'kms:GenerateDataKey'],
      'kyc-catch-up': ['kms:Decrypt'],
    };
    expect(deployed(kms.stateless).map((d) => d.id).sort()).toEqual(Object.keys(onKey).sort());
    for (const definition of deployed(kms.stateless)) {
      const { DataKey, ...rest } = grantsOf(kms.stateless, definition.id);
      expect(DataKey, definition.id).toEqual(onKey[definition.id]);
      expect(rest, definition.id).toEqual(grantsOf(prod.stateless, definition.id));
    }
    // An existing key is granted by its ARN the same way.
    for (const definition of deployed(byok.stateless)) {
      expect(grantsOf(byok.stateless, definition.id)[JSON.stringify(KEY_ARN)], definition.id).toEqual(onKey[definition.id]);
    }
  });

  it('give no other role anything on the key, and no role anything on it with AWS-managed keys', () => {
    const functionRoles = deployed(kms.stateless).map((d) => JSON.stringify({ Ref: (functionProps(kms.stateless, d.id).Role as { 'Fn::GetAtt': [string] })['Fn::GetAtt'][0] }));
    const onKey: string[] = [];
    for (const template of [kms.stateless, kms.stateful]) {
      for (const [id, policy] of Object.entries(resourcesOf(template, 'AWS::IAM::Policy'))) {
        const statements = (policy.Properties.PolicyDocument as { Statement: Array<{ Action: string | string[] }> }).Statement;
        if (!JSON.stringify(statements.map((st) => st.Action)).includes('kms:')) continue;
        onKey.push(JSON.stringify(policy.Properties.Roles));
        expect(functionRoles, id).toContain(JSON.stringify((policy.Properties.Roles as unknown[])[0]));
      }
      for (const [id, role] of Object.entries(resourcesOf(template, 'AWS::IAM::Role'))) expect(JSON.stringify(role.Properties.Policies ?? []), id).not.toContain('kms:');
    }
    expect(onKey).toHaveLength(functionRoles.length);
    for (const { stateless, stateful } of [prod, dev, adopted]) {
      for (const template of [stateless, stateful]) expect(JSON.stringify(resourcesOf(template, 'AWS::IAM::Policy'))).not.toContain('kms:');
    }
  });

  it('with an existing key (encryption.keyArn): creates none, and puts every store and log group on that key', () => {
    byok.stateful.resourceCountIs('AWS::KMS::Key', 0);
    byok.stateful.resourceCountIs('AWS::KMS::Alias', 0);
    const { tables, queues, secrets } = stores(byok.stateful);
    for (const table of tables) expect(table.Properties.SSESpecification).toEqual({ SSEEnabled: true, SSEType: 'KMS', KMSMasterKeyId: KEY_ARN });
    for (const queue of queues) expect(queue.Properties).toMatchObject({ KmsMasterKeyId: KEY_ARN, KmsDataKeyReusePeriodSeconds: 300 });
    for (const secret of secrets) expect(secret.Properties.KmsKeyId).toBe(KEY_ARN);
    for (const group of Object.values(resourcesOf(byok.stateless, 'AWS::Logs::LogGroup'))) expect(group.Properties.KmsKeyId).toBe(KEY_ARN);
  });

  it('leaves the AWS-managed stages as they were: no data key, SSE-SQS, aws/dynamodb, no KmsKeyId', () => {
    for (const { stateful, stateless } of [prod, dev, adopted]) {
      stateful.resourceCountIs('AWS::KMS::Key', 0);
      const { tables, queues, secrets } = stores(stateful);
      for (const table of tables) expect(table.Properties.SSESpecification).toEqual({ SSEEnabled: true });
      for (const queue of queues) expect(queue.Properties.KmsMasterKeyId).toBeUndefined();
      for (const secret of secrets) expect(secret.Properties.KmsKeyId).toBeUndefined();
      for (const template of [stateful, stateless]) {
        for (const group of Object.values(resourcesOf(template, 'AWS::Logs::LogGroup'))) expect(group.Properties.KmsKeyId).toBeUndefined();
      }
    }
    // Only the alarm topic's key, where alarms.email creates the topic.
    expect(Object.keys(resourcesOf(prod.stateless, 'AWS::KMS::Key'))).toEqual([expect.stringMatching(/^MonitoringAlarmTopicKey/)]);
    for (const { stateless } of [dev, adopted]) stateless.resourceCountIs('AWS::KMS::Key', 0);
  });

  it('passes cdk-nag with no acknowledgment beyond those of the AWS-managed stages', () => {
    const ids = (root: IConstruct) => new Set(acknowledgments(root).filter((a) => !a.id.startsWith('CloudFormation-Validate::')).map((a) => a.id));
    expect(ids(kms.payrelay)).toEqual(ids(prod.payrelay));
    // And the repository's stage files with the key, as -c encryptionKey=customer-managed builds them.
    for (const context of [{ stage: 'dev', encryptionKey: 'customer-managed' }, { stage: 'dev', staticEgress: 'true', encryptionKey: 'customer-managed' }]) {
      const app = new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [], ...context } });
      expect(() => buildApp(app).app.synth(), JSON.stringify(context)).not.toThrow();
    }
  }, 120_000);
});

describe('cdk-nag AwsSolutions', () => {
  // Both deployments above were synthesized with the AwsSolutions pack: an unacknowledged finding throws there.

  it('fails synth on a finding nobody acknowledged (the check is live on the payrelay stacks)', () => {
    const { app, payrelay } = buildTestApp({ ...base, stage: 'dev', removalPolicy: 'destroy' });
    new Queue(payrelay.stateful, 'UnencryptedQueue', { enforceSSL: false });
    expect(() => app.synth()).toThrow(/AwsSolutions-SQS4/);
  });

  // The repository's own stage files, as `cdk synth -c stage=...` builds them (bundling skipped).
  // (The prod stage file needs an alarm destination: given here as `cdk synth -c alarmEmail=...` would.)
  it('passes for the dev and prod stage files, and for dev with static egress on', () => {
    for (const context of [{ stage: 'dev' }, { stage: 'prod', alarmEmail: 'oncall@example.com' }, { stage: 'dev', staticEgress: 'true' }]) {
      const app = new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [], ...context } });
      expect(() => buildApp(app).app.synth(), JSON.stringify(context)).not.toThrow();
    }
  });

  it('acknowledges only specific rules, each with a reason a reviewer can check', () => {
    // aws-cdk-lib records its own CloudFormation-Validate acknowledgments (e.g. for the VPC's AZs): not ours.
    const acks = acknowledgments(prod.payrelay).filter((a) => !a.id.startsWith('CloudFormation-Validate::'));
    for (const ack of acks) {
      expect(ack.id, ack.path).toMatch(/^AwsSolutions::AwsSolutions-[A-Z]+\d+/);
      expect(ack.reason.length, `${ack.id} at ${ack.path}`).toBeGreaterThanOrEqual(60);
    }
    // Wildcards are acknowledged one finding at a time, and only the Resource "*" of X-Ray and VPC ENIs.
    for (const ack of acks.filter((a) => a.id.includes('IAM5'))) expect(ack.id).toMatch(/IAM5\[Resource::\*\]$/);
    expect(new Set(acks.map((a) => a.id.replace(/^AwsSolutions::/, '').replace(/\[.*$/, '')))).toEqual(
      new Set(['AwsSolutions-SMG4', 'AwsSolutions-IAM5', 'AwsSolutions-APIG4', 'AwsSolutions-SQS3']),
    );
  });
});

describe('a landing zone\'s guardrails: the stage\'s tags and permissions boundary', () => {
  const TAGS = { 'cost-center': 'CC-1234', 'data-classification': 'pci' };
  /** prod's settings (static egress, so CDK's own helper roles too) with tags and a boundary by name. */
  let guarded: SynthesizedPayrelay;
  beforeAll(() => {
    guarded = synthPayrelay({ ...PROD_LIKE, stage: 'guarded', tags: TAGS, permissionsBoundary: 'payrelay-boundary' });
  }, 240_000);

  const boundaryArn = { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':iam::', { Ref: 'AWS::AccountId' }, ':policy/payrelay-boundary']] };

  it('puts the boundary on every IAM role of both stacks, CDK\'s helper roles included', () => {
    for (const template of [guarded.stateful, guarded.stateless]) {
      const roles = Object.entries(resourcesOf(template, 'AWS::IAM::Role'));
      expect(roles.length).toBeGreaterThan(0);
      for (const [id, role] of roles) expect({ id, boundary: role.Properties?.PermissionsBoundary }).toEqual({ id, boundary: boundaryArn });
    }
    // The helper roles are there: the egress stack's custom resources and the functions' own.
    expect(Object.keys(resourcesOf(guarded.stateless, 'AWS::IAM::Role')).length).toBeGreaterThanOrEqual(Object.keys(FUNCTIONS).length);
    // Without the setting, no role has one.
    for (const role of Object.values(resourcesOf(prod.stateless, 'AWS::IAM::Role'))) expect(role.Properties?.PermissionsBoundary).toBeUndefined();
  });

  it('tags the functions, tables, queues, secrets, keys and log groups with the stage\'s tags beside app and stage', () => {
    const expected = [
      { Key: 'app', Value: 'payrelay' },
      { Key: 'cost-center', Value: 'CC-1234' },
      { Key: 'data-classification', Value: 'pci' },
      { Key: 'stage', Value: 'guarded' },
    ];
    const types = {
      stateful: ['AWS::DynamoDB::Table', 'AWS::SQS::Queue', 'AWS::SecretsManager::Secret', 'AWS::EC2::VPC'],
      stateless: ['AWS::Lambda::Function', 'AWS::Logs::LogGroup', 'AWS::SNS::Topic', 'AWS::KMS::Key', 'AWS::IAM::Role'],
    } as const;
    for (const [stack, list] of Object.entries(types) as Array<[keyof typeof types, readonly string[]]>) {
      for (const type of list) {
        const found = Object.entries(resourcesOf(guarded[stack], type));
        expect({ type, count: found.length > 0 }).toEqual({ type, count: true });
        for (const [id, resource] of found) {
          const tags = (resource.Properties?.Tags ?? []) as Array<{ Key: string; Value: string }>;
          expect({ id, tags: expected.map((t) => tags.find((x) => x.Key === t.Key)) }).toEqual({ id, tags: expected });
        }
      }
    }
  });
});

describe('moving off a customer-managed key (encryption.previousKeyArns)', () => {
  const OLD_KEY = 'arn:aws:kms:eu-west-1:123456789012:key/0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0';
  /** A stage back on AWS-managed keys whose queues may still hold messages sent under its old key. */
  let moved: SynthesizedPayrelay;
  beforeAll(() => {
    moved = synthPayrelay({ ...base, stage: 'moved', removalPolicy: 'destroy', encryption: { key: 'aws-managed', previousKeyArns: [OLD_KEY] } });
  }, 240_000);

  it('lets the two queue consumers decrypt what the previous key encrypted, and no other role touch it', () => {
    const onOldKey = (functionId: string) => grantsOf(moved.stateless, functionId)[JSON.stringify(OLD_KEY)];
    expect(onOldKey(FUNCTIONS.payoutWorker.id)).toEqual(['kms:Decrypt']);
    expect(onOldKey(FUNCTIONS.payoutChecker.id)).toEqual(['kms:Decrypt']);
    for (const definition of deployed(moved.stateless)) {
      if (definition.id === FUNCTIONS.payoutWorker.id || definition.id === FUNCTIONS.payoutChecker.id) continue;
      expect({ fn: definition.id, grant: onOldKey(definition.id) }).toEqual({ fn: definition.id, grant: undefined });
    }
    // Without previous keys, no role names a key it does not encrypt with.
    expect(JSON.stringify(dev.stateless.toJSON())).not.toContain(OLD_KEY);
  });
});
