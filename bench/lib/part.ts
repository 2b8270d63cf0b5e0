import type { SummaryFigures } from './summary';

/** How one figure compares with its target. */
export type Verdict = 'met' | 'missed' | 'info';

/** One line of the bench table. */
export interface Row {
  readonly metric: string;
  readonly value: string;
  /** The floor or bound the value is compared with, when there is one. */
  readonly reference?: string;
  readonly ratio?: string;
  readonly target?: string;
  readonly verdict: Verdict;
}

/** What a benchmark part hands back: table rows, raw figures for --json, and notes for the reader. */
export interface PartResult {
  readonly part: string;
  readonly title: string;
  readonly rows: Row[];
  readonly data: Record<string, unknown>;
  readonly notes: string[];
  /** The part's figures under the stable `summary` keys of `--json` (bench/lib/summary.ts). */
  readonly summary?: SummaryFigures;
  readonly seconds?: number;
}

/** Sizes and switches of every part (defaults in bench/main.ts). */
export interface BenchOptions {
  readonly ingestIterations: number;
  readonly coldRuns: number;
  /**
   * A checkout of another commit, its dependencies installed: the cold-start part builds its bundles
   * with its own construct and measures them in the same rounds as this checkout's.
   */
  readonly coldBaseline?: string;
  readonly payouts: number;
  /** Provider latencies L of the throughput part; the first is also the cost part's. */
  readonly latenciesMs: readonly number[];
  readonly concurrency: number;
  /** SQS batch size of the throughput part (default: the concurrency). */
  readonly batchSize: number;
  readonly reconcileFinal: readonly number[];
  readonly reconcileOpen: number;
  readonly reconcileRuns: number;
  /** Payouts per settle time in the time-to-final part. */
  readonly finalPayouts: number;
  readonly costWebhooks: number;
  readonly costPayouts: number;
  readonly loadRequests: number;
  readonly loadConcurrency: number;
  readonly loadMaxSeconds: number;
  /** Payouts stored for the console part. */
  readonly consolePayouts: number;
  /** Callbacks stored for the console part. */
  readonly consoleCallbacks: number;
  /** POWERTOOLS_LOG_LEVEL for the handlers (the deployed default is INFO). */
  readonly logLevel: string;
  /** Rows the enqueue part sends through the CLI, and through its floor. */
  readonly enqueueRows: number;
  /** Size (MiB) of the file whose check the enqueue part measures peak RSS on. */
  readonly enqueueFileMiB: number;
}

export interface PartContext {
  readonly options: BenchOptions;
  progress(line: string): void;
}

export type Part = (context: PartContext) => Promise<PartResult>;

/** `met` when the check holds, else `missed`. */
export function verdict(ok: boolean): Verdict {
  return ok ? 'met' : 'missed';
}
