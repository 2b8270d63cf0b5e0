import type { ScheduledEvent } from 'aws-lambda';

/** Scheduled reconciler. Placeholder entry point so infra can synthesize; replaced by the real reconciler. */
export const handler = async (_event: ScheduledEvent): Promise<void> => {};
