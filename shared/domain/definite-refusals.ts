import { SettingError } from './errors';
import { parseJsonSetting } from './json-object';

/**
 * Definite refusals: the Payout refusals an operator knows to be final before anything was
 * committed (for example 400 "insufficient balance"). Every other refusal is settled through
 * GetPayout, since a provider may refuse a request after it committed the payout, in any words.
 * The list is empty by default; PAYOUT_DEFINITE_REFUSALS sets it.
 */
export interface DefiniteRefusal {
  /** The HTTP status of the refusal (200 for a `success: false` answer). */
  readonly status: number;
  /** Matched case-insensitively against the provider's message. */
  readonly message: RegExp;
}

/** Thrown when PAYOUT_DEFINITE_REFUSALS is not a valid list; the message does not name the setting (SettingError). */
export class DefiniteRefusalsError extends SettingError {
  override name = 'DefiniteRefusalsError';
}

const MAX_PATTERN = 200;

/**
 * Parses PAYOUT_DEFINITE_REFUSALS: a JSON array of `{"status": 400, "message": "insufficient (balance|funds)"}`.
 * Empty or unset gives no definite refusals.
 * @throws DefiniteRefusalsError naming the offending entry
 */
export function parseDefiniteRefusals(json: string | undefined): readonly DefiniteRefusal[] {
  if (json === undefined || json.trim() === '') return [];
  const raw = parseJsonSetting(json, (reason) => new DefiniteRefusalsError(reason));
  if (!Array.isArray(raw)) {
    throw new DefiniteRefusalsError('must be a JSON array of {"status": 400, "message": "<pattern>"}');
  }
  return raw.map((entry: unknown, index): DefiniteRefusal => {
    const where = `[${index}]`;
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      throw new DefiniteRefusalsError(`${where} must be an object with "status" and "message"`);
    }
    const { status, message, ...rest } = entry as Record<string, unknown>;
    const extra = Object.keys(rest);
    if (extra.length > 0) throw new DefiniteRefusalsError(`${where} has unknown field(s): ${extra.join(', ')}`);
    if (typeof status !== 'number' || !Number.isInteger(status) || status < 200 || status > 499 || (status >= 300 && status < 400)) {
      throw new DefiniteRefusalsError(`${where}.status must be 200 (a success:false answer) or a 4xx status`);
    }
    if ([401, 403, 408, 429].includes(status)) {
      throw new DefiniteRefusalsError(`${where}.status ${status} is never a refusal of the payout (keys, time-out or rate limit)`);
    }
    if (typeof message !== 'string' || message.trim() === '' || message.length > MAX_PATTERN) {
      throw new DefiniteRefusalsError(`${where}.message must be a non-empty pattern of at most ${MAX_PATTERN} characters`);
    }
    try {
      return { status, message: new RegExp(message, 'i') };
    } catch {
      throw new DefiniteRefusalsError(`${where}.message is not a valid regular expression`);
    }
  });
}

/**
 * Whether a refusal is on the operator's list. A refusal without a message never is: an empty or
 * unreadable answer says nothing definite.
 */
export function isDefiniteRefusal(
  list: readonly DefiniteRefusal[],
  refusal: { httpStatus?: number; providerMessage?: string },
): boolean {
  const message = refusal.providerMessage?.trim() ?? '';
  if (message === '') return false;
  return list.some((rule) => rule.status === refusal.httpStatus && rule.message.test(message));
}

/** The list as it is logged at start (`400 /insufficient/i`). */
export function describeDefiniteRefusals(list: readonly DefiniteRefusal[]): string[] {
  return list.map((rule) => `${rule.status} ${String(rule.message)}`);
}
