import type { FaultBook, FaultOperation } from './faults';
import { sleep } from './sleep';
import type { SimLogger } from './logger';

/** One POST the simulator made to a partner-side URL (a KYC callback or an order notification). */
export interface Delivery {
  operation: 'kycCallback' | 'orderNotification';
  url: string;
  body: unknown;
  at: string;
  /** HTTP status of the answer, absent when the post failed before an answer. */
  status?: number;
  /** Why the post failed (connection refused, time-out), absent on an answer. */
  error?: string;
  /** True for the extra copy posted by the duplicate fault. */
  duplicate: boolean;
  /** True when the drop fault kept it from being posted at all (no status, no error). */
  dropped?: boolean;
}

/** How long a post waits for an answer by default, as a provider's own client would (5 s). */
export const DEFAULT_DELIVERY_TIMEOUT_MS = 5000;

/**
 * Posts callbacks and notifications, applying the drop, latency and duplicate faults of the operation,
 * and keeps every delivery for the admin API. Posts in one `send` call go out one after another.
 */
export class Outgoing {
  private readonly deliveries: Delivery[] = [];
  private readonly stopping = new AbortController();
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(
    private readonly faults: FaultBook,
    private readonly log: SimLogger,
    private readonly timeoutMs: number,
  ) {}

  /** Posts each body in order to `url`; returns the deliveries made. */
  async send(
    operation: Delivery['operation'],
    url: string,
    bodies: readonly unknown[],
    headers: Record<string, string> = {},
  ): Promise<Delivery[]> {
    const work = this.sendAll(operation, url, bodies, headers);
    this.inFlight.add(work);
    try {
      return await work;
    } finally {
      this.inFlight.delete(work);
    }
  }

  private async sendAll(
    operation: FaultOperation & Delivery['operation'],
    url: string,
    bodies: readonly unknown[],
    headers: Record<string, string>,
  ): Promise<Delivery[]> {
    const made: Delivery[] = [];
    for (const body of bodies) {
      if (this.faults.roll(operation, 'drop', this.faults.get(operation).dropRate)) {
        this.deliveries.push({ operation, url, body, at: new Date().toISOString(), duplicate: false, dropped: true });
        this.log.debug(`${operation} dropped (fault)`, { url });
        continue;
      }
      const copies = this.faults.roll(operation, 'duplicate', this.faults.get(operation).duplicateRate) ? 2 : 1;
      for (let copy = 0; copy < copies; copy += 1) {
        if (this.stopping.signal.aborted) return made;
        const latency = this.faults.latency(operation);
        if (latency > 0) await sleep(latency, this.stopping.signal);
        made.push(await this.postOne(operation, url, body, headers, copy > 0));
      }
    }
    return made;
  }

  private async postOne(
    operation: Delivery['operation'],
    url: string,
    body: unknown,
    headers: Record<string, string>,
    duplicate: boolean,
  ): Promise<Delivery> {
    const delivery: Delivery = { operation, url, body, at: new Date().toISOString(), duplicate };
    this.deliveries.push(delivery);
    try {
      const signal = AbortSignal.any([this.stopping.signal, AbortSignal.timeout(this.timeoutMs)]);
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
        signal,
      });
      await res.arrayBuffer();
      delivery.status = res.status;
      this.log.debug(`${operation} posted`, { url, status: res.status, duplicate });
    } catch (error) {
      delivery.error = error instanceof Error ? `${error.name}: ${error.message}` : 'post failed';
      this.log.warn(`${operation} post failed`, { url, error: delivery.error });
    }
    return delivery;
  }

  list(): Delivery[] {
    return structuredClone(this.deliveries);
  }

  clear(): void {
    this.deliveries.length = 0;
  }

  /** Aborts posts in flight and waits for them to settle, so stop() leaves nothing running. */
  async stop(): Promise<void> {
    this.stopping.abort();
    await Promise.allSettled([...this.inFlight]);
  }
}
