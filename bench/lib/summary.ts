/**
 * The stable keys of `summary` in `npm run bench -- --json`: one flat object that scripts and CI can
 * read without knowing each part's data layout. A key is null when the part that measures it did not
 * run (or does not measure it yet). Add a key here, never rename one.
 */
export const SUMMARY_KEYS = [
  'ingestRatio',
  'applyLagP99Ms',
  'coldStartRatio',
  'throughputRatio100ms',
  'throughputRatio500ms',
  'writesPerPayout',
  'indexWriteUnitsPerPayout',
  'reconcileReadsRatio',
  'maxPartitionWriteUnitsPerSecond',
  'maxPartitionReadUnitsPerSecond',
  'enqueueRowsPerSecond',
  'enqueueFloorRatio',
  'enqueuePeakRssMiB',
  'timeToFinalP95Seconds',
  'getPayoutCallsPerPayout',
  'costPer1MWebhooks',
  'costPer1MPayouts',
  'consolePageMaxMs',
  'coldStartRatioUntraced',
  'throughputBareRatio100ms',
  'coldStartFrameworkRatio',
  'coldStartBaselineDelta',
  'throughputProviderOnlyRatio100ms',
] as const;

export type SummaryKey = (typeof SUMMARY_KEYS)[number];
export type Summary = Record<SummaryKey, number | null>;

/** What a part contributes to the summary: only the keys it measures. */
export type SummaryFigures = Partial<Record<SummaryKey, number>>;

/**
 * Builds the summary from the parts' results: every key present, null unless a part that ran set it.
 * When two parts set the same key, the later one wins (parts run in the order given).
 */
export function buildSummary(results: ReadonlyArray<{ readonly summary?: SummaryFigures }>): Summary {
  const summary = Object.fromEntries(SUMMARY_KEYS.map((key) => [key, null])) as Summary;
  for (const result of results) {
    for (const key of SUMMARY_KEYS) {
      const value = result.summary?.[key];
      if (typeof value === 'number' && Number.isFinite(value)) summary[key] = value;
    }
  }
  return summary;
}
