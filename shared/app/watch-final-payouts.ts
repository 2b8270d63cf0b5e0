import { SETTLED_AFTER_REVIEW, type Payout } from '@shared/domain/payout';
import type { PayoutStatusAnswer } from '@shared/ports/payouts';

const HOUR_MS = 60 * 60_000;
const DAY_MS = 24 * HOUR_MS;

/** How long, and how often, the reconciler keeps asking GetPayout about a final payout. */
export interface WatchSettings {
  /** REVIEW_WATCH_HOURLY_DAYS: a NEEDS_REVIEW payout is asked about every hour for this long. */
  readonly reviewHourlyForMs: number;
  /** REVIEW_WATCH_DAILY_DAYS: then once a day for this long; after that only an operator or a notification moves it. */
  readonly reviewDailyForMs: number;
  /** REVERSAL_WATCH_DAYS: a SUCCEEDED payout is asked about once a day for this long, for returned money. */
  readonly reversalWatchMs: number;
}

/** Hourly for 3 days then daily for 30 (NEEDS_REVIEW); daily for 7 days after a success (docs/payouts.md: cost). */
export const WATCH_DEFAULTS = { reviewHourlyDays: 3, reviewDailyDays: 30, reversalWatchDays: 7 } as const;

/** Watch settings from whole days, as the environment gives them. */
export function watchSettingsFromDays(days: { reviewHourlyDays: number; reviewDailyDays: number; reversalWatchDays: number }): WatchSettings {
  return {
    reviewHourlyForMs: days.reviewHourlyDays * DAY_MS,
    reviewDailyForMs: days.reviewDailyDays * DAY_MS,
    reversalWatchMs: days.reversalWatchDays * DAY_MS,
  };
}

export const DEFAULT_WATCH_SETTINGS: WatchSettings = watchSettingsFromDays(WATCH_DEFAULTS);

/** The reversal watch looks at a success once per this much of its age. */
export const REVERSAL_LOOK_EVERY_MS = DAY_MS;

/**
 * The ages, counted from its last change, at which the reversal watch looks at a SUCCEEDED payout:
 * a day, two days, ... up to REVERSAL_WATCH_DAYS (always at least the first).
 */
export function reversalLookAges(settings: WatchSettings): number[] {
  const looks = Math.max(1, Math.ceil(settings.reversalWatchMs / REVERSAL_LOOK_EVERY_MS));
  return Array.from({ length: looks }, (_, k) => (k + 1) * REVERSAL_LOOK_EVERY_MS);
}

/**
 * Whether a payout the reversal watch found at `ageMs` past its last change gets that look. It must
 * still be SUCCEEDED with no look scheduled in the index (that one comes instead), and the look must
 * fall within the watch counted from the success: a later write (the end of a scheduled look) moves
 * the last change on and so the ages with it, but never past the watch's last look.
 */
export function dueForReversalLook(payout: Payout, ageMs: number, settings: WatchSettings): boolean {
  if (payout.state !== 'SUCCEEDED' || payout.isWatched) return false;
  const ages = reversalLookAges(settings);
  const lastAge = ages[ages.length - 1] ?? REVERSAL_LOOK_EVERY_MS;
  const sinceSuccess = Date.parse(payout.record.updatedAt) + ageMs - Date.parse(payout.enteredStateAt);
  return sinceSuccess < lastAge + REVERSAL_LOOK_EVERY_MS;
}

/**
 * The next look at a watched final payout, or undefined once its watch period is over. For a
 * SUCCEEDED payout this is only the retry of a look that got no answer: its regular looks go by age.
 */
export function nextWatchCheck(payout: Payout, now: Date, settings: WatchSettings): Date | undefined {
  const age = now.getTime() - Date.parse(payout.enteredStateAt);
  if (payout.state === 'NEEDS_REVIEW') {
    if (age < settings.reviewHourlyForMs) return new Date(now.getTime() + HOUR_MS);
    if (age < settings.reviewHourlyForMs + settings.reviewDailyForMs) return new Date(now.getTime() + DAY_MS);
    return undefined;
  }
  if (payout.state === 'SUCCEEDED' && age < settings.reversalWatchMs) return new Date(now.getTime() + DAY_MS);
  return undefined;
}

/**
 * Decides the next version of a watched final payout from GetPayout's answer (undefined when it could
 * not be asked, or contradicted the payout). A definite answer settles NEEDS_REVIEW ("settled by the
 * provider after review"); returned money turns SUCCEEDED into REVERSED. A SUCCEEDED payout still
 * delivered is returned as it is when the look went by its age (nothing to write: the next look goes
 * by age too), or leaves the index when the look was scheduled there. Anything else schedules the
 * next look, or ends the watch.
 */
export function decideWatched(payout: Payout, answer: PayoutStatusAnswer | undefined, now: Date, settings: WatchSettings): Payout {
  if (answer?.found) {
    const status = answer.status ?? '';
    const returned = `provider reports ${status}: the delivered money came back`;
    if (payout.state === 'NEEDS_REVIEW') {
      if (answer.outcome === 'succeeded') return payout.succeeded(status, now);
      if (answer.outcome === 'failed') return payout.failed(`${SETTLED_AFTER_REVIEW}: provider reports ${status}`, now, status);
      if (answer.outcome === 'reversed') return payout.succeeded(status, now).reversed(returned, now, status);
    }
    if (payout.state === 'SUCCEEDED') {
      if (answer.outcome === 'reversed') return payout.reversed(returned, now, status);
      if (answer.outcome === 'failed') {
        return payout.reversed(`provider now reports ${status} for a payout it reported delivered; treated as returned money`, now, status);
      }
      return payout.isWatched ? payout.unwatch(now) : payout;
    }
  }
  const next = nextWatchCheck(payout, now, settings);
  if (!next) return payout.isWatched ? payout.unwatch(now) : payout;
  return payout.checked(now, { nextCheckAt: next, ...(answer?.found ? { providerHolds: answer.status ?? '' } : {}) });
}
