import { parseAccountCode, type AccountCode } from '@shared/domain/account';
import { CURRENCIES, parseAmount } from '@shared/domain/money';
import { payoutRefusal as refuse } from './refusals';

/** The canonical amount of a request field, or the payout service's 400 for a currency or amount it does not take. */
export function canonicalAmount(amount: string, currency: string): string {
  if (!Object.hasOwn(CURRENCIES, currency)) throw refuse(400, `unsupported currency ${currency.slice(0, 10)}`);
  try {
    return parseAmount(amount, currency);
  } catch {
    throw refuse(400, `amount must be a positive decimal string with at most ${CURRENCIES[currency]?.decimals} decimals for ${currency}`);
  }
}

/** The account code of a request field, or the payout service's 400 naming the codes it takes. */
export function accountCodeOf(code: string): AccountCode {
  try {
    return parseAccountCode(code);
  } catch {
    throw refuse(400, 'account_code must be a digit bank code or one of Momo, MPESA, MTN, VOD');
  }
}
