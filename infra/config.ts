import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import * as z from 'zod';
import { DEFAULT_RECONCILE_EVERY_MINUTES } from '@shared/config/functions';
import { DEFAULT_KYC_CATCH_UP_LOOKBACK_HOURS } from '@shared/config/kyc-catch-up';
import { DEFAULT_EVENT_RETENTION_DAYS } from '@shared/config/webhook';
import { PAYOUTS_QUEUE, TABLES } from '@shared/config/resources';

/** Thrown at synth time when the deployment configuration is invalid; the message names every bad key. */
export class PayrelayConfigError extends Error {
  override name = 'PayrelayConfigError';
}

const RETENTION_VALUES = new Set<number>(Object.values(RetentionDays).filter((v): v is number => typeof v === 'number'));

const positiveInt = z.number().int().positive();

/** An existing Elastic IP: its allocation id (for the NAT gateway) and its address (for the EgressIps output). */
const elasticIpSchema = z
  .object({
    allocationId: z.string().regex(/^eipalloc-[0-9a-f]{8,17}$/, 'must be an Elastic IP allocation id (eipalloc-...)'),
    publicIp: z.ipv4(),
  })
  .strict();

const httpsOrLocalUrl = z.url({ protocol: /^https?$/ }).refine((value) => !value.endsWith('/'), 'must not end with "/"');

/**
 * Worker settings passed to the handlers as the environment variables of docs/architecture.md.
 * Each is optional: left out, the handler's own default applies and nothing is duplicated here.
 */
