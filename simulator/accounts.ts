/** One beneficiary account known to the simulated payout service. */
export interface SimAccount {
  account_code: string;
  account_number: string;
  account_name: string;
  /** Currencies the account accepts; empty or absent means any. */
  currencies?: string[];
  /** Payouts to this account settle as FAILED (the outcome rule may fail others too). */
  failPayouts?: boolean;
}

/**
 * The seeded accounts: Nigerian bank codes (057, 058, 044), a Ghanaian bank code and the four
 * mobile-money providers. docs/simulator.md lists them for test authors.
 */
export const SEEDED_ACCOUNTS: readonly SimAccount[] = [
  { account_code: '057', account_number: '0123456789', account_name: 'Adaeze Okafor', currencies: ['NGN'] },
  { account_code: '058', account_number: '0234567890', account_name: 'Chinedu Eze', currencies: ['NGN'] },
  { account_code: '044', account_number: '0345678901', account_name: 'Folake Adeyemi', currencies: ['NGN'] },
  { account_code: '030', account_number: '1020304050', account_name: 'Kofi Asante', currencies: ['GHS'] },
  { account_code: 'MTN', account_number: '0244123456', account_name: 'Kwame Mensah', currencies: ['GHS'] },
  { account_code: 'VOD', account_number: '0201234567', account_name: 'Akosua Boateng', currencies: ['GHS'] },
  { account_code: 'Momo', account_number: '0541234567', account_name: 'Yaw Owusu', currencies: ['GHS'] },
  { account_code: 'MPESA', account_number: '254712345678', account_name: 'Wanjiru Kamau' },
  { account_code: '057', account_number: '0999999999', account_name: 'Payout Always Fails', failPayouts: true },
];

/** A seeded account that settles, in the shape a payout request and its expected name need. */
export interface PayableAccount {
  readonly currency: string;
  readonly account_code: string;
  readonly account_number: string;
  /** The holder's name, as AccountVerification answers it. */
  readonly name: string;
}

/**
 * The seeded accounts that settle and take exactly one of `currencies`, grouped by currency in the
 * order given (seeded order within each). The demo and the chaos run draw payouts from this list,
 * so it never drifts from what the simulator knows.
 */
export function payableAccounts(currencies: readonly string[]): PayableAccount[] {
  return currencies.flatMap((currency) =>
    SEEDED_ACCOUNTS.filter((a) => !a.failPayouts && a.currencies?.length === 1 && a.currencies[0] === currency).map((a) => ({
      currency,
      account_code: a.account_code,
      account_number: a.account_number,
      name: a.account_name,
    })),
  );
}

/** The seeded account whose payouts always settle as FAILED. */
export const FAILING_ACCOUNT: PayableAccount = (() => {
  const account = SEEDED_ACCOUNTS.find((a) => a.failPayouts);
  if (!account) throw new Error('the seeded accounts have no failing account');
  return { currency: 'NGN', account_code: account.account_code, account_number: account.account_number, name: account.account_name };
})();

/** Thrown when an account to add is malformed. */
export class AccountConfigError extends Error {
  override name = 'AccountConfigError';
}

/** The accounts table: lookup by (account_code, account_number), case-sensitive like the provider's codes. */
export class AccountBook {
  private readonly accounts = new Map<string, SimAccount>();

  constructor(initial: readonly SimAccount[]) {
    for (const account of initial) this.add(account);
  }

  private static key(code: string, number: string): string {
    return `${code}|${number}`;
  }

  /** Adds or replaces an account. */
  add(account: SimAccount): SimAccount {
    for (const field of ['account_code', 'account_number', 'account_name'] as const) {
      if (typeof account[field] !== 'string' || account[field].trim() === '') {
        throw new AccountConfigError(`account ${field} must be a non-empty string`);
      }
    }
    const copy: SimAccount = { ...account, currencies: account.currencies ? [...account.currencies] : undefined };
    this.accounts.set(AccountBook.key(account.account_code, account.account_number), copy);
    return copy;
  }

  /** The account, or undefined when unknown or not held in `currency`. */
  find(code: string, number: string, currency: string): SimAccount | undefined {
    const account = this.accounts.get(AccountBook.key(code, number));
    if (!account) return undefined;
    if (account.currencies && account.currencies.length > 0 && !account.currencies.includes(currency)) return undefined;
    return account;
  }

  list(): SimAccount[] {
    return [...this.accounts.values()].map((a) => ({ ...a }));
  }
}
