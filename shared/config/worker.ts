import * as z from '@shared/validation/zod';
import { DefiniteRefusalsError, parseDefiniteRefusals } from '@shared/domain/definite-refusals';
import { DEFAULT_NAME_MATCH_THRESHOLD } from '@shared/domain/name-policy';
import { envBoolean, envInt, requiredString } from './env';
import { providerEnvSchema } from './provider';
import { PAYOUTS_QUEUE } from './resources';

/** Where the worker's KYC gate reads from; present only when KYC_GATING is on. */
export interface KycGatingEnv {
  readonly tableName: string;
  /** The stored callbacks: a subject's callbacks not yet applied are applied before a refusal. */
  readonly eventsTableName: string;
  readonly secretId: string;
  readonly apiBaseUrl: string;
}

/**
 * The payout worker's settings (docs/architecture.md, "Environment variables"). KYC_GATING=on
 * needs the KYC variables and EVENTS_TABLE_NAME; a missing one fails at module load naming it. In a
 * bundle built without the gate, KYC_GATING=on fails at load too: payouts never run ungated.
 */
export const workerEnvSchema = z.pipe(
  z
    .extend(providerEnvSchema, {
      PAYOUTS_TABLE_NAME: requiredString,
      PAYOUTS_DLQ_URL: requiredString,
      /** The queue this worker consumes: a provider's Retry-After delays a message's next delivery on it. */
      PAYOUTS_QUEUE_URL: requiredString,
      /** The checks queue: the first delayed check of each submitted payout goes there. */
      PAYOUT_CHECKS_QUEUE_URL: requiredString,
      NAME_MATCH_THRESHOLD: z.pipe(
        z.optional(z.coerce.number().check(z.gte(0), z.lte(1))),
        z.transform((v) => v ?? DEFAULT_NAME_MATCH_THRESHOLD),
      ),
      KYC_GATING: envBoolean(false),
      /** Payout refusals known to be final (JSON list of {status, message}); empty: every refusal is settled through GetPayout. */
      PAYOUT_DEFINITE_REFUSALS: z.pipe(
        z.optional(z.string()),
        z.transform((json, ctx) => {
          try {
            return parseDefiniteRefusals(json);
          } catch (error) {
            if (!(error instanceof DefiniteRefusalsError)) throw error;
            ctx.issues.push({ code: 'custom', message: error.message, input: json });
            return z.NEVER;
          }
        }),
      ),
      KYC_TABLE_NAME: z.optional(z.string()),
      EVENTS_TABLE_NAME: z.optional(z.string()),
      KYC_SECRET_ID: z.optional(z.string()),
      KYC_API_BASE_URL: z.optional(z.string()),
      /** The payouts queue's maxReceiveCount: on the last receive a failing record goes to the DLQ with its reason. */
      PAYOUTS_MAX_RECEIVE_COUNT: envInt(PAYOUTS_QUEUE.defaultMaxReceiveCount),
      /** Records of a batch processed at once (records of one identity always run one after another). */
      WORKER_CONCURRENCY: envInt(4),
    })
    .check(
      z.superRefine((env, ctx) => {
        if (!env.KYC_GATING) return;
        // KYC_GATE_BUILD_FLAG (shared/config/build-flags.ts), written out so that esbuild replaces it.
        if (process.env.PAYRELAY_KYC_GATE_BUILD === 'off') {
          ctx.addIssue({ code: 'custom', path: ['KYC_GATING'], message: 'is on, but this bundle was built without the KYC gate: deploy the stage with kycGating on' });
          return;
        }
        for (const name of ['KYC_TABLE_NAME', 'EVENTS_TABLE_NAME', 'KYC_SECRET_ID', 'KYC_API_BASE_URL'] as const) {
          if (!env[name]) ctx.addIssue({ code: 'custom', path: [name], message: 'is required when KYC_GATING=on' });
        }
      }),
    ),
  z.transform(({ KYC_GATING, KYC_TABLE_NAME, EVENTS_TABLE_NAME, KYC_SECRET_ID, KYC_API_BASE_URL, ...rest }) => ({
    ...rest,
    KYC_GATING: KYC_GATING
      ? ({
          tableName: KYC_TABLE_NAME ?? '',
          eventsTableName: EVENTS_TABLE_NAME ?? '',
          secretId: KYC_SECRET_ID ?? '',
          apiBaseUrl: KYC_API_BASE_URL ?? '',
        } satisfies KycGatingEnv)
      : undefined,
  })),
);
