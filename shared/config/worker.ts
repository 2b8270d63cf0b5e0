import * as v from '@shared/validation/valibot';
import { parseDefiniteRefusals } from '@shared/domain/definite-refusals';
import { DEFAULT_NAME_MATCH_THRESHOLD } from '@shared/domain/name-policy';
import { envBoolean, envInt, envNumberBetween, envSetting, optionalString, requiredString } from './env';
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

/** What leaving out a KYC variable means to the worker. */
const ONLY_WITH_GATING = 'none; needed only with KYC_GATING=on';

/**
 * The payout worker's settings (docs/architecture.md, "Environment variables"). KYC_GATING=on
 * needs the KYC variables and EVENTS_TABLE_NAME; a missing one fails at module load naming it. In a
 * bundle built without the gate, KYC_GATING=on fails at load too: payouts never run ungated.
 */
export const workerEnvSchema = v.pipe(
  v.object({
    ...providerEnvSchema.entries,
    PAYOUTS_TABLE_NAME: requiredString,
    /** The secret holding the key of the payouts' account fingerprints. */
    ACCOUNT_KEY_SECRET_ID: requiredString,
    PAYOUTS_DLQ_URL: requiredString,
    /** The queue this worker consumes: a provider's Retry-After delays a message's next delivery on it. */
    PAYOUTS_QUEUE_URL: requiredString,
    /** The checks queue: the first delayed check of each submitted payout goes there. */
    PAYOUT_CHECKS_QUEUE_URL: requiredString,
    NAME_MATCH_THRESHOLD: envNumberBetween(0, 1, DEFAULT_NAME_MATCH_THRESHOLD),
    KYC_GATING: envBoolean(false),
    /** Payout refusals known to be final (JSON list of {status, message}); unset: every refusal is settled through GetPayout. */
    PAYOUT_DEFINITE_REFUSALS: envSetting(parseDefiniteRefusals, 'none: every refusal is settled through GetPayout'),
    KYC_TABLE_NAME: optionalString(ONLY_WITH_GATING),
    EVENTS_TABLE_NAME: optionalString(ONLY_WITH_GATING),
    KYC_SECRET_ID: optionalString(ONLY_WITH_GATING),
    KYC_API_BASE_URL: optionalString(ONLY_WITH_GATING),
    /** The payouts queue's maxReceiveCount: on the last receive a failing record goes to the DLQ with its reason. */
    PAYOUTS_MAX_RECEIVE_COUNT: envInt(PAYOUTS_QUEUE.defaultMaxReceiveCount),
    /** Records of a batch processed at once (records of one identity always run one after another). */
    WORKER_CONCURRENCY: envInt(4),
  }),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed || !dataset.value.KYC_GATING) return;
    const env = dataset.value;
    // KYC_GATE_BUILD_FLAG (shared/config/build-flags.ts), written out so that esbuild replaces it.
    if (process.env.PAYRELAY_KYC_GATE_BUILD === 'off') {
      addIssue({ message: 'is on, but this bundle was built without the KYC gate: deploy the stage with kycGating on', ...v.issueAt(env, 'KYC_GATING') });
      return;
    }
    for (const name of ['KYC_TABLE_NAME', 'EVENTS_TABLE_NAME', 'KYC_SECRET_ID', 'KYC_API_BASE_URL'] as const) {
      if (!env[name]) addIssue({ message: 'is required when KYC_GATING=on', ...v.issueAt(env, name) });
    }
  }),
  v.transform(({ KYC_GATING, KYC_TABLE_NAME, EVENTS_TABLE_NAME, KYC_SECRET_ID, KYC_API_BASE_URL, ...rest }) => ({
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
