import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import * as v from '@shared/validation/valibot';
import { DEFAULT_RECONCILE_EVERY_MINUTES, FUNCTIONS } from '@shared/config/functions';
import { DEFAULT_KYC_CATCH_UP_LOOKBACK_HOURS } from '@shared/config/kyc-catch-up';
import { DEFAULT_EVENT_RETENTION_DAYS, MAX_WEBHOOK_BODY_BYTES, parseAllowList } from '@shared/config/webhook';
import { PAYOUTS_QUEUE, TABLES } from '@shared/config/resources';
import { parseDefiniteRefusals } from '@shared/domain/definite-refusals';
import { parseStatusMap } from '@shared/providers/status-map';
import { resolveSigningProfile } from '@shared/signing/profile';

/** Thrown at synth time when the deployment configuration is invalid; the message names every bad key. */
export class PayrelayConfigError extends Error {
  override name = 'PayrelayConfigError';
}

const RETENTION_VALUES = new Set<number>(Object.values(RetentionDays).filter((v): v is number => typeof v === 'number'));

const int = v.pipe(v.number(), v.integer());
const positiveInt = v.pipe(int, v.gtValue(0));
/**
 * Text a setting is read from: blank is refused here, as the handlers refuse a blank variable, so
 * that a stage cannot deploy functions that fail their start.
 */
const settingText = v.pipe(v.string(), v.check((text) => text.trim() !== '', 'is empty: leave the key out to use the default, or give a value'));
/** A whole number from `min` to `max`. */
const intBetween = (min: number, max: number) => v.pipe(int, v.minValue(min), v.maxValue(max));

/**
 * The longest reconcile interval: a tick the reconciler cannot take at once is dropped once older than
 * the interval (its maximumEventAge), and Lambda keeps an asynchronous event 6 hours at most.
 */
export const MAX_RECONCILE_EVERY_MINUTES = 360;

/** Provider calls a payout makes one after the other in one worker invocation: AccountVerification, the KYC pull (with gating), Payout. */
const WORKER_SEQUENTIAL_PROVIDER_CALLS = 3;
/** What the worker's time-out keeps beside those calls: the secret read, the DynamoDB writes, a cold start. */
const WORKER_TIME_MARGIN_MS = 15_000;
/**
 * The longest per-call provider time-out: three calls that each take all of it, plus the margin, still
 * end within the worker's time-out (a worker killed mid-payout leaves it to the retry and reconciler).
 */
export const MAX_PROVIDER_TIMEOUT_MS = Math.floor(
  (FUNCTIONS.payoutWorker.timeoutSeconds * 1000 - WORKER_TIME_MARGIN_MS) / WORKER_SEQUENTIAL_PROVIDER_CALLS,
);

/** An existing Elastic IP: its allocation id (for the NAT gateway) and its address (for the EgressIps output). */
const elasticIpSchema = v.strictObject({
  allocationId: v.pipe(v.string(), v.regex(/^eipalloc-[0-9a-f]{8,17}$/, 'must be an Elastic IP allocation id (eipalloc-...)')),
  publicIp: v.pipe(v.string(), v.ipv4('must be an IPv4 address such as 203.0.113.10')),
});

/**
 * A KMS key ARN, never an alias: IAM policies and the key's grants name the key itself, and an alias
 * ARN in a policy's Resource authorizes nothing. `mrk-` ids are multi-Region keys.
 */
