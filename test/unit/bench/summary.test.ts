import { describe, expect, it } from 'vitest';
import type { PartResult } from '@bench/lib/part';
import { SUMMARY_KEYS, buildSummary } from '@bench/lib/summary';

const part = (name: string, summary?: PartResult['summary']): PartResult => ({ part: name, title: name, rows: [], data: {}, notes: [], summary });

describe('bench --json summary', () => {
  it('has every stable key, null where no part measured it', () => {
    const summary = buildSummary([part('cost', { writesPerPayout: 4, costPer1MPayouts: 7.5 })]);
    expect(Object.keys(summary)).toEqual([...SUMMARY_KEYS]);
    expect(summary.writesPerPayout).toBe(4);
    expect(summary.costPer1MPayouts).toBe(7.5);
    expect(summary.ingestRatio).toBeNull();
    expect(summary.timeToFinalP95Seconds).toBeNull();
  });

  it('ignores figures that are not finite numbers and merges the parts', () => {
    const summary = buildSummary([
      part('ingest', { ingestRatio: 1.4 }),
      part('reconcile', { reconcileReadsRatio: Number.NaN }),
      part('throughput', { throughputRatio100ms: 0.91, throughputRatio500ms: undefined }),
    ]);
    expect(summary).toMatchObject({ ingestRatio: 1.4, reconcileReadsRatio: null, throughputRatio100ms: 0.91, throughputRatio500ms: null });
  });
});
