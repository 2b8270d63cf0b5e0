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

/**
 * Whether a JSON member name names an account, card or phone number. The name is compared normalized:
 * lower case, without `_`, `-`, `.` and white space (`Account_Number`, `account-no`, `accountNumber`
 * are one name). Names that count:
 *
 * - ending in `account`, `acct`, `acc`, `card`, `wallet`, `phone` or `mobile` followed by `number`,
 *   `num` or `no`: `account_number`, `accountNo`, `acct_no`, `acc_no`, `card_number`, `wallet_number`,
 *   `phone_number`, `mobile_number`, `beneficiary_account_number`, `virtual_account_number`...;
 * - ending in `phone`, `mobile`, `msisdn`, `iban` or `nuban`: `phone`, `telephone`, `customer_phone`,
 *   `mobile`, `msisdn`, `iban`...;
 * - ending in `bank`, `beneficiary`, `destination`, `recipient` or `payee` followed by `account`:
 *   `bank_account`, `beneficiary_account`, `beneficiaryBankAccount`...;
 * - exactly `pan` (a card's primary account number; only exactly, so that `company` is not one).
 *
 * Each may end in a plural `s` (`account_numbers`, `phones`). A bare `account` is not one: the KYC
 * service's `account` is its own record id (`acct-…`), not a bank account. Neither are
 * `account_code` (a bank code or provider), `account_name` or amounts, references and dates.
 */
const ACCOUNT_MEMBER_NAME =
  /(?:account|acct|acc|card|wallet|phone|mobile)(?:number|num|no)s?$|(?:phone|mobile|msisdn|iban|nuban)s?$|(?:bank|beneficiary|destination|recipient|payee)accounts?$|^pans?$/;

/** Whether a (decoded) JSON member name is an account, card or phone number's: see ACCOUNT_MEMBER_NAME. */
export function isAccountMemberName(name: string): boolean {
  return ACCOUNT_MEMBER_NAME.test(name.toLowerCase().replace(/[\s_.-]/g, ''));
}

/** Long digit runs (a leading `+` kept with them) in a text that is not JSON are masked like account numbers. */
const maskDigitRuns = (text: string): string => text.replace(/\+?\d{6,}/g, (digits) => maskAccount(digits));

/** The index just past the JSON string token that starts at `start` (a `"`), in a text known to be valid JSON. */
function endOfString(text: string, start: number): number {
  let i = start + 1;
  while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
  if (i >= text.length) throw new Error('unterminated string');
  return i + 1;
}

/**
 * How many documents deep, each carried as a string value of the one around it, the masker looks:
 * the body is level 0, a JSON document in one of its strings level 1. Providers and queues wrap a
 * payload once or twice (`{"payload":"{\\"account_number\\":…}"}`); three covers that with room.
 */
export const MAX_NESTED_JSON_LEVELS = 3;

/**
 * The longest string (in UTF-16 code units, decoded) the masker parses as a nested document. With
 * the level bound it keeps a hostile body's cost linear in its length: each level parses at most
 * the text of the level around it, and no one string more than this.
 */
export const MAX_NESTED_JSON_LENGTH = 65_536;

/**
 * How many strings shaped like a document or a JSON string one body may have parsed, all levels
 * together. A string that is not JSON costs a thrown SyntaxError, some thirty times the cost of
 * walking it, so a body of tens of thousands of `"{x}"` would take half a second to show without
 * this bound.
 */
export const MAX_NESTED_JSON_DOCUMENTS = 1_000;

/** What is left of MAX_NESTED_JSON_DOCUMENTS while one body is masked. */
interface NestedBudget {
  documents: number;
}

/**
 * Whether a decoded string value may parse as a JSON object, array or string: its first and last
 * characters, white space aside, are `{` and `}`, `[` and `]`, or `"` and `"`. Only such a string is
 * handed to JSON.parse (a string that opens a document but does not close it cannot be one).
 */
function mayBeJsonDocument(value: string): boolean {
  const trimmed = value.trim();
  const first = trimmed[0];
  const last = trimmed[trimmed.length - 1];
  return (first === '{' && last === '}') || (first === '[' && last === ']') || (trimmed.length > 1 && first === '"' && last === '"');
}

