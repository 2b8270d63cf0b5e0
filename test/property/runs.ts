/**
 * How hard the property and fuzz tests push. The defaults keep `npm test` quick on a busy machine;
 * `PAYRELAY_FUZZ_SCALE=20 npx vitest run test/property test/hostile` runs twenty times as many cases.
 */
export function fuzzScale(): number {
  const raw = Number(process.env.PAYRELAY_FUZZ_SCALE ?? '1');
  return Number.isFinite(raw) && raw > 0 ? raw : 1;
}

/** `base` scaled by PAYRELAY_FUZZ_SCALE, at least 1. */
export function runs(base: number): number {
  return Math.max(1, Math.round(base * fuzzScale()));
}

/** A fixed seed unless PAYRELAY_FUZZ_SEED is set, so a failure is reproducible from its report. */
export function fuzzSeed(): number | undefined {
  const raw = process.env.PAYRELAY_FUZZ_SEED;
  return raw === undefined || raw === '' ? undefined : Number(raw);
}

/** A test time-out that grows with PAYRELAY_FUZZ_SCALE, so a long soak is not cut short. */
export function scaledTimeout(baseMs = 30_000): number {
  return Math.round(baseMs * Math.max(1, fuzzScale()));
}
