import { randomUUID } from 'node:crypto';
import type { ScheduledEvent } from 'aws-lambda';
import type { SweepResult } from '@shared/app/apply-callback';
import { LOCAL_APPLY_EVERY_MS, LOCAL_APPLY_IDLE_MAX_MS } from '@shared/config/functions';
import { LOCAL_ACCOUNT_ID, type LocalFunction } from './lambda';

/** Builds the EventBridge scheduled event a rate rule delivers. */
export function buildScheduledEvent(ruleName: string, region: string, now = new Date()): ScheduledEvent {
  return {
    version: '0',
    id: randomUUID(),
    'detail-type': 'Scheduled Event',
    source: 'aws.events',
    account: LOCAL_ACCOUNT_ID,
    // EventBridge stamps the scheduled time to the second.
    time: now.toISOString().replace(/\.\d{3}Z$/, 'Z'),
    region,
    resources: [`arn:aws:events:${region}:${LOCAL_ACCOUNT_ID}:rule/${ruleName}`],
    detail: {},
  };
}

export interface SchedulerOptions {
  readonly fn: LocalFunction;
  /** Wait between runs (from the end of one to the start of the next); with `backoff`, the shortest one. */
  readonly everyMs: number;
  readonly region: string;
  readonly log?: (line: string) => void;
  /**
   * An adaptive schedule: after a run that found nothing to do (`busy` of its result is false) the
   * next wait doubles, up to `idleMaxMs`; after a run that did work, or a `nudge()`, it is `everyMs`
   * again. A failed run counts as idle, so a broken target is retried, not hammered.
   */
  readonly backoff?: { readonly idleMaxMs: number; readonly busy: (result: unknown) => boolean };
}

export interface SchedulerHandle {
  readonly stats: { runs: number; errors: number };
  /**
   * Runs the target now (outside the schedule) and resolves when it finishes. A run already going
   * may have started before what the caller just did, so one more run follows it.
   */
  runNow(): Promise<void>;
  /**
   * Asks for a run soon without waiting for it: at once, or right after the run going (which may
   * have started before what the caller just did); the schedule restarts from its shortest wait.
   */
  nudge(): void;
  stop(): Promise<void>;
}

/**
 * A local stand-in for the EventBridge rate rule (and, with `backoff` and `nudge`, for the events
 * table's stream): invokes the target with a scheduled event, waiting `everyMs` between runs. Runs
 * never overlap: a run asked for while one is going is that run, which is what a single reconciler
 * needs (its own conditional writes also make overlaps safe).
 */
export function startScheduler(options: SchedulerOptions): SchedulerHandle {
  const log = options.log ?? (() => {});
  const stats = { runs: 0, errors: 0 };
  let running: Promise<void> | undefined;
  let waitMs = options.everyMs;
  let stopped = false;
  let nudged = false;
  let wake: (() => void) | undefined;

  const run = (): Promise<void> => {
    if (running) return running;
    running = (async () => {
      stats.runs += 1;
      let busy = false;
      try {
        const result = await options.fn.invoke(buildScheduledEvent(`${options.fn.name}-schedule`, options.region));
        busy = options.backoff === undefined || options.backoff.busy(result);
      } catch (error) {
        stats.errors += 1;
        log(`scheduler: ${options.fn.name} failed: ${(error as Error).name}: ${(error as Error).message}`);
      } finally {
        running = undefined;
      }
      waitMs = busy || options.backoff === undefined ? options.everyMs : Math.min(waitMs * 2, options.backoff.idleMaxMs);
    })();
    return running;
  };

  /** Resolves after `ms`, or at once when nudged (before or during the wait) or stopped. */
  const pause = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      if (nudged || stopped) return resolve();
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  const loop = (async () => {
    while (!stopped) {
      await pause(waitMs);
      wake = undefined;
      if (stopped) break;
      nudged = false;
      await run();
    }
  })();

  return {
    stats,
    runNow: () => (running ? running.then(run) : run()),
    nudge() {
      nudged = true;
      waitMs = options.everyMs;
      wake?.();
    },
    async stop() {
      stopped = true;
      wake?.();
      await loop;
      await running;
    },
  };
}

/**
 * The local stand-in for the events table's stream (dynalite has none): sweeps the not-yet-applied
 * index with the callback applier every LOCAL_APPLY_EVERY_MS while sweeps find callbacks, backing off
 * to LOCAL_APPLY_IDLE_MAX_MS while they find none, so an idle stack costs little. The gateway nudges
 * it after each stored callback, so an apply never waits for the back-off; the sweep itself still
 * finds every callback stored any other way.
 */
export function startCallbackApplier(options: { readonly fn: LocalFunction; readonly region: string; readonly log?: (line: string) => void }): SchedulerHandle {
  return startScheduler({
    ...options,
    everyMs: LOCAL_APPLY_EVERY_MS,
    backoff: { idleMaxMs: LOCAL_APPLY_IDLE_MAX_MS, busy: (result) => ((result as Partial<SweepResult> | undefined)?.found ?? 0) > 0 },
  });
}
