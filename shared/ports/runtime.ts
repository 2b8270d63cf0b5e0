/*
 * Ports every use case takes: time, counters and log lines. Type-only; the system clock and the
 * Powertools-backed telemetry live in shared/adapters/.
 */

export interface Clock {
  now(): Date;
}

/** Counters and gauges; the handlers wire Powertools metrics (EMF) with the names in METRIC. */
export interface Telemetry {
  count(metric: string, value?: number): void;
  seconds(metric: string, value: number): void;
}

/** Structured log lines with correlation keys; the Powertools logger satisfies it. */
export interface Log {
  info(message: string, ...extra: Array<Record<string, unknown>>): void;
  warn(message: string, ...extra: Array<Record<string, unknown>>): void;
  error(message: string, ...extra: Array<Record<string, unknown>>): void;
}
