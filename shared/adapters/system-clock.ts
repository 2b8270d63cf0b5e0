import type { Clock } from '@shared/ports/runtime';

/** The wall clock; tests pass a movable one (test/factories/ports.ts). */
export const systemClock: Clock = { now: () => new Date() };
