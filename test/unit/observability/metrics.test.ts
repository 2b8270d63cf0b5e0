import { afterEach, describe, expect, it, vi } from 'vitest';

/*
 * The stage dimension the alarms select on: deployed functions get PAYRELAY_STAGE, and every EMF
 * record they print must carry it next to `service`, or the stage's alarms never see a datapoint.
 */

async function emittedWith(env: Record<string, string | undefined>): Promise<Record<string, unknown>> {
  vi.resetModules();
  for (const [key, value] of Object.entries(env)) vi.stubEnv(key, value as string);
  vi.stubEnv('POWERTOOLS_METRICS_DISABLED', 'false');
  const lines: string[] = [];
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    lines.push(...String(chunk).split('\n').filter((l) => l.trim() !== ''));
    return true;
  });
  try {
    const { metrics, MetricUnit } = await import('@shared/observability/metrics');
    metrics.addMetric('PayoutSucceeded', MetricUnit.Count, 1);
    metrics.publishStoredMetrics();
  } finally {
    spy.mockRestore();
  }
  const record = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((r) => '_aws' in r);
  if (!record) throw new Error(`no EMF record printed: ${lines.join('\n')}`);
  return record;
}

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('payrelay metrics', () => {
  it('carry the stage as a dimension when PAYRELAY_STAGE is set', async () => {
    const record = await emittedWith({ PAYRELAY_STAGE: 'prod' });
    expect(record).toMatchObject({ service: 'payrelay', stage: 'prod', PayoutSucceeded: 1 });
    const dimensions = (record._aws as { CloudWatchMetrics: Array<{ Dimensions: string[][]; Namespace: string }> }).CloudWatchMetrics[0];
    expect(dimensions?.Namespace).toBe('Payrelay');
    expect(dimensions?.Dimensions[0]?.sort()).toEqual(['service', 'stage']);
  });

  it('carry only the service locally, where no stage is set', async () => {
    const record = await emittedWith({ PAYRELAY_STAGE: undefined });
    const dimensions = (record._aws as { CloudWatchMetrics: Array<{ Dimensions: string[][] }> }).CloudWatchMetrics[0];
    expect(dimensions?.Dimensions[0]).toEqual(['service']);
  });
});
