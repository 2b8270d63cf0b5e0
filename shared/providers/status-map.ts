import { SettingError } from '@shared/domain/errors';
import { parseJsonObject } from '@shared/domain/json-object';

/**
 * What payrelay makes of a GetPayout status word. 'succeeded', 'failed' and 'reversed' are definite;
 * 'reversed' means the money was delivered and came back (a SUCCEEDED payout becomes REVERSED).
 * The other three are not final and never success: 'in_progress' (the provider is working on it),
 * 'gateway_error' (the provider's own pages call it an error: an open payout reporting it goes to
 * NEEDS_REVIEW after the shorter GATEWAY_ERROR_REVIEW_MINUTES) and 'unrecognized' (any word not in
 * the table).
 */
export type PayoutStatusOutcome = 'succeeded' | 'failed' | 'reversed' | 'in_progress' | 'gateway_error' | 'unrecognized';

export type StatusMap = Readonly<Record<string, PayoutStatusOutcome>>;

const OUTCOMES: readonly PayoutStatusOutcome[] = ['succeeded', 'failed', 'reversed', 'in_progress', 'gateway_error', 'unrecognized'];

/** Thrown when PROVIDER_STATUS_MAP is not a valid status table; the message does not name the setting (SettingError). */
export class StatusMapError extends SettingError {
  override name = 'StatusMapError';
}

/**
 * Status words seen in the provider's docs, plus the words for returned money (REFUND is the payment
 * status of the provider's order notifications; REVERSED and REFUNDED are its likely GetPayout forms:
 * override with PROVIDER_STATUS_MAP when the provider uses another). The GATEWAY_* words say
 * nothing final about the money, but the provider calls them errors: a person looks sooner.
 */
export const DEFAULT_STATUS_MAP: StatusMap = Object.freeze({
  COMPLETED: 'succeeded',
  SUCCESSFUL: 'succeeded',
  FAILED: 'failed',
  REVERSED: 'reversed',
  REFUNDED: 'reversed',
  REFUND: 'reversed',
  PENDING: 'in_progress',
  INITIATED: 'in_progress',
  GATEWAY_ERROR: 'gateway_error',
  UPSTREAM_GATEWAY_ERROR: 'gateway_error',
  GATEWAY_NOT_AVAILABLE: 'gateway_error',
});

const normalizeWord = (word: string): string => word.trim().toUpperCase();

/**
 * Maps a provider status word (case-insensitive, trimmed). A word not listed in the map is
 * 'unrecognized': not final, never success.
 */
export function mapProviderStatus(word: string | undefined | null, map: StatusMap = DEFAULT_STATUS_MAP): PayoutStatusOutcome {
  if (typeof word !== 'string') {
    return 'unrecognized';
  }
  const key = normalizeWord(word);
  return Object.hasOwn(map, key) ? (map[key] ?? 'unrecognized') : 'unrecognized';
}

/**
 * Parses PROVIDER_STATUS_MAP: a JSON object of status word -> outcome, e.g.
 * `{"PAID":"succeeded","REVERSED":"failed"}`. Entries override or extend the default table; set a
 * word to "unrecognized" to stop treating it as final. Empty or undefined gives the default table.
 * @throws StatusMapError naming the offending entry.
 */
export function parseStatusMap(json: string | undefined): StatusMap {
  if (json === undefined || json.trim() === '') {
    return DEFAULT_STATUS_MAP;
  }
  const raw = parseJsonObject(json, {
    notJson: (reason) => new StatusMapError(reason),
    notObject: () => new StatusMapError('must be a JSON object of status word to outcome'),
  });
  const map: Record<string, PayoutStatusOutcome> = { ...DEFAULT_STATUS_MAP };
  for (const [word, outcome] of Object.entries(raw)) {
    const key = normalizeWord(word);
    if (!/^[A-Z0-9_ -]{1,64}$/.test(key)) {
      throw new StatusMapError(`word ${JSON.stringify(word)} must be 1-64 letters, digits, '_', '-' or spaces`);
    }
    if (typeof outcome !== 'string' || !(OUTCOMES as readonly string[]).includes(outcome)) {
      throw new StatusMapError(
        `maps ${key} to ${JSON.stringify(outcome)}; allowed: ${OUTCOMES.join(', ')}`,
      );
    }
    map[key] = outcome as PayoutStatusOutcome;
  }
  return Object.freeze(map);
}

/**
 * The table in force as one log-friendly line, words grouped by outcome
 * (`succeeded: COMPLETED SUCCESSFUL; failed: FAILED; ...`), so a start-up log shows what every
 * word means without a reader having to merge PROVIDER_STATUS_MAP into the defaults by hand.
 */
export function describeStatusMap(map: StatusMap): string {
  return OUTCOMES.map((outcome) => [outcome, Object.keys(map).filter((word) => map[word] === outcome)] as const)
    .filter(([, words]) => words.length > 0)
    .map(([outcome, words]) => `${outcome}: ${words.join(' ')}`)
    .join('; ');
}