const settingsSchema = z
  .object({
    /** BEARER_PREFIX: send `Authorization: Bearer <key>` (the handler default is true). */
    bearerPrefix: z.boolean().optional(),
    /** PROVIDER_TIMEOUT_MS: per-call time-out of provider requests. */
    providerTimeoutMs: positiveInt.max(60_000).optional(),
    /** PROVIDER_STATUS_MAP: JSON overriding the provider status table. */
    providerStatusMap: z
      .string()
      .refine((value) => {
        try {
          const parsed: unknown = JSON.parse(value);
          return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed);
        } catch {
          return false;
        }
      }, 'must be a JSON object')
      .optional(),
    /** NAME_MATCH_THRESHOLD: 0..1 similarity required between the expected and verified account name. */
    nameMatchThreshold: z.number().min(0).max(1).optional(),
    /** KYC_GATING: refuse payouts for users whose KYC is not approved. */
    kycGating: z.boolean().optional(),
    /**
     * PAYOUT_DEFINITE_REFUSALS: Payout refusals known to be final (FAILED at once), as
     * `{ status, message }` with message a case-insensitive pattern. Empty by default: every refusal
     * is settled through GetPayout.
     */
    payoutDefiniteRefusals: z
      .array(z.object({ status: z.number().int().min(200).max(499), message: z.string().min(1).max(200) }).strict())
      .optional(),
    /** RESUBMIT_UNKNOWN_NOT_FOUND: resubmit an UNKNOWN payout the provider says it does not know. */
    resubmitUnknownNotFound: z.boolean().optional(),
    /** REVIEW_AFTER_MINUTES: age after which an open payout goes to NEEDS_REVIEW. */
    reviewAfterMinutes: positiveInt.optional(),
    /** GATEWAY_ERROR_REVIEW_MINUTES: age after which an open payout reporting a gateway error word goes to NEEDS_REVIEW. */
    gatewayErrorReviewMinutes: positiveInt.optional(),
    /** NOT_FOUND_GRACE_MINUTES: grace before acting on "provider does not know it". */
    notFoundGraceMinutes: positiveInt.optional(),
    /** REVIEW_WATCH_HOURLY_DAYS: a NEEDS_REVIEW payout is asked about hourly for this many days. */
    reviewWatchHourlyDays: positiveInt.max(90).optional(),
    /** REVIEW_WATCH_DAILY_DAYS: then daily for this many days. */
    reviewWatchDailyDays: positiveInt.max(365).optional(),
    /** REVERSAL_WATCH_DAYS: a SUCCEEDED payout is asked about for returned money 1, 2, ... this many days after it settled. */
    reversalWatchDays: positiveInt.max(365).optional(),
    /** WEBHOOK_MAX_BODY_BYTES: the receivers refuse larger bodies. */
    webhookMaxBodyBytes: positiveInt.optional(),
    /** WEBHOOK_ALLOWED_IPS: source addresses (CIDR or exact) the receivers accept. */
    webhookAllowedIps: z.array(z.string().min(1)).min(1).optional(),
    /** WORKER_CONCURRENCY: payouts one worker invocation processes at once (x worker.maxConcurrency = provider calls in flight). */
    workerConcurrency: positiveInt.max(10).optional(),
    /** RECONCILE_CONCURRENCY: GetPayout calls one reconciler run makes at once. */
    reconcileConcurrency: positiveInt.max(50).optional(),
    /** EVENT_RETENTION_DAYS: TTL of stored callbacks. */
    eventRetentionDays: positiveInt.optional(),
  })
  .strict();

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
export const payrelayConfigSchema = z
  .object({
    /** Lower-case name used in every physical name (`payrelay-<stage>-...`). */
    stage: z.string().regex(/^[a-z][a-z0-9-]{0,19}$/, 'must be 1-20 characters: a-z, 0-9 and "-", starting with a letter'),
    /** Base URL of the payout service (PAYOUT_API_BASE_URL), without a trailing "/". */
    payoutApiBaseUrl: httpsOrLocalUrl,
    /** Base URL of the KYC service (KYC_API_BASE_URL), without a trailing "/". */
    kycApiBaseUrl: httpsOrLocalUrl,
    /** How often the reconciler runs. */
    reconcileEveryMinutes: positiveInt.max(1440).default(DEFAULT_RECONCILE_EVERY_MINUTES),
    /** SIGNING_PROFILE: a profile name or a JSON profile; left out, the handlers use the default profile. */
    signingProfile: z.string().min(1).optional(),
    worker: z
      .object({
        /** Most worker invocations at once: the cap on parallel calls to the payout provider. SQS allows 2..1000. */
        maxConcurrency: z.number().int().min(2).max(1000).default(5),
        /** Messages per invocation (1..10). */
        batchSize: z.number().int().min(1).max(10).default(5),
      })
      .strict()
      .default({ maxConcurrency: 5, batchSize: 5 }),
    /** Receives before a payout message moves to the DLQ. */
    maxReceiveCount: z.number().int().min(1).max(1000).default(PAYOUTS_QUEUE.defaultMaxReceiveCount),
    alarms: z
      .object({
        /** Creates an SNS topic with this e-mail subscription and wires every alarm to it. */
        email: z.email().optional(),
        /**
         * An SNS topic that already exists (your paging tool's, a chat integration's): every alarm
         * notifies it too. If it is encrypted, its key must let cloudwatch.amazonaws.com use it.
         */
        topicArn: z
          .string()
          .regex(/^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}$/, 'must be an SNS topic ARN (arn:aws:sns:<region>:<account>:<topic name>)')
          .optional(),
        /** Alarm when the oldest message on the payouts queue is older than this. */
        queueAgeMinutes: positiveInt.max(1440).default(15),
        /** Alarm when the oldest UNKNOWN payout is older than this. */
        unknownAgeMinutes: positiveInt.default(60),
        /** Alarm when more unauthorised callbacks than this arrive within 5 minutes. */
        webhookUnauthorizedPer5Minutes: positiveInt.default(10),
        /** Alarm when more 5xx answers than this leave the API within 5 minutes (0: any). */
        api5xxPer5Minutes: z.number().int().min(0).default(0),
      })
      .strict()
      .default({ queueAgeMinutes: 15, unknownAgeMinutes: 60, webhookUnauthorizedPer5Minutes: 10, api5xxPer5Minutes: 0 }),
    egress: z
      .object({
        /** Route provider calls through NAT gateways with Elastic IPs the provider can whitelist. */
        staticIps: z.boolean().default(false),
        /** One NAT gateway (and one IP) per AZ used; 2 survives the loss of an AZ. At most the region's AZ count. */
        natGateways: z.number().int().min(1).max(3).default(1),
        /**
         * Elastic IPs that already exist (kept from an earlier deploy, already whitelisted by the
         * provider): the NAT gateways use these instead of allocating new ones. One per NAT gateway.
         */
        elasticIps: z.array(elasticIpSchema).min(1).max(3).optional(),
      })
      .strict()
      .superRefine((egress, ctx) => {
        if (egress.elasticIps === undefined) return;
        if (!egress.staticIps) {
          ctx.addIssue({ code: 'custom', path: ['elasticIps'], message: 'needs egress.staticIps: true (the addresses are used by the NAT gateways)' });
        } else if (egress.elasticIps.length !== egress.natGateways) {
          ctx.addIssue({
            code: 'custom',
            path: ['elasticIps'],
            message: `${egress.elasticIps.length} address(es) given but egress.natGateways is ${egress.natGateways}: one NAT gateway per address, so set natGateways to ${egress.elasticIps.length}`,
          });
        }
      })
      .default({ staticIps: false, natGateways: 1 }),
    /** What happens to tables, queues, secrets, IPs and logs when the stack is deleted. */
    removalPolicy: z.enum(['retain', 'destroy']).default('retain'),
    api: z
      .object({
        /** Steady-state requests per second across the callback routes. */
        throttleRateLimit: positiveInt.default(50),
        /** Burst of requests the API accepts above the steady rate. */
        throttleBurstLimit: positiveInt.default(100),
        /**
         * A custom domain for the callback API: the production way to get callback URLs that survive
         * destroying and recreating the app stack (the default execute-api hostname changes then).
         */
        domain: z
          .object({
            /** e.g. `callbacks.example.com`; you point it at the `ApiDomainTarget` output in DNS. */
            name: z.string().regex(/^(?!-)[a-z0-9-]{1,63}(?<!-)(\.(?!-)[a-z0-9-]{1,63}(?<!-))+$/, 'must be a lower-case DNS name such as callbacks.example.com'),
            /** An ACM certificate for `name`, issued in the stack's region (regional endpoint). */
            certificateArn: z
              .string()
              .regex(/^arn:aws[a-z-]*:acm:[a-z0-9-]+:\d{12}:certificate\/[0-9a-f-]+$/, 'must be an ACM certificate ARN (arn:aws:acm:<region>:<account>:certificate/<id>)'),
          })
          .strict()
          .optional(),
      })
      .strict()
      .default({ throttleRateLimit: 50, throttleBurstLimit: 100 }),
    /** Retention of function and API access logs; one of CloudWatch's allowed values. */
    logRetentionDays: z
      .number()
      .int()
      .refine((v) => RETENTION_VALUES.has(v), 'must be a CloudWatch Logs retention value (1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, ...)')
      .default(90),
    /** POWERTOOLS_LOG_LEVEL of every function. */
    logLevel: z.enum(['DEBUG', 'INFO', 'WARN', 'ERROR']).default('INFO'),
    /**
     * X-Ray tracing of every function (active tracing, the Powertools tracer, the SDK and provider
     * calls as subsegments). Off, no trace is recorded and each cold start skips loading the X-Ray
     * SDK (docs/performance.md, "Cold start"); leave it on unless that matters more than the traces.
     */
    tracing: z.boolean().default(true),
    settings: settingsSchema.default({}),
    /**
     * The scheduled KYC catch-up (docs/webhooks.md): left out, there is none and missed KYC callbacks
     * are recovered only by `payrelay kyc catch-up`.
     */
    kycCatchUp: z
      .object({
        /** How often it runs: an EventBridge schedule expression, e.g. `rate(1 day)` or `cron(0 3 * * ? *)`. */
        schedule: z.string().regex(SCHEDULE_EXPRESSION, 'must be an EventBridge schedule expression such as "rate(1 day)", "rate(6 hours)" or "cron(0 3 * * ? *)"'),
        /** KYC_CATCH_UP_LOOKBACK_HOURS: only callbacks whose own timestamp is this recent are looked at. */
        lookbackHours: positiveInt.default(DEFAULT_KYC_CATCH_UP_LOOKBACK_HOURS),
      })
      .strict()
      .optional(),
    /**
     * Indexes to leave out of this deploy only. DynamoDB adds at most one index per table update, so a
     * stage upgraded to a version with two new indexes on one table deploys the data stack once with
     * one of them deferred, then again without this (docs/deploy.md). Never part of a stage file.
     */
    deferIndexes: z
      .array(z.string().refine((name) => INDEX_NAMES.has(name), { message: `must name an index of the data stack (${[...INDEX_NAMES].join(', ')})` }))
      .default([]),
  })
  .strict()
  .superRefine((config, ctx) => {
    // A callback whose stored copy has expired would be stored and counted as recovered again.
    const retentionHours = (config.settings.eventRetentionDays ?? DEFAULT_EVENT_RETENTION_DAYS) * 24;
    if (config.kycCatchUp && config.kycCatchUp.lookbackHours >= retentionHours) {
      ctx.addIssue({
        code: 'custom',
        path: ['kycCatchUp', 'lookbackHours'],
        message: `must be less than the events' retention (${retentionHours} hours, settings.eventRetentionDays): an older callback's stored copy may have expired, and it would be recovered again`,
      });
    }
    // A retained stage holds real money: an alarm nobody receives is no alarm.
    if (config.removalPolicy === 'retain' && config.alarms.email === undefined && config.alarms.topicArn === undefined) {
      ctx.addIssue({ code: 'custom', path: ['alarms'], message: NO_ALARM_DESTINATION });
    }
  });

/** Configuration as written by a person (defaults may be left out). */
export type PayrelayConfigInput = z.input<typeof payrelayConfigSchema>;
/** Configuration after validation, with every default filled in. */
export type PayrelayConfig = z.output<typeof payrelayConfigSchema>;
export type PayrelaySettings = z.output<typeof settingsSchema>;

/**
 * Validates a configuration. The error lists every problem as `<key path>: <reason>`, so the
 * operator sees which key of the stage file or which `-c` option to fix.
 */
export function parsePayrelayConfig(input: unknown, source: string): PayrelayConfig {
  const result = payrelayConfigSchema.safeParse(input);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => {
      const key = issue.path.join('.') || '(root)';
      return issue.code === 'unrecognized_keys' ? `${key}: unknown key(s) ${issue.keys.join(', ')}` : `${key}: ${issue.message}`;
    });
    throw new PayrelayConfigError(`invalid payrelay configuration (${source}):\n  - ${problems.join('\n  - ')}`);
  }
  return result.data;
}

/** Hosts that mark a base URL nobody has configured yet (RFC 6761: `.invalid` never resolves). */
export function isPlaceholderUrl(url: string): boolean {
  return new URL(url).hostname.endsWith('.invalid');
}