const KMS_KEY_ARN = /^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key\/(mrk-[0-9a-f]{32}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

/** Tags payrelay puts on every resource itself; a stage's own `tags` may not redefine them. */
export const PAYRELAY_TAG_KEYS = ['app', 'stage'] as const;

/**
 * Most tags a stage may add: AWS allows 50 a resource, payrelay puts 2 (PAYRELAY_TAG_KEYS), and some
 * services add their own (CloudFormation's `aws:` tags do not count, but leave room for a landing zone's).
 */
export const MAX_STAGE_TAGS = 40;

/** The characters AWS allows in tag keys and values across the services payrelay deploys. */
const TAG_TEXT = /^[\p{L}\p{Z}\p{N}_.:/=+\-@]*$/u;

const tagsSchema = v.pipe(
  v.record(
    v.pipe(
      v.string(),
      v.minLength(1, 'a tag key must not be empty'),
      v.maxLength(128, 'a tag key has at most 128 characters'),
      v.regex(TAG_TEXT, 'a tag key may hold letters, digits, spaces and _ . : / = + - @'),
      v.check((key) => !key.toLowerCase().startsWith('aws:'), 'a tag key must not start with "aws:" (reserved by AWS)'),
      v.check((key) => !(PAYRELAY_TAG_KEYS as readonly string[]).includes(key), `payrelay sets the tags ${PAYRELAY_TAG_KEYS.join(' and ')} itself`),
    ),
    v.pipe(
      v.string(),
      v.maxLength(256, 'a tag value has at most 256 characters'),
      v.regex(TAG_TEXT, 'a tag value may hold letters, digits, spaces and _ . : / = + - @'),
    ),
  ),
  v.check((tags) => Object.keys(tags).length <= MAX_STAGE_TAGS, `at most ${MAX_STAGE_TAGS} tags (AWS allows 50 a resource; payrelay adds ${PAYRELAY_TAG_KEYS.length})`),
);

/** An IAM managed policy: its name, or its ARN (`arn:aws:iam::<account>:policy/<optional path/><name>`). */
const POLICY_NAME = /^[\w+=,.@-]{1,128}$/;
export const POLICY_ARN = /^arn:aws[a-z-]*:iam::\d{12}:policy\/(?:[\w+=,.@-]+\/)*[\w+=,.@-]{1,128}$/;

/** Which key encrypts the data stores: see `encryption` in payrelayConfigSchema. */
export const ENCRYPTION_KEYS = ['aws-managed', 'customer-managed'] as const;

const encryptionSchema = v.pipe(
  v.strictObject({
    /**
     * `aws-managed` (the default): the tables under `aws/dynamodb`, the queues under SSE-SQS, the
     * secrets under `aws/secretsmanager`, the log groups under CloudWatch Logs' own encryption.
     * `customer-managed`: all of them under one KMS key of the stage's (docs/deploy.md, "Encryption").
     */
    key: v.optional(v.picklist(ENCRYPTION_KEYS), 'aws-managed'),
    /**
     * With `key: 'customer-managed'`: an existing key to use instead of creating one (a platform team's
     * key, or the key a retained stage kept). Its key policy must already allow what docs/deploy.md lists.
     */
    keyArn: v.optional(
      v.pipe(v.string(), v.regex(KMS_KEY_ARN, 'must be a KMS key ARN (arn:aws:kms:<region>:<account>:key/<key id>), not an alias or a key id')),
    ),
    /**
     * Keys this stage's stores used before a move to another key (or back to AWS-managed keys), kept
     * readable while what they encrypted drains: each message's data key stays under the key it was
     * sent with, so without this the worker and the checker could not receive the messages queued
     * before the move. Only kms:Decrypt, only for the queue consumers. Remove them once the queues
     * and DLQs are empty (docs/deploy.md, "Moving to another key").
     */
    previousKeyArns: v.optional(
      v.pipe(
        v.array(v.pipe(v.string(), v.regex(KMS_KEY_ARN, 'must be a KMS key ARN (arn:aws:kms:<region>:<account>:key/<key id>), not an alias or a key id'))),
        v.maxLength(5, 'at most 5 previous keys'),
      ),
      [],
    ),
  }),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const encryption = dataset.value;
    if (encryption.keyArn !== undefined && encryption.key !== 'customer-managed') {
      addIssue({
        message: "needs encryption.key: 'customer-managed': an existing key is used only by a stage encrypted with a customer-managed key",
        ...v.issueAt(encryption, 'keyArn'),
      });
    }
  }),
);