/** The characters JSON writes objects, arrays and strings with: a string holding one may hold JSON text, whole or in part. */
const JSON_DELIMITER = /[{}[\]"]/;

/** JSON.parse's verdict, without its exception. */
function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * What a string value found at `level` - 1 (decoded) is shown as. `undefined`: keep it as it stands.
 *
 * - A JSON object or array: its text masked by the same rules (maskValidJsonText). A JSON string
 *   (a value encoded twice, `"\"{…}\""`) is one more level the same way: the text it decodes to is
 *   treated like any string value of level + 1, and the string is written again only if that changed.
 * - Past the level, length or document bound, a string that may be one of these (mayBeJsonDocument)
 *   is shown with every character replaced by `*`, since a document the masker does not read may
 *   hold a number it would mask.
 * - Any other string holding `{`, `}`, `[`, `]` or `"` (one shaped like a document that JSON.parse
 *   refuses, with a trailing comma or text after it, or with a document or the cut end of one after
 *   some words: `upstream said {"account_number":…}`) has every run of 6 digits or more masked, as
 *   a body that is not JSON: its names cannot be read reliably, and a number among them would
 *   otherwise be shown whole. Such strings are rare in provider bodies (references, dates, names
 *   and messages carry none of these characters), so over-masking costs the operator the view of a
 *   few digits at most, never a number's secrecy; it is one pass over the string, so linear.
 * - A string without any of those characters stays as it is, digits and all (`order 12345678 paid`,
 *   `WD-2024-0001234567`): nothing in it names a number as an account's.
 */
function maskedNestedDocument(value: string, level: number, budget: NestedBudget): string | undefined {
  if (mayBeJsonDocument(value)) {
    if (value.length > MAX_NESTED_JSON_LENGTH || budget.documents <= 0) return '*'.repeat(value.length);
    budget.documents -= 1;
    if (parses(value)) {
      if (level > MAX_NESTED_JSON_LEVELS) return '*'.repeat(value.length);
      const masked = maskValidJsonText(value, level, budget);
      return masked === value ? undefined : masked;
    }
  }
  if (!JSON_DELIMITER.test(value)) return undefined;
  const masked = maskDigitRuns(value);
  return masked === value ? undefined : masked;
}

/** One open object or array of the walk: whether all its values are masked, and (objects) where a member stands. */
interface Frame {
  readonly object: boolean;
  /** Every scalar in it is masked: it is, or is inside, the value of an account member. */
  readonly masked: boolean;
  /** The next string token is a member name. */
  expectName: boolean;
  /** The member whose value comes next is an account member. */
  accountMember: boolean;
}

/**
 * Masks a text that JSON.parse accepted, token by token with an explicit stack (no recursion over
 * its arrays and objects, so any depth the parser took is fine). Names are decoded before they are
 * compared; only the tokens of masked values, and of member names and string values that
 * maskedNestedDocument changes (a document or JSON string with something masked in it, one call per level,
 * MAX_NESTED_JSON_LEVELS at most; or digits in a string that may hold JSON text it could not read),
 * are rewritten; every other character is copied. `level`: how many strings deep `text` was
 * found (0: the body itself); `budget`: the nested documents the body may still have parsed.
 */
function maskValidJsonText(text: string, level = 0, budget: NestedBudget = { documents: MAX_NESTED_JSON_DOCUMENTS }): string {
  const frames: Frame[] = [];
  let out = '';
  let copied = 0;
  const valueMasked = (): boolean => {
    const frame = frames[frames.length - 1];
    return frame !== undefined && (frame.masked || (frame.object && frame.accountMember));
  };
  const replace = (start: number, end: number, shown: string): void => {
    out += text.slice(copied, start) + JSON.stringify(shown);
    copied = end;
  };
  const mask = (start: number, end: number, value: string): void => replace(start, end, maskAccount(value));
  let i = 0;
  while (i < text.length) {
    const c = text[i] as string;
    const frame = frames[frames.length - 1];
    if (c === '{' || c === '[') {
      frames.push({ object: c === '{', masked: valueMasked(), expectName: c === '{', accountMember: false });
      i += 1;
    } else if (c === '}' || c === ']') {
      frames.pop();
      i += 1;
    } else if (c === ',') {
      if (frame?.object) frame.expectName = true;
      i += 1;
    } else if (c === '"') {
      const end = endOfString(text, i);
      if (frame?.object && frame.expectName) {
        const name = JSON.parse(text.slice(i, end)) as string;
        frame.accountMember = isAccountMemberName(name);
        frame.expectName = false;
        // A name is text the sender chose as much as a value is: one carrying a document would show its numbers.
        const nested = maskedNestedDocument(name, level + 1, budget);
        if (nested !== undefined) replace(i, end, nested);
      } else if (valueMasked()) {
        mask(i, end, JSON.parse(text.slice(i, end)) as string);
      } else {
        // Decoded before its shape is looked at: a `{` may be written `\u007b`.
        const nested = maskedNestedDocument(JSON.parse(text.slice(i, end)) as string, level + 1, budget);
        if (nested !== undefined) replace(i, end, nested);
      }
      i = end;
    } else if (c === '-' || (c >= '0' && c <= '9')) {
      let end = i + 1;
      while (end < text.length && '0123456789.eE+-'.includes(text[end] as string)) end += 1;
      // The number as written, every digit of it (a parsed number may have lost some).
      if (valueMasked()) mask(i, end, text.slice(i, end));
      i = end;
    } else {
      i += 1; // white space, ':', and the letters of true, false and null (never masked)
    }
  }
  return out + text.slice(copied);
}

/**
 * Masks the account, card and phone numbers in a body a provider sent (or any stored body) for a
 * person to read, keeping the last 4 characters of each (maskAccount).
 *
 * A JSON body is masked on what it means, not on how it is spelled: member names are decoded
 * (`"account\u005fnumber"` is `account_number`) and compared normalized (see ACCOUNT_MEMBER_NAME),
 * and under such a member every string and number is masked, however deep in arrays and objects
 * (`"accountNumber": ["5555666677"]`, `"account_number": 1234567890`, `"beneficiary_account": {"number": …}`).
 * A masked number is shown as a string of its digits as written. `true`, `false` and `null` stay.
 * The rest of the text is kept as it was received (its escapes, spacing, key order and number
 * spellings such as `100.50`), so the body reads as it arrived, minus those numbers.
 *
 * A string value that is itself a JSON object or array (`{"payload":"{\"account_number\":\"0123456789\"}"}`:
 * providers and queues wrap payloads so) is masked by the same rules, and only when something in it
 * was masked is that one string written again (JSON.stringify of its masked text, so its escapes
 * may be spelled differently); every other byte stays. A string value that is itself a JSON string
 * (a payload encoded twice, `"\"{…}\""`) is one more level: the text it decodes to is read as any
 * string value is, and the string is written again only if that changed. Documents inside strings
 * of documents inside strings are read the same way, up to MAX_NESTED_JSON_LEVELS levels, a JSON
 * string counting as one. A JSON document or string past that level, a string shaped like one
 * (`{…}`, `[…]`, `"…"`) longer than MAX_NESTED_JSON_LENGTH, and every such string after the first
 * MAX_NESTED_JSON_DOCUMENTS of the body are not read: the whole string is shown as `*` (its length
 * kept) rather than as it stands. A document not read may carry an account number, and the bounds
 * exist because a hostile body can wrap one deeper, longer or more often than any provider does, so
 * an operator loses at most the view of such a string, never a number's secrecy; and whatever the
 * body, the work stays linear in its length.
 *
 * Any other string value that holds `{`, `}`, `[`, `]` or `"` may hold JSON text the parser cannot
 * read (`{…,}` with a trailing comma, `{…} x`, `upstream said {…}`, the cut end of a document): it has
 * every run of 6 digits or more masked, as a body that is not JSON, since its member names cannot
 * be trusted to say which number is an account's. A string value without any of those characters
 * stays as it is, digits and all (`order 12345678 paid`, `WD-2024-0001234567`). A member name is
 * read as a string value is (one carrying a document is masked the same way) after it was compared.
 *
 * A body that is not JSON (or that the parser refuses, such as one nested too deep), or is a bare JSON
 * string or number, has every run of 6 digits or more masked instead. Never throws.
 */
export function maskAccountsInJsonText(text: string): string {
  try {
    const parsed: unknown = JSON.parse(text);
    // A bare string or number has no member to tell what it is: masked by shape, as text that is not JSON.
    return parsed !== null && typeof parsed === 'object' ? maskValidJsonText(text) : maskDigitRuns(text);
  } catch {
    return maskDigitRuns(String(text));
  }
}
