import { Annotations, CfnOutput, Duration, Fn, RemovalPolicy, Stack, type StackProps, Validations } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import { ApiMapping, HttpApi, HttpMethod, HttpStage, LogGroupLogDestination } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { Peer, Port, SecurityGroup } from 'aws-cdk-lib/aws-ec2';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { Grant } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { FilterCriteria, FilterRule, type IEventSourceDlq, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { APPLY_SWEEP_EVERY_MINUTES, FUNCTIONS, KYC_CATCH_UP_FUNCTION, ROUTES, type FunctionDefinition } from '@shared/config/functions';
import type { PayrelayConfig, PayrelaySettings } from './config';
import { PayrelayMonitoring } from './monitoring';
import { OUTPUT, PROVIDER_CLIENT_SETTINGS } from './outputs';
import { FUNCTION_ACCESS, KEY_ACTIONS, applyAccess } from './access';
import { PayrelayFunction, type PayrelayFunctions } from './payrelay-function';
import type { PayrelayStatefulResources } from './stateful-stack';

export interface PayrelayStatelessStackProps extends StackProps {
  readonly config: PayrelayConfig;
  /** The stateful stack's resources; referencing them creates the cross-stack references. */
  readonly stateful: PayrelayStatefulResources;
  /** Directory holding functions/, shared/, tsconfig.json and package-lock.json. */
  readonly projectRoot: string;
}

/** The worker-settings env vars of docs/architecture.md, set only where the stage chose a value. */
function settingsEnvironment(config: PayrelayConfig): Record<string, string> {
  const s: PayrelaySettings = config.settings;
  const pairs: Array<[string, string | number | boolean | string[] | undefined]> = [
    ['SIGNING_PROFILE', config.signingProfile],
    ['BEARER_PREFIX', s.bearerPrefix],
    ['PROVIDER_TIMEOUT_MS', s.providerTimeoutMs],
    ['PROVIDER_STATUS_MAP', s.providerStatusMap],
    ['NAME_MATCH_THRESHOLD', s.nameMatchThreshold],
    ['KYC_GATING', s.kycGating === undefined ? undefined : s.kycGating ? 'on' : 'off'],
    ['PAYOUT_DEFINITE_REFUSALS', s.payoutDefiniteRefusals === undefined ? undefined : JSON.stringify(s.payoutDefiniteRefusals)],
    ['RESUBMIT_UNKNOWN_NOT_FOUND', s.resubmitUnknownNotFound],
    ['REVIEW_AFTER_MINUTES', s.reviewAfterMinutes],
    ['GATEWAY_ERROR_REVIEW_MINUTES', s.gatewayErrorReviewMinutes],
    ['NOT_FOUND_GRACE_MINUTES', s.notFoundGraceMinutes],
    ['REVIEW_WATCH_HOURLY_DAYS', s.reviewWatchHourlyDays],
    ['REVIEW_WATCH_DAILY_DAYS', s.reviewWatchDailyDays],
    ['REVERSAL_WATCH_DAYS', s.reversalWatchDays],
    ['WEBHOOK_MAX_BODY_BYTES', s.webhookMaxBodyBytes],
    ['WEBHOOK_ALLOWED_IPS', s.webhookAllowedIps?.join(',')],
    ['EVENT_RETENTION_DAYS', s.eventRetentionDays],
    // By default a batch runs all at once: with fewer records in flight than the batch holds, each
    // batch would take several provider round trips (measured by the throughput benchmark).
    ['WORKER_CONCURRENCY', s.workerConcurrency ?? config.worker.batchSize],
    ['RECONCILE_CONCURRENCY', s.reconcileConcurrency],
    // Always: the reconciler must know its schedule's interval to count the review gauge once per window.
    ['RECONCILE_EVERY_MINUTES', config.reconcileEveryMinutes],
  ];
  return Object.fromEntries(pairs.filter(([, v]) => v !== undefined).map(([k, v]) => [k, String(v)]));
}

/** The settings of the reconciler's use case: the scheduled sweep and the payout checker both run it. */
const RECONCILE_SETTINGS = [
    'SIGNING_PROFILE',
    'BEARER_PREFIX',
    'PROVIDER_TIMEOUT_MS',
    'PROVIDER_STATUS_MAP',
    'RESUBMIT_UNKNOWN_NOT_FOUND',
    'REVIEW_AFTER_MINUTES',
    'GATEWAY_ERROR_REVIEW_MINUTES',
    'NOT_FOUND_GRACE_MINUTES',
    'REVIEW_WATCH_HOURLY_DAYS',
    'REVIEW_WATCH_DAILY_DAYS',
    'REVERSAL_WATCH_DAYS',
    'RECONCILE_CONCURRENCY',
    'RECONCILE_EVERY_MINUTES',
] as const;

/** Which settings each function reads (docs/architecture.md), so none gets a variable it ignores. */
const SETTINGS_BY_FUNCTION: Record<FunctionDefinition['id'], readonly string[]> = {
  'payout-worker': [
    'SIGNING_PROFILE',
    'BEARER_PREFIX',
    'PROVIDER_TIMEOUT_MS',
    'NAME_MATCH_THRESHOLD',
    'KYC_GATING',
    'PAYOUT_DEFINITE_REFUSALS',
    'WORKER_CONCURRENCY',
  ],
  reconciler: RECONCILE_SETTINGS,
  // The reconciler's use case on delayed checks: the same settings, so both decide alike.
  'payout-checker': RECONCILE_SETTINGS,
  'kyc-callback': ['WEBHOOK_MAX_BODY_BYTES', 'WEBHOOK_ALLOWED_IPS', 'EVENT_RETENTION_DAYS'],
  'payout-notification': ['SIGNING_PROFILE', 'WEBHOOK_MAX_BODY_BYTES', 'WEBHOOK_ALLOWED_IPS', 'EVENT_RETENTION_DAYS'],
  'callback-applier': [],
  'kyc-catch-up': ['PROVIDER_TIMEOUT_MS', 'EVENT_RETENTION_DAYS'],
};

/** Stream retries of a failing batch (bisected each time) before its records go to the failure queue. */
const APPLY_STREAM_RETRIES = 5;

/** Check batches in flight at once (the SQS event source's least maximum is 2). */
const CHECKER_MAX_CONCURRENCY = 2;

/** At most one reconciler run at a time (see docs/deploy.md: it needs the account's unreserved minimum). */
const RECONCILER_RESERVED_CONCURRENCY = 1;

/**
 * TCP ports the provider base URLs use (443 unless the URL names another), plus 443 for AWS APIs. A
 * stage without KYC calls only the payout service, whatever kycApiBaseUrl it keeps.
 */
function egressPorts(config: PayrelayConfig): number[] {
  const port = (url: string) => {
    const u = new URL(url);
    return u.port ? Number(u.port) : u.protocol === 'http:' ? 80 : 443;
  };
  const kycUrls = config.kyc.enabled && config.kycApiBaseUrl !== undefined ? [config.kycApiBaseUrl] : [];
  return [...new Set([443, port(config.payoutApiBaseUrl), ...kycUrls.map(port)])];
}

/** The KYC service's base URL of a stage that deploys KYC (the configuration requires it there). */
function kycApiBaseUrl(config: PayrelayConfig): string {
  if (!config.kyc.enabled || config.kycApiBaseUrl === undefined) throw new Error(`stage ${config.stage}: a KYC function is built, but KYC is off or has no kycApiBaseUrl`);
  return config.kycApiBaseUrl;
}

/**
 * The code and its wiring: the functions, the HTTP API with the callback routes, the SQS event
 * sources of the worker and the payout checker, the events stream of the callback applier, the
 * reconcile schedule, and the alarms and dashboard. Holds no data, so it
 * can be destroyed and redeployed; the callback URLs survive that only on a custom domain
 * (`api.domain`, kept in the data stack), since a recreated API gets a new default hostname.
 */
export class PayrelayStatelessStack extends Stack {
  readonly functions: PayrelayFunctions;
  readonly api: HttpApi;
  readonly apiStage: HttpStage;
  readonly monitoring: PayrelayMonitoring;

  constructor(scope: Construct, id: string, props: PayrelayStatelessStackProps) {
    super(scope, id, props);
    const { config, stateful } = props;
    const removalPolicy = config.removalPolicy === 'retain' ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;
    const logRetention = config.logRetentionDays as RetentionDays;
    const namePrefix = `payrelay-${config.stage}`;
    const settings = settingsEnvironment(config);

    let providerCallerSecurityGroup: SecurityGroup | undefined;
    if (stateful.vpc) {
      providerCallerSecurityGroup = new SecurityGroup(this, 'ProviderCallerSecurityGroup', {
        vpc: stateful.vpc,
        description: 'payrelay functions that call the providers: outbound HTTPS only, no inbound',
        allowAllOutbound: false,
      });
      for (const port of egressPorts(config)) {
        providerCallerSecurityGroup.addEgressRule(Peer.anyIpv4(), Port.tcp(port), `provider and AWS APIs on ${port}`);
      }
    }

    const make = (definition: FunctionDefinition, logicalId: string, reservedConcurrentExecutions?: number): PayrelayFunction => {
      const inVpc = definition.callsProvider && providerCallerSecurityGroup !== undefined;
      return new PayrelayFunction(this, logicalId, {
        definition,
        projectRoot: props.projectRoot,
        logRetention,
        logRemovalPolicy: removalPolicy,
        logEncryptionKey: stateful.dataKey,
        logLevel: config.logLevel,
        namePrefix,
        stage: config.stage,
        environment: Object.fromEntries(
          Object.entries(settings).filter(([key]) => SETTINGS_BY_FUNCTION[definition.id].includes(key)),
        ),
        vpc: inVpc ? stateful.vpc : undefined,
        securityGroups: inVpc && providerCallerSecurityGroup ? [providerCallerSecurityGroup] : undefined,
        reservedConcurrentExecutions,
        tracing: config.tracing,
        kycGating: config.settings.kycGating === true,
      });
    };

    const worker = make(FUNCTIONS.payoutWorker, 'PayoutWorker');
    worker.addEnvironment('PAYOUT_API_BASE_URL', config.payoutApiBaseUrl);
    // The confirming pull of KYC gating; without gating the worker never calls the KYC service.
    if (config.settings.kycGating === true) worker.addEnvironment('KYC_API_BASE_URL', kycApiBaseUrl(config));
    // The worker moves a message to the DLQ itself (with its reason) on the last receive SQS allows,
    // so it must know the same count as the queue's redrive policy.
    worker.addEnvironment('PAYOUTS_MAX_RECEIVE_COUNT', String(config.maxReceiveCount));
    worker.addEventSource(
      new SqsEventSource(stateful.payoutsQueue, {
        batchSize: config.worker.batchSize,
        maxConcurrency: config.worker.maxConcurrency,
        reportBatchItemFailures: true,
      }),
    );

    // Reserved concurrency 1: two runs never overlap, even when a run (time-out 120 s, work budget
    // 90 s) outlasts the 1-minute schedule; overlapping runs would double the GetPayout calls to a
    // rate-limited provider. A tick that arrives during a run is throttled, waits in Lambda's async
    // queue and is dropped once older than the interval: the next run starts when this one ends.
    const reconciler = make(FUNCTIONS.reconciler, 'Reconciler', RECONCILER_RESERVED_CONCURRENCY);
    reconciler.addEnvironment('PAYOUT_API_BASE_URL', config.payoutApiBaseUrl);
    // A failed run is not retried (neither by EventBridge nor by Lambda's async retries): the next
    // tick reads the same open payouts again, and a retry would only overlap it.
    reconciler.configureAsyncInvoke({ retryAttempts: 0, maxEventAge: Duration.minutes(config.reconcileEveryMinutes) });
    new Rule(this, 'ReconcileSchedule', {
      description: `payrelay ${config.stage}: reconcile open payouts every ${config.reconcileEveryMinutes} minute(s)`,
      schedule: Schedule.rate(Duration.minutes(config.reconcileEveryMinutes)),
      targets: [new LambdaFunction(reconciler, { retryAttempts: 0, maxEventAge: Duration.minutes(config.reconcileEveryMinutes) })],
    });

    // Delayed checks (10 s, 20 s, 40 s ... after each payout intent): a payout is final within about a
    // minute of the provider settling it, not at the sweep's back-off. At most CHECKER_MAX_CONCURRENCY
    // batches at once keeps GetPayout's rate bounded; the provider's Retry-After pauses each of them.
    const checker = make(FUNCTIONS.payoutChecker, 'PayoutChecker');
    checker.addEnvironment('PAYOUT_API_BASE_URL', config.payoutApiBaseUrl);
    checker.addEventSource(
      new SqsEventSource(stateful.checksQueue, { batchSize: 10, maxConcurrency: CHECKER_MAX_CONCURRENCY, reportBatchItemFailures: true }),
    );

    // After a move to another key, the messages queued before it stay under the previous key: the
    // two queue consumers keep kms:Decrypt on it until the stage drops previousKeyArns.
    const previousKeyArns = config.encryption.previousKeyArns;
    if (previousKeyArns.length > 0) {
      for (const consumer of [worker, checker]) Grant.addToPrincipal({ grantee: consumer, actions: [...KEY_ACTIONS.queueReceive], resourceArns: [...previousKeyArns] });
    }

    // kyc.enabled: false leaves the KYC receiver out, and with it the KYC route (config.kyc).
    const kycCallback = config.kyc.enabled ? make(FUNCTIONS.kycCallback, 'KycCallback') : undefined;
    const payoutNotification = make(FUNCTIONS.payoutNotification, 'PayoutNotification');
    const callbackApplier = this.callbackApplier(make, stateful);

    this.functions = {
      'payout-worker': worker,
      reconciler,
      'payout-checker': checker,
      ...(kycCallback ? { 'kyc-callback': kycCallback } : {}),
      'payout-notification': payoutNotification,
      'callback-applier': callbackApplier,
      ...(config.kycCatchUp ? { 'kyc-catch-up': this.kycCatchUp(make, config.kycCatchUp, config) } : {}),
    };
    for (const [functionId, fn] of Object.entries(this.functions) as Array<[FunctionDefinition['id'], PayrelayFunction]>) {
      applyAccess(fn, FUNCTION_ACCESS[functionId], stateful.byId, config);
      acknowledgeLambdaFindings(fn, functionId === FUNCTIONS.callbackApplier.id, config.tracing);
    }

    const accessLogs = new LogGroup(this, 'ApiAccessLogs', { retention: logRetention, encryptionKey: stateful.dataKey, removalPolicy });
    this.api = new HttpApi(this, 'CallbackApi', {
      apiName: `${namePrefix}-callbacks`,
      description: `payrelay ${config.stage}: provider callbacks`,
      createDefaultStage: false,
      // With a custom domain the callback URLs are on it, and the default execute-api hostname is
      // turned off: a front door put before the domain later (a WAF, a CDN) cannot be bypassed
      // through it. Without one, the default hostname is the only URL the API has.
      ...(stateful.apiDomain ? { disableExecuteApiEndpoint: true } : {}),
    });
    this.apiStage = new HttpStage(this, 'CallbackApiStage', {
      httpApi: this.api,
      stageName: '$default',
      autoDeploy: true,
      throttle: { rateLimit: config.api.throttleRateLimit, burstLimit: config.api.throttleBurstLimit },
      accessLogSettings: {
        destination: new LogGroupLogDestination(accessLogs),
        // routeKey, never the path: the KYC path carries the callback token, a secret.
        format: AccessLogFormat.custom(
          JSON.stringify({
            requestId: '$context.requestId',
            sourceIp: '$context.identity.sourceIp',
            requestTime: '$context.requestTime',
            routeKey: '$context.routeKey',
            status: '$context.status',
            responseLength: '$context.responseLength',
            latencyMs: '$context.responseLatency',
            integrationStatus: '$context.integrationStatus',
            integrationError: '$context.integrationErrorMessage',
          }),
        ),
      },
    });
    for (const route of ROUTES) {
      const target = this.functions[route.functionId];
      // A stage without KYC has no KYC receiver, so no public KYC route a request could reach.
      if (!target && route.functionId === FUNCTIONS.kycCallback.id && !config.kyc.enabled) continue;
      if (!target) throw new Error(`route ${route.path} names ${route.functionId}, which this stage does not deploy (shared/config/functions.ts)`);
      this.api.addRoutes({
        path: route.path,
        methods: [HttpMethod[route.method]],
        integration: new HttpLambdaIntegration(`${target.node.id}Integration`, target),
      });
    }
    Validations.of(this.api).acknowledge({
      id: 'AwsSolutions::AwsSolutions-APIG4',
      reason:
        'Providers cannot send our credentials: the KYC route is authorised by the unguessable token in its path (checked against the KYC secret), and order notifications by their SHA-512 body signature, both verified in the handler before anything is stored or applied.',
    });

    const output = (key: string, value: string, description: string) => new CfnOutput(this, key, { value, description });
    this.monitoring = new PayrelayMonitoring(this, 'Monitoring', {
      config,
      functions: this.functions,
      api: this.api,
      payoutsQueue: stateful.payoutsQueue,
      payoutsDlq: stateful.payoutsDlq,
      checksDlq: stateful.checksDlq,
      callbackApplyFailures: stateful.callbackApplyFailures,
    });

    if (stateful.apiDomain) {
      new ApiMapping(this, 'CallbackApiMapping', { api: this.api, domainName: stateful.apiDomain, stage: this.apiStage });
      output(OUTPUT.apiDomainTarget, stateful.apiDomain.regionalDomainName, `DNS target of ${stateful.apiDomain.name}: a CNAME (or Route 53 alias) to this`);
    } else if (config.removalPolicy === 'retain') {
      Annotations.of(this).addWarningV2(
        'payrelay:no-api-domain',
        'api.domain is not set: the callback URLs use the API\'s default hostname, which changes if this stack is destroyed and recreated (every registered notification URL and open KYC order would break). Production stages should set api.domain (docs/deploy.md).',
      );
    }
    // With a custom domain the URLs to register are on it: they survive a recreated app stack.
    const baseUrl = stateful.apiDomain ? `https://${config.api.domain?.name}/` : this.apiStage.url;
    const routeUrl = (functionId: FunctionDefinition['id']) => {
      const route = ROUTES.find((r) => r.functionId === functionId);
      if (!route) throw new Error(`no route for ${functionId} in shared/config/functions.ts`);
      // Drop the leading "/" (the stage URL ends with one) and any trailing path parameter.
      return `${baseUrl}${route.path.slice(1).replace(/\{[^}]+\}$/, '')}`;
    };
    output(OUTPUT.apiUrl, baseUrl, stateful.apiDomain ? 'Base URL of the callback API on its custom domain' : 'Base URL of the callback API (default hostname)');
    if (config.kyc.enabled) {
      output(OUTPUT.kycCallbackBaseUrl, routeUrl('kyc-callback'), 'KYC callback URL without its token: append callback_token from the KYC secret');
    } else {
      // What the CLI reads to refuse the KYC commands on this stage (cli/target.ts). Naming the kept
      // table keeps the data stack's published reference to it, so its template is the same with KYC on or off.
      output(
        OUTPUT.kycNotDeployed,
        Fn.join('', [`kyc.enabled is false: no KYC route or KYC functions on this stage; the data stack keeps the KYC table (`, stateful.kycTable.table.tableArn, ') and secret']),
        'KYC is left out of this stage: turn it on with kyc: { enabled: true } (or -c kycEnabled=true), deploy, then put the KYC secret (docs/deploy.md)',
      );
    }
    output(OUTPUT.payoutNotificationUrl, routeUrl('payout-notification'), 'Order notification URL to register with the payout provider');
    output(OUTPUT.payoutsTableName, stateful.payoutsTable.table.tableName, 'Payouts table (PAYOUTS_TABLE_NAME)');
    output(OUTPUT.eventsTableName, stateful.eventsTable.table.tableName, 'Received callbacks (EVENTS_TABLE_NAME)');
    output(OUTPUT.kycTableName, stateful.kycTable.table.tableName, 'KYC subjects and orders (KYC_TABLE_NAME)');
    output(OUTPUT.quarantineTableName, stateful.quarantineTable.table.tableName, 'Order notifications whose signature did not match (QUARANTINE_TABLE_NAME)');
    output(OUTPUT.collectionsTableName, stateful.collectionsTable.table.tableName, 'Collection orders and their payment status (COLLECTIONS_TABLE_NAME)');
    output(OUTPUT.payoutsQueueUrl, stateful.payoutsQueue.queueUrl, 'Send payout requests here (PAYOUTS_QUEUE_URL)');
    output(OUTPUT.payoutsDlqUrl, stateful.payoutsDlq.queueUrl, 'Dead-letter queue of payout requests (PAYOUTS_DLQ_URL)');
    output(OUTPUT.providerSecretArn, stateful.providerSecret.secretArn, 'Provider credentials secret (PROVIDER_SECRET_ID)');
    output(OUTPUT.kycSecretArn, stateful.kycSecret.secretArn, 'KYC app id and callback token secret (KYC_SECRET_ID)');
    output(OUTPUT.accountKeySecretArn, stateful.accountKeySecret.secretArn, "Key of the payouts' account fingerprints (ACCOUNT_KEY_SECRET_ID; generated, never rotated)");
    output(OUTPUT.payoutApiBaseUrl, config.payoutApiBaseUrl, 'Payout service base URL the functions call (PAYOUT_API_BASE_URL)');
    if (config.kyc.enabled) output(OUTPUT.kycApiBaseUrl, kycApiBaseUrl(config), 'KYC service base URL the functions call (KYC_API_BASE_URL)');
    output(
      OUTPUT.providerClientSettings,
      JSON.stringify(Object.fromEntries(PROVIDER_CLIENT_SETTINGS.filter((name) => settings[name] !== undefined).map((name) => [name, settings[name]]))),
      "The payout service client's settings the functions run with (the CLI uses the same)",
    );
    output(
      OUTPUT.egressIps,
      stateful.egressIps.length > 0 ? Fn.join(',', [...stateful.egressIps]) : 'none (static egress is off)',
      'Addresses provider calls leave from: send them to the provider for its IP whitelist',
    );
  }

  /**
   * The callback applier: the events table's stream (inserts of recognized events only, so the
   * unrecognized and the TTL deletions never invoke it) applies each stored callback right after
   * its 200; a failing batch is bisected and retried, then its records go to the failure queue
   * (alarmed). A schedule sweeps the not-yet-applied index for anything the stream left, so a
   * stored callback is applied even when every retry failed.
   */
  private callbackApplier(make: MakeFunction, stateful: PayrelayStatefulResources): PayrelayFunction {
    const fn = make(FUNCTIONS.callbackApplier, 'CallbackApplier');
    fn.addEventSource(
      new DynamoEventSource(stateful.eventsTable.table, {
        startingPosition: StartingPosition.TRIM_HORIZON,
        batchSize: 100,
        bisectBatchOnError: true,
        retryAttempts: APPLY_STREAM_RETRIES,
        reportBatchItemFailures: true,
        onFailure: failureQueue(stateful.callbackApplyFailures, stateful.dataKey),
        filters: [FilterCriteria.filter({ eventName: FilterRule.isEqual('INSERT'), dynamodb: { NewImage: { applyShard: { S: FilterRule.exists() } } } })],
      }),
    );
    new Rule(this, 'CallbackApplySweep', {
      description: `payrelay: apply stored callbacks the stream left unapplied, every ${APPLY_SWEEP_EVERY_MINUTES} minutes`,
      schedule: Schedule.rate(Duration.minutes(APPLY_SWEEP_EVERY_MINUTES)),
      targets: [new LambdaFunction(fn, { retryAttempts: 0 })],
    });
    return fn;
  }

  /**
   * The optional scheduled KYC catch-up: pulls the callbacks the KYC service sent in the look-back
   * window and stores and applies the missed ones. Runs may overlap harmlessly (store-once), and a
   * failed run is retried by Lambda's async retries and then by the next tick.
   */
  private kycCatchUp(make: MakeFunction, catchUp: NonNullable<PayrelayConfig['kycCatchUp']>, config: PayrelayConfig): PayrelayFunction {
    const fn = make(KYC_CATCH_UP_FUNCTION, 'KycCatchUp');
    fn.addEnvironment('KYC_API_BASE_URL', kycApiBaseUrl(config));
    fn.addEnvironment('KYC_CATCH_UP_LOOKBACK_HOURS', String(catchUp.lookbackHours));
    new Rule(this, 'KycCatchUpSchedule', {
      description: `payrelay ${config.stage}: recover missed KYC callbacks from the KYC service (${catchUp.schedule}, last ${catchUp.lookbackHours} h)`,
      schedule: Schedule.expression(catchUp.schedule),
      targets: [new LambdaFunction(fn)],
    });
    return fn;
  }
}

/**
 * A stream's failure destination on an SQS queue, which Lambda sends the records it gave up on to with
 * the function's role. SqsDlq's grant, except on the stage's key: there exactly what a send needs
 * (KEY_ACTIONS.queueSend), where SqsDlq's grantSendMessages would add kms:Encrypt, kms:ReEncrypt* and
 * kms:GenerateDataKey*, which SQS never asks of a sender (and which cdk-nag refuses as wildcards).
 */
function failureQueue(queue: IQueue, dataKey: IKey | undefined): IEventSourceDlq {
  return {
    bind: (_mapping, fn) => {
      Grant.addToPrincipal({ grantee: fn, actions: ['sqs:SendMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl'], resourceArns: [queue.queueArn] });
      if (dataKey) Grant.addToPrincipal({ grantee: fn, actions: [...KEY_ACTIONS.queueSend], resourceArns: [dataKey.keyArn] });
      return { destination: queue.queueArn };
    },
  };
}

/** Builds one payrelay function with the stage's defaults (the stateless stack's `make`). */
type MakeFunction = (definition: FunctionDefinition, logicalId: string, reservedConcurrentExecutions?: number) => PayrelayFunction;

/**
 * cdk-nag findings a payrelay function has, each with the reason it is accepted: actions with no
 * resource-level permissions (X-Ray when traced, the EC2 network-interface actions in the egress
 * VPC, dynamodb:ListStreams for a stream reader) need Resource "*".
 */
function acknowledgeLambdaFindings(fn: PayrelayFunction, readsStream: boolean, traced: boolean): void {
  if (!fn.role) return;
  const needs = [
    traced ? 'X-Ray PutTraceSegments/PutTelemetryRecords (tracing)' : undefined,
    fn.isBoundToVpc ? 'the EC2 network-interface actions Lambda needs in the egress VPC' : undefined,
    readsStream ? 'dynamodb:ListStreams, which the DynamoDB stream event source adds' : undefined,
  ].filter((need) => need !== undefined);
  if (needs.length === 0) return;
  Validations.of(fn.role).acknowledge({
    id: 'AwsSolutions::AwsSolutions-IAM5[Resource::*]',
    reason: `${needs.join('; ')}: no resource-level permissions exist for these, so they need Resource "*".`,
  });
}