/** Whether `value` parses as a URL whose scheme is http or https. */
function isHttpUrl(value: string): boolean {
  try {
    return /^https?:$/.test(new URL(value).protocol);
  } catch {
    return false;
  }
}

const httpsOrLocalUrl = v.pipe(v.string(), v.check(isHttpUrl, 'must be an http(s) URL, e.g. https://provider.example'), v.check((value) => !value.endsWith('/'), 'must not end with "/"'));

/**
 * A setting the handlers parse at every cold start (SIGNING_PROFILE, PROVIDER_STATUS_MAP,
 * PAYOUT_DEFINITE_REFUSALS, WEBHOOK_ALLOWED_IPS), parsed here with the handlers' own parser: a value
 * they would refuse fails `cdk synth` in their words, instead of deploying functions that cannot start.
 */
const readByHandlers = <T>(parse: (value: T) => unknown) =>
  v.rawCheck<T>(({ dataset, addIssue }) => {
    if (!dataset.typed || dataset.issues) return;
    try {
      parse(dataset.value);
    } catch (error) {
      addIssue({ message: error instanceof Error ? error.message : 'is not a value the functions can read' });
    }
  });

/**
 * Worker settings passed to the handlers as the environment variables of docs/architecture.md.
 * Each is optional: left out, the handler's own default applies and nothing is duplicated here.
 */
export const settingsSchema = v.strictObject({
    /** BEARER_PREFIX: send `Authorization: Bearer <key>` (the handler default is true). */
    bearerPrefix: v.optional(v.boolean()),
    /** PROVIDER_TIMEOUT_MS: per-call time-out of provider requests. */
    providerTimeoutMs: v.optional(
      v.pipe(
        int,
        v.minValue(1),
        v.maxValue(
          MAX_PROVIDER_TIMEOUT_MS,
          `must be at most ${MAX_PROVIDER_TIMEOUT_MS} ms: a payout makes up to ${WORKER_SEQUENTIAL_PROVIDER_CALLS} provider calls in a row, and they must end, with ${WORKER_TIME_MARGIN_MS / 1000} s to spare, within the worker's ${FUNCTIONS.payoutWorker.timeoutSeconds} s time-out`,
        ),
      ),
    ),
    /** PROVIDER_STATUS_MAP: JSON overriding the provider status table. */
    providerStatusMap: v.optional(v.pipe(settingText, readByHandlers<string>(parseStatusMap))),
    /** NAME_MATCH_THRESHOLD: 0..1 similarity required between the expected and verified account name. */
    nameMatchThreshold: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(1))),
    /** KYC_GATING: refuse payouts for users whose KYC is not approved. */
    kycGating: v.optional(v.boolean()),
    /**
     * PAYOUT_DEFINITE_REFUSALS: Payout refusals known to be final (FAILED at once), as
     * `{ status, message }` with message a case-insensitive pattern. Empty by default: every refusal
     * is settled through GetPayout.
     */
    payoutDefiniteRefusals: v.optional(
      v.pipe(
        v.array(v.strictObject({ status: intBetween(200, 499), message: v.pipe(v.string(), v.minLength(1), v.maxLength(200)) })),
        readByHandlers((refusals) => parseDefiniteRefusals(JSON.stringify(refusals))),
      ),
    ),
    /** RESUBMIT_UNKNOWN_NOT_FOUND: resubmit an UNKNOWN payout the provider says it does not know. */
    resubmitUnknownNotFound: v.optional(v.boolean()),
    /** REVIEW_AFTER_MINUTES: age after which an open payout goes to NEEDS_REVIEW. */
    reviewAfterMinutes: v.optional(positiveInt),
    /** GATEWAY_ERROR_REVIEW_MINUTES: age after which an open payout reporting a gateway error word goes to NEEDS_REVIEW. */
    gatewayErrorReviewMinutes: v.optional(positiveInt),
    /** NOT_FOUND_GRACE_MINUTES: grace before acting on "provider does not know it". */
    notFoundGraceMinutes: v.optional(positiveInt),
    /** REVIEW_WATCH_HOURLY_DAYS: a NEEDS_REVIEW payout is asked about hourly for this many days. */
    reviewWatchHourlyDays: v.optional(intBetween(1, 90)),
    /** REVIEW_WATCH_DAILY_DAYS: then daily for this many days. */
    reviewWatchDailyDays: v.optional(intBetween(1, 365)),
    /** REVERSAL_WATCH_DAYS: a SUCCEEDED payout is asked about for returned money 1, 2, ... this many days after it settled. */
    reversalWatchDays: v.optional(intBetween(1, 365)),
    /** WEBHOOK_MAX_BODY_BYTES: the receivers refuse larger bodies. */
    webhookMaxBodyBytes: v.optional(
      v.pipe(positiveInt, v.maxValue(MAX_WEBHOOK_BODY_BYTES, `must be at most ${MAX_WEBHOOK_BODY_BYTES} (a stored event is one DynamoDB item, 400 KB at most)`)),
    ),
    /** WEBHOOK_ALLOWED_IPS: source addresses (CIDR or exact) the receivers accept. */
    webhookAllowedIps: v.optional(
      v.pipe(v.array(settingText), v.minLength(1), readByHandlers((entries) => parseAllowList(entries.join(',')))),
    ),
    /** WORKER_CONCURRENCY: payouts one worker invocation processes at once (x worker.maxConcurrency = provider calls in flight). */
    workerConcurrency: v.optional(intBetween(1, 10)),
    /** RECONCILE_CONCURRENCY: GetPayout calls one reconciler run makes at once. */
    reconcileConcurrency: v.optional(intBetween(1, 50)),
    /** EVENT_RETENTION_DAYS: TTL of stored callbacks. */
    eventRetentionDays: v.optional(positiveInt),
});

