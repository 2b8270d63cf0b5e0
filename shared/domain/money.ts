import { InvalidAmountError, UnsupportedCurrencyError, preview } from './errors';

export { InvalidAmountError, UnsupportedCurrencyError } from './errors';

/**
 * Currencies payrelay accepts, with their number of decimal places. Extend it at start-up with
 * `registerCurrency`; the payout service adds currencies through sub-accounts, not through the API.
 */
export const CURRENCIES: Record<string, { decimals: number }> = {
  GHS: { decimals: 2 },
  NGN: { decimals: 2 },
  KES: { decimals: 2 },
  UGX: { decimals: 0 },
  XOF: { decimals: 0 },
  ZAR: { decimals: 2 },
  USD: { decimals: 2 },
  EUR: { decimals: 2 },
  GBP: { decimals: 2 },
};

/** A validated, canonical, positive decimal string: exactly the currency's number of decimals. */
export type Amount = string & { readonly __brand: 'Amount' };

const CURRENCY_CODE = /^[A-Z]{3}$/;
// No sign, no exponent, no blanks, no leading zeros, digits on both sides of a point.
const DECIMAL = /^(0|[1-9][0-9]*)(?:\.([0-9]+))?$/;
// More integer digits than this is a typo, not a payout; it also bounds the BigInt work.
const MAX_INTEGER_DIGITS = 18;

/**
 * Adds or changes a currency in the table.
 * @throws UnsupportedCurrencyError when the code is not three capital letters or decimals is not 0..8.
 */
export function registerCurrency(code: string, decimals: number): void {
  if (!CURRENCY_CODE.test(code)) {
    throw new UnsupportedCurrencyError(`currency code must be three capital letters, got "${preview(code)}"`);
  }
  if (!Number.isInteger(decimals) || decimals < 0 || decimals > 8) {
    throw new UnsupportedCurrencyError(`decimals for ${code} must be an integer from 0 to 8`);
  }
  CURRENCIES[code] = { decimals };
}

/**
 * The number of decimals of a supported currency.
 * @throws UnsupportedCurrencyError for a code not in the table.
 */
export function currencyDecimals(currency: string): number {
  return decimalsOf(currency);
}

function decimalsOf(currency: string): number {
  const entry = Object.hasOwn(CURRENCIES, currency) ? CURRENCIES[currency] : undefined;
  if (!entry) {
    throw new UnsupportedCurrencyError(`unsupported currency "${preview(currency)}"`);
  }
  return entry.decimals;
}

/** The integer and fraction digits of an amount written as payrelay takes it, whatever its currency. */
function amountDigits(value: string): { integer: string; fraction: string } {
  if (typeof value !== 'string') {
    throw new InvalidAmountError('amount must be a decimal string');
  }
  const match = DECIMAL.exec(value);
  if (!match) {
    const why = /^0\d/.test(value) ? 'has a leading zero' : 'is not a plain decimal number (digits and at most one point)';
    throw new InvalidAmountError(`amount "${preview(value)}" ${why}`);
  }
  const integer = match[1] ?? '';
  const fraction = match[2] ?? '';
  if (integer.length > MAX_INTEGER_DIGITS) {
    throw new InvalidAmountError(`amount "${preview(value)}" has more than ${MAX_INTEGER_DIGITS} integer digits`);
  }
  return { integer, fraction };
}

/**
 * Validates a decimal amount string and returns its canonical form with exactly the currency's
 * decimals ("10" -> "10.00" for GHS). Accepted: digits, optionally a point followed by at most
 * `decimals` digits. Rejected: signs, exponents, blanks, leading zeros ("01"), a bare point ("1.",
 * ".5"), more decimals than the currency has (even trailing zeros), and zero.
 * @throws InvalidAmountError, UnsupportedCurrencyError
 */
export function parseAmount(value: string, currency: string): Amount {
  const decimals = decimalsOf(currency);
  const { integer, fraction } = amountDigits(value);
  if (fraction.length > decimals) {
    throw new InvalidAmountError(`amount "${preview(value)}" has more than ${decimals} decimals for ${currency}`);
  }
  const minor = BigInt(integer + fraction.padEnd(decimals, '0'));
  if (minor <= 0n) {
    throw new InvalidAmountError('amount must be greater than zero');
  }
  return fromMinorUnits(minor, currency);
}

/**
 * Checks what `parseAmount` checks of an amount whatever its currency: a plain decimal number above
 * zero (no sign, exponent, blank, leading zero or bare point; at most 18 integer digits). Only the
 * number of decimals needs the currency. For an amount whose currency is itself not valid, so its own
 * mistake is still reported.
 * @throws InvalidAmountError
 */
export function checkAmountForm(value: string): void {
  const { integer, fraction } = amountDigits(value);
  if (!/[1-9]/.test(integer + fraction)) {
    throw new InvalidAmountError('amount must be greater than zero');
  }
}

/** The amount in minor units (pesewas, kobo...). Validates `amount` like `parseAmount`. */
export function toMinorUnits(amount: string, currency: string): bigint {
  const canonical = parseAmount(amount, currency);
  return BigInt(canonical.replace('.', ''));
}

/**
 * The canonical amount for a positive number of minor units.
 * @throws InvalidAmountError when `minor` is not positive.
 */
export function fromMinorUnits(minor: bigint, currency: string): Amount {
  const decimals = decimalsOf(currency);
  if (typeof minor !== 'bigint' || minor <= 0n) {
    throw new InvalidAmountError('amount must be greater than zero');
  }
  if (decimals === 0) {
    return minor.toString() as Amount;
  }
  const digits = minor.toString().padStart(decimals + 1, '0');
  return `${digits.slice(0, -decimals)}.${digits.slice(-decimals)}` as Amount;
}
