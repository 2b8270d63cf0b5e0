/*
 * Ports every use case takes: time, counters and log lines; and the tracing the provider clients
 * take. Type-only; the system clock and the
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

/**
 * Times a call to another service as its own part of the invocation's trace (an X-Ray subsegment
 * when tracing is on), so a slow or failing provider shows up by operation.
 */
export interface Tracing {
  /** Runs `call` inside a span named `name`; an error it throws is recorded on the span and rethrown. */
  span<T>(name: string, call: () => Promise<T>): Promise<T>;
}

/** Structured log lines with correlation keys; the Powertools logger satisfies it. */
export interface Log {
  info(message: string, ...extra: Array<Record<string, unknown>>): void;
  warn(message: string, ...extra: Array<Record<string, unknown>>): void;
  error(message: string, ...extra: Array<Record<string, unknown>>): void;
}
