import type { Context } from 'aws-lambda';
import { createLambdaContext } from '@local/lambda';
import type { KycSecret, ProviderSecret } from '@shared/adapters/secrets';
import type { FunctionDefinition } from '@shared/config/functions';
import { METRICS_NAMESPACE, METRICS_SERVICE } from '@shared/observability/metric-names';
import type { SimulatorOptions } from '@simulator/index';
import { startEmulators, type Emulators } from './emulator-host';

/** Benchmark-only secrets for runs without the simulator (nothing real; never deployed). */
export const BENCH_KYC_SECRET: KycSecret = { app_id: 'bench-app', callback_token: 'bench-callback-token-0123456789abcdef' };
export const BENCH_PROVIDER_SECRET: ProviderSecret = {
  partner_public_key: 'bench-public-key',
  partner_secret_key: 'bench-partner-secret',
  merchant_secret_key: 'bench-merchant-secret',
  partner_id: 'bench-partner',
  platform_merchant_id: 'bench-merchant',
};

/**
 * Starts the emulators (their own process) and puts their env into process.env together with what
 * the Lambda defaults construct sets on every function, so handler modules imported afterwards
 * configure themselves exactly as on Lambda.
 */
export async function startHandlerEnv(options: {
  stage: string;
  logLevel: string;
  simulator?: SimulatorOptions;
  env?: Record<string, string>;
}): Promise<Emulators & { provider: ProviderSecret }> {
  const emulators = await startEmulators({
    stage: options.stage,
    kyc: BENCH_KYC_SECRET,
    ...(options.simulator ? { simulator: options.simulator } : { provider: BENCH_PROVIDER_SECRET }),
  });
  Object.assign(process.env, emulators.env, {
    POWERTOOLS_SERVICE_NAME: METRICS_SERVICE,
    POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
    POWERTOOLS_LOG_LEVEL: options.logLevel,
    PAYRELAY_STAGE: options.stage,
    ...options.env,
  });
  return { ...emulators, provider: emulators.provider ?? BENCH_PROVIDER_SECRET };
}

/** A Lambda context for one invocation of `definition` (remaining time counts down from its time-out). */
export function contextFor(definition: FunctionDefinition): Context {
  return createLambdaContext(definition, `payrelay-bench-${definition.id}`, process.env.AWS_REGION ?? 'eu-west-1');
}
