import { randomUUID } from 'node:crypto';
import type { ScheduledEvent } from 'aws-lambda';
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
  readonly everyMs: number;
  readonly region: string;
  readonly log?: (line: string) => void;
}

export interface SchedulerHandle {
  readonly stats: { runs: number; errors: number };
  /**
   * Runs the target now (outside the schedule) and resolves when it finishes. A run already going
   * may have started before what the caller just did, so one more run follows it.
   */
  runNow(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A local stand-in for the EventBridge rate rule: invokes the target with a scheduled event every
 * `everyMs`. Runs never overlap: a tick that comes while one is running is skipped, which is what a
 * single reconciler needs (its own conditional writes also make overlaps safe).
 */
export function startScheduler(options: SchedulerOptions): SchedulerHandle {
  const log = options.log ?? (() => {});
  const stats = { runs: 0, errors: 0 };
  let running: Promise<void> | undefined;

  const run = (): Promise<void> => {
    if (running) return running;
    running = (async () => {
      stats.runs += 1;
      try {
        await options.fn.invoke(buildScheduledEvent(`${options.fn.name}-schedule`, options.region));
      } catch (error) {
        stats.errors += 1;
        log(`scheduler: ${options.fn.name} failed: ${(error as Error).name}: ${(error as Error).message}`);
      } finally {
        running = undefined;
      }
    })();
    return running;
  };

  const timer = setInterval(() => {
    if (!running) void run();
  }, options.everyMs);

  return {
    stats,
    runNow: () => (running ? running.then(run) : run()),
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