/** Every global secondary index the data stack creates, by name (what `deferIndexes` may name). */
const INDEX_NAMES: ReadonlySet<string> = new Set(TABLES.flatMap((table) => table.indexes.map((index) => index.indexName)));

/** EventBridge schedule expressions: `rate(<n> <unit>)` or `cron(<6 fields>)`. */
const SCHEDULE_EXPRESSION = /^(rate\(\d+ (minute|minutes|hour|hours|day|days)\)|cron\(\S+( \S+){5}\))$/;

/** Why a retained stage refuses to synthesize without an alarm destination, and the ways to give one. */
export const NO_ALARM_DESTINATION =
  'a retained stage (removalPolicy "retain") needs somewhere to send its alarms. Give an e-mail address ' +
  '(-c alarmEmail=oncall@example.com, or alarms: { email: ... } in infra/stages.ts) or an existing SNS topic ' +
  '(-c alarmTopicArn=arn:aws:sns:<region>:<account>:<topic>, or alarms: { topicArn: ... }); see docs/alarms.md';

/**
 * The whole deployment configuration of one payrelay stage. The `Payrelay` construct validates its
 * props with this schema, so a CDK app that embeds payrelay gets the same errors as `infra/app.ts`.
 */
export const payrelayConfigSchema = v.pipe(
  v.strictObject({
    /** Lower-case name used in every physical name (`payrelay-<stage>-...`). */
    stage: v.pipe(v.string(), v.regex(/^[a-z][a-z0-9-]{0,19}$/, 'must be 1-20 characters: a-z, 0-9 and "-", starting with a letter')),
    /**
     * The AWS account this stage deploys to (12 digits). Set, the stacks are bound to it and synth
     * refuses credentials of another account (CDK_DEFAULT_ACCOUNT); left out, the stacks deploy where
     * the credentials point. Set it for every stage that moves real money.
     */
    account: v.optional(v.pipe(v.string(), v.regex(/^\d{12}$/, 'must be a 12-digit AWS account id such as 123456789012'))),
    /** The AWS region this stage deploys to, e.g. eu-west-1; synth refuses credentials of another region (CDK_DEFAULT_REGION). */
    region: v.optional(v.pipe(v.string(), v.regex(/^[a-z]{2}(-[a-z]+)+-\d{1,2}$/, 'must be an AWS region such as eu-west-1'))),
    /** Base URL of the payout service (PAYOUT_API_BASE_URL), without a trailing "/". */
    payoutApiBaseUrl: httpsOrLocalUrl,
    /**
     * Base URL of the KYC service (KYC_API_BASE_URL), without a trailing "/". Required while
     * `kyc.enabled` is true; a stage without KYC may leave it out, or keep it for the day KYC is
     * turned back on (it is then not used: no function, output or egress rule is built from it).
     */
    kycApiBaseUrl: v.optional(httpsOrLocalUrl),
    /**
     * The KYC service on this stage. `enabled: false` (for a stage that uses payrelay for payouts
     * only) leaves out the KYC callback route and function, the scheduled catch-up, the KYC alarms and
     * dashboard lines, and every grant a function has only for KYC, so the public KYC route cannot
     * answer 503 "not configured" to a scanner and page someone (Api5xx). The data stack is the same
     * either way: the KYC table and secret are kept, and turning it on again finds them as they were.
     */
    kyc: v.optional(
      v.strictObject({
        /** Deploy the KYC callback route and everything that serves the KYC service (the default). */
        enabled: v.optional(v.boolean(), true),
      }),
      {},
    ),
    /** How often the reconciler runs. */
    reconcileEveryMinutes: v.optional(
      v.pipe(
        int,
        v.minValue(1),
        v.maxValue(
          MAX_RECONCILE_EVERY_MINUTES,
          `must be at most ${MAX_RECONCILE_EVERY_MINUTES} (6 hours): a reconcile tick waits at most one interval for a run to end, and Lambda keeps an event 6 hours at most (maximumEventAge)`,
        ),
      ),
      DEFAULT_RECONCILE_EVERY_MINUTES,
    ),
    /** SIGNING_PROFILE: a profile name or a JSON profile; left out, the handlers use the default profile. */
    signingProfile: v.optional(v.pipe(settingText, readByHandlers<string>(resolveSigningProfile))),
    worker: v.optional(
      v.strictObject({
        /** Most worker invocations at once: the cap on parallel calls to the payout provider. SQS allows 2..1000. */
        maxConcurrency: v.optional(intBetween(2, 1000), 5),
        /** Messages per invocation (1..10). */
        batchSize: v.optional(intBetween(1, 10), 5),
      }),
      {},
    ),
    /** Receives before a payout message moves to the DLQ. */
    maxReceiveCount: v.optional(intBetween(1, 1000), PAYOUTS_QUEUE.defaultMaxReceiveCount),
    alarms: v.optional(
      v.strictObject({
        /** Creates an SNS topic with this e-mail subscription and wires every alarm to it. */
        email: v.optional(v.pipe(v.string(), v.email('must be an e-mail address'))),
        /**
         * An SNS topic that already exists (your paging tool's, a chat integration's): every alarm
         * notifies it too. If it is encrypted, its key must let cloudwatch.amazonaws.com use it.
         */
        topicArn: v.optional(
          v.pipe(v.string(), v.regex(/^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}$/, 'must be an SNS topic ARN (arn:aws:sns:<region>:<account>:<topic name>)')),
        ),
        /** Alarm when the oldest message on the payouts queue is older than this. */
        queueAgeMinutes: v.optional(intBetween(1, 1440), 15),
        /** Alarm when the oldest UNKNOWN payout is older than this. */
        unknownAgeMinutes: v.optional(positiveInt, 60),
        /**
         * Alarm when a payout has waited for a person (NEEDS_REVIEW) longer than this many hours
         * (PayoutAwaitingReviewTooLong): the review SLA. 24 by default because the hand-over already
         * pages (PayoutNeedsReview) and PayoutsAwaitingReview stays on while any waits, so this alarm
         * is the escalation for a review that has been missed: a day gives every hand-over a working
         * day and a night before it escalates, without waking anyone for a review that is merely
         * being worked on. Whole hours, as the SLA is written.
         */
        reviewWaitHours: v.optional(positiveInt, 24),
        /** Alarm when more unauthorised callbacks than this arrive within 5 minutes. */
        webhookUnauthorizedPer5Minutes: v.optional(positiveInt, 10),
        /** Alarm when more 5xx answers than this leave the API within 5 minutes (0: any). */
        api5xxPer5Minutes: v.optional(v.pipe(int, v.minValue(0)), 0),
      }),
      {},
    ),
    egress: v.optional(
      v.pipe(
        v.strictObject({
        /** Route provider calls through NAT gateways with Elastic IPs the provider can whitelist. */
        staticIps: v.optional(v.boolean(), false),
        /** One NAT gateway (and one IP) per AZ used; 2 survives the loss of an AZ. At most the region's AZ count. */
        natGateways: v.optional(intBetween(1, 3), 1),
        /**
         * Elastic IPs that already exist (kept from an earlier deploy, already whitelisted by the
         * provider): the NAT gateways use these instead of allocating new ones. One per NAT gateway.
         */
        elasticIps: v.optional(v.pipe(v.array(elasticIpSchema), v.minLength(1), v.maxLength(3))),
        }),
        v.rawCheck(({ dataset, addIssue }) => {
          if (!dataset.typed) return;
          const egress = dataset.value;
          if (egress.elasticIps === undefined) return;
          const at = v.issueAt(egress, 'elasticIps');
          if (!egress.staticIps) {
            addIssue({ message: 'needs egress.staticIps: true (the addresses are used by the NAT gateways)', ...at });
          } else if (egress.elasticIps.length !== egress.natGateways) {
            addIssue({
              message: `${egress.elasticIps.length} address(es) given but egress.natGateways is ${egress.natGateways}: one NAT gateway per address, so set natGateways to ${egress.elasticIps.length}`,
              ...at,
            });
          }
        }),
      ),
      {},
    ),
    /** What happens to tables, queues, secrets, IPs and logs when the stack is deleted. */
    removalPolicy: v.optional(v.picklist(['retain', 'destroy']), 'retain'),
    api: v.optional(
      v.strictObject({
        /** Steady-state requests per second across the callback routes. */
        throttleRateLimit: v.optional(positiveInt, 50),
        /** Burst of requests the API accepts above the steady rate. */
        throttleBurstLimit: v.optional(positiveInt, 100),
        /**
         * A custom domain for the callback API: the production way to get callback URLs that survive
         * destroying and recreating the app stack (the default execute-api hostname changes then).
         */
        domain: v.optional(
          v.strictObject({
            /** e.g. `callbacks.example.com`; you point it at the `ApiDomainTarget` output in DNS. */
            name: v.pipe(v.string(), v.regex(/^(?!-)[a-z0-9-]{1,63}(?<!-)(\.(?!-)[a-z0-9-]{1,63}(?<!-))+$/, 'must be a lower-case DNS name such as callbacks.example.com')),
            /** An ACM certificate for `name`, issued in the stack's region (regional endpoint). */
            certificateArn: v.pipe(
              v.string(),
              v.regex(/^arn:aws[a-z-]*:acm:[a-z0-9-]+:\d{12}:certificate\/[0-9a-f-]+$/, 'must be an ACM certificate ARN (arn:aws:acm:<region>:<account>:certificate/<id>)'),
            ),
          }),
        ),
      }),
      {},
    ),
    /** Retention of function and API access logs; one of CloudWatch's allowed values. */
    logRetentionDays: v.optional(
      v.pipe(int, v.check((days) => RETENTION_VALUES.has(days), 'must be a CloudWatch Logs retention value (1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, ...)')),
      90,
    ),
    /**
     * The KMS key of the tables, queues, secrets and log groups: `{ key: 'aws-managed' }` (the default)
     * or `{ key: 'customer-managed' }`, which creates one key (`alias/payrelay-<stage>-data`), or with
     * `keyArn` uses an existing one.
     */
    encryption: v.optional(encryptionSchema, {}),
    /**
     * Tags on every resource of both stacks, beside payrelay's own `app` and `stage`: cost allocation,
     * ownership, data classification, whatever the account's tag policy asks for.
     */
    tags: v.optional(tagsSchema, {}),
    /**
     * The permissions boundary of every IAM role the stacks create (the functions' roles and the
     * helper roles CDK adds): an IAM managed policy's name, or its ARN in the stage's account. For
     * accounts whose guardrails refuse CreateRole without one.
     */
    permissionsBoundary: v.optional(
      v.pipe(
        v.string(),
        v.check(
          (text) => POLICY_NAME.test(text) || POLICY_ARN.test(text),
          'must be an IAM managed policy name (such as payrelay-boundary) or its ARN (arn:aws:iam::<account>:policy/<name>)',
        ),
      ),
    ),
    /** POWERTOOLS_LOG_LEVEL of every function. */
    logLevel: v.optional(v.picklist(['DEBUG', 'INFO', 'WARN', 'ERROR']), 'INFO'),
    /**
     * X-Ray tracing of every function (active tracing, the Powertools tracer, the SDK and provider
     * calls as subsegments). Off, no trace is recorded and each cold start skips loading the X-Ray
     * SDK (docs/performance.md, "Cold start"); leave it on unless that matters more than the traces.
     */
    tracing: v.optional(v.boolean(), true),
    settings: v.optional(settingsSchema, {}),
    /**
     * The scheduled KYC catch-up (docs/webhooks.md): left out, there is none and missed KYC callbacks
     * are recovered only by `payrelay kyc catch-up`.
     */
    kycCatchUp: v.optional(
      v.strictObject({
        /** How often it runs: an EventBridge schedule expression, e.g. `rate(1 day)` or `cron(0 3 * * ? *)`. */
        schedule: v.pipe(v.string(), v.regex(SCHEDULE_EXPRESSION, 'must be an EventBridge schedule expression such as "rate(1 day)", "rate(6 hours)" or "cron(0 3 * * ? *)"')),
        /** KYC_CATCH_UP_LOOKBACK_HOURS: only callbacks whose own timestamp is this recent are looked at. */
        lookbackHours: v.optional(positiveInt, DEFAULT_KYC_CATCH_UP_LOOKBACK_HOURS),
      }),
    ),
    /**
     * Indexes to leave out of this deploy only. DynamoDB adds at most one index per table update, so a
     * stage upgraded to a version with two new indexes on one table deploys the data stack once with
     * one of them deferred, then again without this (docs/deploy.md). Never part of a stage file.
     */
    deferIndexes: v.optional(
      v.array(v.pipe(v.string(), v.check((name) => INDEX_NAMES.has(name), `must name an index of the data stack (${[...INDEX_NAMES].join(', ')})`))),
      [],
    ),
  }),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const config = dataset.value;
    // Every KYC piece reads the KYC service: a stage without it cannot ask for one of them.
    if (config.kyc.enabled) {
      if (config.kycApiBaseUrl === undefined) {
        addIssue({
          message: "is required while kyc.enabled is true (the default): give the KYC service's base URL (-c kycApiBaseUrl=https://...), or leave KYC out of this stage with kyc: { enabled: false } (-c kycEnabled=false)",
          ...v.issueAt(config, 'kycApiBaseUrl'),
        });
      }
    } else {
      if (config.settings.kycGating === true) {
        addIssue({
          message: `KYC gating needs the KYC service, which kyc.enabled: false leaves out of this stage: remove settings.kycGating (or set it to false), or turn KYC on (kyc: { enabled: true }, -c kycEnabled=true)`,
          path: [...v.issueAt(config, 'settings').path, ...v.issueAt(config.settings, 'kycGating').path],
        });
      }
      if (config.kycCatchUp !== undefined) {
        addIssue({
          message: `the scheduled KYC catch-up needs the KYC service, which kyc.enabled: false leaves out of this stage: remove kycCatchUp (and -c kycCatchUp), or turn KYC on (kyc: { enabled: true }, -c kycEnabled=true)`,
          ...v.issueAt(config, 'kycCatchUp'),
        });
      }
    }
    // A callback whose stored copy has expired would be stored and counted as recovered again.
    const retentionHours = (config.settings.eventRetentionDays ?? DEFAULT_EVENT_RETENTION_DAYS) * 24;
    if (config.kycCatchUp && config.kycCatchUp.lookbackHours >= retentionHours) {
      addIssue({
        message: `must be less than the events' retention (${retentionHours} hours, settings.eventRetentionDays): an older callback's stored copy may have expired, and it would be recovered again`,
        path: [...v.issueAt(config, 'kycCatchUp').path, ...v.issueAt(config.kycCatchUp, 'lookbackHours').path],
      });
    }
    // A retained stage holds real money: an alarm nobody receives is no alarm.
    if (config.removalPolicy === 'retain' && config.alarms.email === undefined && config.alarms.topicArn === undefined) {
      addIssue({ message: NO_ALARM_DESTINATION, ...v.issueAt(config, 'alarms') });
    }
  }),
);

