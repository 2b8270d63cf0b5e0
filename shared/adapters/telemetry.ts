import type { Telemetry } from '@shared/ports/runtime';

/** Telemetry over an EMF metrics emitter such as the Powertools `metrics` singleton, so use cases never import Powertools. */
export function telemetryFrom(metrics: { addMetric(name: string, unit: 'Count' | 'Seconds', value: number): void }): Telemetry {
  return {
    count: (metric, value = 1) => metrics.addMetric(metric, 'Count', value),
    seconds: (metric, value) => metrics.addMetric(metric, 'Seconds', value),
  };
}
