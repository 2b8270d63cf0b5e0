import type { PayoutIdentity } from '@shared/domain/identity';
import { Payout } from '@shared/domain/payout';
import type { Clock, Log, Telemetry } from '@shared/ports/runtime';
import type { AccountFingerprints } from '@shared/ports/payouts';
import { accountFingerprint } from '@shared/adapters/account-fingerprint';
import type { NotificationStore } from '@shared/app/payout-notices';
import type { StoredEvent } from '@shared/ports/callbacks';

/*
 * Test doubles of the runtime ports, one copy for every test: a clock a test moves, a log that
 * prints nothing, telemetry that counts, and payouts already in a given state.
 */

/** A clock that stands still until the test moves it. */
export class MovableClock implements Clock {
  private t: number;
  constructor(start: Date | number = Date.now()) {
    this.t = typeof start === 'number' ? start : start.getTime();
  }
  now(): Date {
    return new Date(this.t);
  }
  advance(ms: number): void {
    this.t += ms;
  }
  set(time: Date | number): void {
    this.t = typeof time === 'number' ? time : time.getTime();
  }
}

/** A log that drops every line. */
export const silentLog: Log = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** Telemetry that adds up every count by metric name, and keeps every seconds value. */
export function countingTelemetry(): Telemetry & { readonly counts: Record<string, number>; readonly timings: Record<string, number[]> } {
  const counts: Record<string, number> = {};
  const timings: Record<string, number[]> = {};
  return {
    counts,
    timings,
    count: (metric, value = 1) => {
      counts[metric] = (counts[metric] ?? 0) + value;
    },
    seconds: (metric, value) => {
      (timings[metric] ??= []).push(value);
    },
  };
}

/** Telemetry that drops everything. */
export const noTelemetry: Telemetry = { count: () => undefined, seconds: () => undefined };

/** The states `payoutInState` can build, each by the forward transitions that lead to it. */
export type BuildableState = 'ACCEPTED' | 'VERIFYING' | 'SUBMITTING' | 'SUBMITTED' | 'UNKNOWN' | 'SUCCEEDED' | 'FAILED' | 'NEEDS_REVIEW';

/**
 * A payout already in `state`, reached through the state machine's own transitions (so its
 * history and version are what a real one would carry). Amount 10.00, mobile money MTN.
 */
export function payoutInState(state: BuildableState, identity: PayoutIdentity, now: Date = new Date()): Payout {
  const accepted = Payout.accept({ identity, amount: '10.00', accountMasked: '******3456', accountCode: 'MTN' }, now);
  if (state === 'ACCEPTED') return accepted;
  const verifying = accepted.startVerifying(now);
  if (state === 'VERIFYING') return verifying;
  const submitting = verifying.startSubmitting(now, 'Kwame Mensah');
  if (state === 'SUBMITTING') return submitting;
  if (state === 'UNKNOWN') return submitting.unknown('time-out after sending', now);
  const submitted = submitting.submitted('PENDING', now);
  if (state === 'SUBMITTED') return submitted;
  if (state === 'SUCCEEDED') return submitted.succeeded('COMPLETED', now);
  if (state === 'FAILED') return submitted.failed('provider reports FAILED', now, 'FAILED');
  return submitted.needsReview('contradictory answers', now);
}

/** The account key of the tests' fingerprints (nothing real). */
export const TEST_ACCOUNT_KEY = 'test-account-key-0123456789abcdef0123456789abcdef';

/** Account fingerprints under TEST_ACCOUNT_KEY, as the worker makes them from its secret. */
export const testFingerprints: AccountFingerprints = { of: async (account) => accountFingerprint(TEST_ACCOUNT_KEY, account) };

/**
 * An events table holding these order notifications (bodies as the provider would post them),
 * listed and read as the operator use cases and the reconciler read it: by reference, newest first.
 * Empty by default: no notification names any payout.
 */
export function storedNotifications(
  notifications: ReadonlyArray<{ eventId: string; receivedAt: string; body: unknown; withdrawalReference: string; recognized?: boolean }> = [],
): NotificationStore {
  const stored: StoredEvent[] = notifications.map((n) => ({
    eventId: n.eventId,
    source: 'payout-notification',
    body: JSON.stringify(n.body),
    receivedAt: n.receivedAt,
    recognized: n.recognized ?? true,
    expiresAt: 0,
    withdrawalReference: n.withdrawalReference,
  }));
  return {
    async listCallbacks(query) {
      if (query.reference === undefined) return { events: [] };
      const from = query.receivedFrom?.toISOString() ?? '';
      const events = stored
        .filter((e) => e.withdrawalReference === query.reference && e.receivedAt >= from)
        .sort((a, b) => b.receivedAt.localeCompare(a.receivedAt))
        .slice(0, query.limit);
      return { events };
    },
    get: async (eventId) => stored.find((e) => e.eventId === eventId),
  };
}