/** Configuration as written by a person (defaults may be left out). */
export type PayrelayConfigInput = v.InferInput<typeof payrelayConfigSchema>;
/** Configuration after validation, with every default filled in. */
export type PayrelayConfig = v.InferOutput<typeof payrelayConfigSchema>;
export type PayrelaySettings = v.InferOutput<typeof settingsSchema>;

/**
 * Validates a configuration. The error lists every problem as `<key path>: <reason>`, so the
 * operator sees which key of the stage file or which `-c` option to fix.
 */
export function parsePayrelayConfig(input: unknown, source: string): PayrelayConfig {
  const result = v.safeParse(payrelayConfigSchema, input);
  if (!result.success) {
    // Unknown keys of one object are said together, in one line: "settings: unknown key(s) a, b".
    const lines: Array<{ text: string } | { parent: string; keys: string[] }> = [];
    for (const issue of result.issues) {
      if (!v.isUnknownKey(issue)) {
        lines.push({ text: `${v.issuePath(issue)}: ${issue.message}` });
        continue;
      }
      const path = (issue.path ?? []).map((item) => String(item.key));
      const parent = path.slice(0, -1).join('.') || '(root)';
      const same = lines.find((line) => 'parent' in line && line.parent === parent);
      if (same && 'keys' in same) same.keys.push(path.at(-1) ?? '');
      else lines.push({ parent, keys: [path.at(-1) ?? ''] });
    }
    const problems = lines.map((line) => ('text' in line ? line.text : `${line.parent}: unknown key(s) ${line.keys.join(', ')}`));
    throw new PayrelayConfigError(`invalid payrelay configuration (${source}):\n  - ${problems.join('\n  - ')}`);
  }
  return result.output;
}

/** Hosts that mark a base URL nobody has configured yet (RFC 6761: `.invalid` never resolves). */
export function isPlaceholderUrl(url: string): boolean {
  return new URL(url).hostname.endsWith('.invalid');
}
