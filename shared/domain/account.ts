import { InvalidAccountCodeError, preview } from './errors';

export { InvalidAccountCodeError } from './errors';

/** Mobile-money providers named by the payout service (its documentation's "Account code values"). */
export const MOBILE_MONEY_PROVIDERS = ['Momo', 'MPESA', 'MTN', 'VOD'] as const;
export type MobileMoneyProvider = (typeof MOBILE_MONEY_PROVIDERS)[number];

/** A validated account_code: a digit bank code ("057") or a mobile-money provider in its canonical spelling. */
export type AccountCode = string & { readonly __brand: 'AccountCode' };

// Bank codes are given as digit strings (three digits for Nigerian banks; some schemes use up to six).
const BANK_CODE = /^[0-9]{2,10}$/;

/**
 * Validates an account_code. Bank codes keep their leading zeros. Provider names are matched
 * case-insensitively and returned in the documented spelling ("momo" -> "Momo").
 * @throws InvalidAccountCodeError
 */
export function parseAccountCode(code: string): AccountCode {
  if (typeof code === 'string' && BANK_CODE.test(code)) {
    return code as AccountCode;
  }
  const provider =
    typeof code === 'string' ? MOBILE_MONEY_PROVIDERS.find((p) => p.toLowerCase() === code.toLowerCase()) : undefined;
  if (!provider) {
    throw new InvalidAccountCodeError(
      `account_code "${preview(String(code))}" is neither a digit bank code nor one of ${MOBILE_MONEY_PROVIDERS.join(', ')}`,
    );
  }
  return provider as AccountCode;
}

/** True when the account code names a mobile-money provider rather than a bank. */
export function isMobileMoney(code: AccountCode): boolean {
  return (MOBILE_MONEY_PROVIDERS as readonly string[]).includes(code);
}

/**
 * Masks an account or phone number for logs and messages: every character but the last 4 becomes
 * '*', keeping the length. Values of 4 characters or fewer are masked entirely, since showing
 * "the last 4" would show all of it.
 */
export function maskAccount(accountNumber: string): string {
  const value = String(accountNumber ?? '');
  if (value.length <= 4) {
    return '*'.repeat(value.length);
  }
  return '*'.repeat(value.length - 4) + value.slice(-4);
}

/** An account as payrelay keeps it: its mask and, when it was made, its keyed fingerprint (`<key id>.<value>`). */
export interface KeptAccount {
  readonly masked: string;
  readonly fingerprint?: string;
}

/**
 * Whether an account given may be the account kept: the masks match and, when both fingerprints
 * were made under the same key, so do they. Under different keys (a key replaced by mistake) or
 * without one, only the mask can tell, so the answer is yes when the masks match.
 */
export function mayBeSameAccount(kept: KeptAccount, given: KeptAccount): boolean {
  if (kept.masked !== given.masked) return false;
  if (kept.fingerprint === undefined || given.fingerprint === undefined) return true;
  const keyOf = (fingerprint: string): string => fingerprint.slice(0, Math.max(0, fingerprint.indexOf('.')));
  return keyOf(kept.fingerprint) !== keyOf(given.fingerprint) || kept.fingerprint === given.fingerprint;
}

/** JSON members whose string value is an account or phone number (`"account_number": "0123456789"`). */
const ACCOUNT_MEMBER = /("(?:account_number|accountNumber|account_no|phone|msisdn)"\s*:\s*")((?:[^"\\]|\\.)*)(")/g;

/**
 * Masks the account and phone numbers inside a JSON text without re-serializing it, so a stored
 * body can be shown as it was received (its escapes, spacing and key order) minus those numbers.
 */
export function maskAccountsInJsonText(text: string): string {
  return text.replace(ACCOUNT_MEMBER, (_m, open: string, value: string, close: string) => `${open}${maskAccount(value)}${close}`);
}
