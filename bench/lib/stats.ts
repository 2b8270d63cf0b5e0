/** Summary statistics of a sample of durations (milliseconds). */
export interface Summary {
  readonly n: number;
  readonly median: number;
  readonly p99: number;
  readonly mean: number;
  readonly min: number;
  readonly max: number;
}

/**
 * The q-quantile (0..1) of a sample by linear interpolation between closest ranks (the "R7" rule
 * spreadsheets and numpy use). Throws on an empty sample: a benchmark with no samples is a bug.
 */
export function quantile(samples: readonly number[], q: number): number {
  if (samples.length === 0) throw new RangeError('quantile of an empty sample');
  if (!(q >= 0 && q <= 1)) throw new RangeError(`quantile ${q} is outside 0..1`);
  const sorted = [...samples].sort((a, b) => a - b);
  const position = (sorted.length - 1) * q;
  const lower = Math.floor(position);
  const upper = Math.ceil(position);
  const low = sorted[lower] as number;
  const high = sorted[upper] as number;
  return low + (high - low) * (position - lower);
}

export function median(samples: readonly number[]): number {
  return quantile(samples, 0.5);
}

export function summarize(samples: readonly number[]): Summary {
  const total = samples.reduce((sum, x) => sum + x, 0);
  return {
    n: samples.length,
    median: quantile(samples, 0.5),
    p99: quantile(samples, 0.99),
    mean: total / samples.length,
    min: Math.min(...samples),
    max: Math.max(...samples),
  };
}

/** Milliseconds with a precision that suits the magnitude. */
export function ms(value: number): string {
  if (value >= 100) return `${value.toFixed(0)} ms`;
  if (value >= 10) return `${value.toFixed(1)} ms`;
  return `${value.toFixed(2)} ms`;
}

export function ratio(value: number): string {
  return `${value.toFixed(2)}x`;
}

export function bytes(value: number): string {
  if (value >= 1024 * 1024) return `${(value / 1024 / 1024).toFixed(2)} MiB`;
  if (value >= 1024) return `${(value / 1024).toFixed(1)} KiB`;
  return `${value} B`;
}

export function usd(value: number): string {
  return `$${value.toFixed(2)}`;
}
