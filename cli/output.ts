import Table from 'cli-table3';
import { tableStyle } from '@local/terminal';
import type { OperatorInput } from '@shared/app/operator-errors';
import type { ForeignCursor } from '@shared/domain/errors';

/**
 * Exit codes by class of failure (docs/cli.md "Exit codes"), so a script can tell them apart.
 */
export const EXIT = {
  ok: 0,
  /** Anything not in a class below (a bug, a conflict to retry). */
  failure: 1,
  /**
   * The command line is wrong: an unknown command or option, a required option, argument or option
   * value missing, options that exclude each other or do not apply, no terminal to prompt on.
   */
  usage: 2,
  /**
   * A value given is invalid, whichever check refuses it: an option's or an argument's (`--limit 0`,
   * `--since yesterday`, a choice not offered, an empty `--evidence`), a file's row, a secret, a body.
   */
  invalidInput: 3,
  /** The payout, message or secret named does not exist. */
  notFound: 4,
  /** The stack or AWS cannot be reached (no local stack, no credentials, network). */
  unreachable: 5,
  /** The provider refused, or the action is refused by the payout's state or the provider's answer. */
  refused: 6,
  /** A signature does not match. */
  signatureMismatch: 7,
} as const;

/**
 * A failure the operator can act on: the CLI prints its message on one line (no stack trace) and
 * exits with `exitCode`.
 */
export class CliError extends Error {
  override name = 'CliError';
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

/** How a command prints: a human table by default, JSON with --json. */
export interface Output {
  readonly json: boolean;
  /** Prints `data` as JSON (with --json) or runs `human` to print it for a person. */
  result(data: unknown, human: () => void): void;
  /** A progress or hint line; goes to stderr so `--json` stdout stays parseable. */
  note(line: string): void;
}

export function createOutput(json: boolean): Output {
  return {
    json,
    result(data, human) {
      if (json) process.stdout.write(`${jsonText(data, 2)}\n`);
      else human();
    },
    note(line) {
      printErrorLine(line);
    },
  };
}

/*
 * Text from outside (a provider's verified name, a KYC note, a notification body, an error message
 * quoting an answer) reaches the operator's terminal. Control characters in it would act there: ESC
 * sequences clear the screen, set the window title or draw fake text; CR overwrites a line; a
 * newline forges a table row or a `payrelay:` line; bidi overrides reorder what is read. Every cell
 * and line the CLI prints for a person goes through `printable`, which shows each such character as
 * a visible escape instead (docs/cli.md, "Provider text is printed...").
 */

/**
 * Characters that act on a terminal or hide or reorder text instead of showing: C0 controls (tab,
 * newline and CR included), DEL, C1 controls (U+0080-U+009F, U+009B is a one-byte CSI), lone
 * surrogates, the line and paragraph separators, and the invisible format characters (Cf: bidi
 * embeddings, overrides, isolates and marks, zero-width space, word joiner, soft hyphen, BOM, tags).
 * The zero-width joiner and non-joiner stay: emoji sequences and several scripts need them and they
 * reorder nothing.
 */
const UNSAFE = /[\p{Cc}\p{Cs}\u2028\u2029]|(?![\u200c\u200d])\p{Cf}/gu;

const SHORT_ESCAPES: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

const escaped = (ch: string): string => {
  const short = SHORT_ESCAPES[ch];
  if (short !== undefined) return short;
  const code = ch.codePointAt(0) as number;
  return code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, '0')}`;
};

/**
 * Text made safe to print on one line of a terminal: every character of UNSAFE becomes a visible
 * escape (`\u001b`, `\u202e`, `\u{e0041}`; a tab, newline and CR as `\t`, `\n`, `\r`), so the
 * operator sees that something was there and nothing acts. Anything else, letters of every script
 * and emoji included, is left as is. Applying it twice changes nothing more.
 */
export function printable(text: string): string {
  return text.replace(UNSAFE, escaped);
}

/** Several lines of text (a message body) made safe: its newlines stay line breaks, every other character of UNSAFE is escaped. */
export function printableLines(text: string): string {
  return text.split('\n').map(printable).join('\n');
}

/** Non-ASCII characters of UNSAFE (all of which JSON.stringify leaves raw) as they appear in JSON text. */
const UNSAFE_IN_JSON = /[\u007f-\u009f\u2028\u2029\p{Cs}]|(?![\u200c\u200d])\p{Cf}/gu;

const jsonEscaped = (ch: string): string =>
  Array.from({ length: ch.length }, (_, i) => `\\u${ch.charCodeAt(i).toString(16).padStart(4, '0')}`).join('');

/**
 * JSON.stringify, with the characters of UNSAFE it leaves raw (DEL, C1 controls, bidi and other
 * format characters; it already escapes C0 controls) written as `\uXXXX` escapes too. They can only
 * stand inside strings, so the text parses to exactly the same value: `--json` piped to a program
 * is unchanged, and `--json` read on a terminal cannot act on it either.
 */
export function jsonText(data: unknown, indent?: number): string {
  return JSON.stringify(data, null, indent).replace(UNSAFE_IN_JSON, jsonEscaped);
}

/** Prints one line for a person on stdout, made safe (`printable`): a newline inside it shows as `\n`. */
export function printLine(line: string): void {
  console.log(printable(line));
}

/** Prints one line for a person on stderr (a warning, an error, a progress note), made safe (`printable`). */
export function printErrorLine(line: string): void {
  console.error(printable(line));
}

/** Prints text of several lines (a message body as received) on stdout: line breaks kept, everything else made safe (`printableLines`). */
export function printText(text: string): void {
  console.log(printableLines(text));
}

/**
 * Prints a message body after the table of its fields, under its own heading line (`body (...):`),
 * so it cannot be taken for more of the table or for the command's own output: line breaks kept,
 * everything else made safe (`printText`). An empty body says so on the heading line.
 */
export function printBody(heading: string, body: string): void {
  if (body === '') {
    printLine(`${heading}: (empty)`);
    return;
  }
  printLine(`${heading}:`);
  printText(body);
}

type Cell = string | number | boolean | null | undefined;

/** Prints rows as a table with the given columns; empty cells show as '-'. */
export function printTable(head: readonly string[], rows: ReadonlyArray<readonly Cell[]>): void {
  const table = new Table({ head: head.map(printable), wordWrap: true, style: tableStyle() });
  for (const row of rows) table.push(row.map((c) => (c === undefined || c === null || c === '' ? '-' : printable(String(c)))));
  console.log(table.toString());
}

/**
 * Prints a listing's rows as a table or, when there are none, the one line `nothing` instead of an
 * empty table, so "nothing matches" cannot be mistaken for a command that broke.
 */
export function printListing(head: readonly string[], rows: ReadonlyArray<readonly Cell[]>, nothing: string): void {
  if (rows.length === 0) printLine(nothing);
  else printTable(head, rows);
}

/** The options a listing was filtered by, as typed (`--state FAILED --since 2d`); options not given are left out. */
export function optionsText(options: ReadonlyArray<readonly [flag: string, value: string | undefined]>): string {
  return options.flatMap(([flag, value]) => (value === undefined ? [] : [`${flag} ${shellWord(value)}`])).join(' ');
}

/** Flattens nested objects into dotted keys (`app._id`), so wide records stay readable as rows. */
export function flattenRecord(record: Record<string, unknown>, prefix = ''): Array<[string, Cell]> {
  const rows: Array<[string, Cell]> = [];
  for (const [key, value] of Object.entries(record)) {
    const name = `${prefix}${key}`;
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) rows.push(...flattenRecord(value as Record<string, unknown>, `${name}.`));
    else if (Array.isArray(value)) rows.push([name, value.map((v) => (typeof v === 'object' ? JSON.stringify(v) : String(v))).join(', ')]);
    else rows.push([name, value as Cell]);
  }
  return rows;
}

/** A value as one shell word, quoted only when it must be, so a printed command can be pasted as is. */
export function shellWord(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

/** Prints an object's fields as a two-column table. */
export function printRecord(record: Record<string, unknown>): void {
  printTable(['field', 'value'], flattenRecord(record));
}

/** The AWS profile the SDK used (for a credentials error to name it). */
const profileTried = (): string => process.env.AWS_PROFILE ?? process.env.AWS_DEFAULT_PROFILE ?? 'default';

/** Network failures of the SDK or fetch: nothing answered. */
const UNREACHABLE = /ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|UnknownEndpoint|socket hang up/;

/** The option that gives each input an operator's use case names in plain words (InvalidOperatorInputError's `input`). */
const OPTION_OF_INPUT: Readonly<Record<OperatorInput, string>> = { newReference: '--new-reference', accountNumber: '--account-number' };

/** A use case's message with the option it is about, when it names one: "...: give the beneficiary's full account number (--account-number)". */
const withOption = (message: string, error: Error): string => {
  const input = (error as { input?: OperatorInput }).input;
  return input === undefined ? message : `${message} (${OPTION_OF_INPUT[input]})`;
};

/** Why a `--cursor` was refused, in the options of the listing, and what to do. */
function cursorWords(foreign: ForeignCursor | undefined): string {
  const restart = 'or run the listing again without --cursor for its first page';
  if (foreign?.kind === 'state') {
    return `--cursor: this cursor belongs to a --state ${foreign.cursorState} listing, not to this --state ${foreign.listedState} one: give it with the options it was printed under (--state ${foreign.cursorState}), ${restart}`;
  }
  if (foreign?.kind === 'range') {
    return `--cursor: this cursor was printed under another --since/--until (a duration such as 2d moves with the clock): give it with the range it was printed under, ${restart}`;
  }
  return '--cursor: the cursor is not one this listing handed out (altered, cut short, or printed by another listing): run the listing again without --cursor for its first page';
}

/**
 * Every named error the CLI meets, in one place: the exit-code class and the words of its line.
 * Matched by name so the CLI need not load the modules that define them.
 */
const ERROR_CLASSES: Readonly<Record<string, { exit: number; words: (message: string, error: Error) => string }>> = {
  PayoutNotFoundError: { exit: EXIT.notFound, words: (m) => m },
  DeadLetterNotFoundError: { exit: EXIT.notFound, words: (m) => m },
  InvalidOperatorInputError: { exit: EXIT.invalidInput, words: withOption },
  CollectionNotFoundError: { exit: EXIT.notFound, words: (m) => m },
  CollectionExistsError: { exit: EXIT.invalidInput, words: (m) => m },
  CollectionQueryError: { exit: EXIT.invalidInput, words: (m) => m },
  InvalidCollectionError: { exit: EXIT.invalidInput, words: (m) => m },
  InvalidAmountError: { exit: EXIT.invalidInput, words: (m) => m },
  UnsupportedCurrencyError: { exit: EXIT.invalidInput, words: (m) => m },
  OperatorActionRefusedError: {
    exit: EXIT.refused,
    // The use case says what evidence settles it; --force is named only as the way to record that evidence.
    words: (m, e) =>
      (e as { forcible?: boolean }).forcible
        ? `${m}. Only with that evidence in hand, give it with --evidence and --force: the override is recorded in history, and forcing against a provider that did execute the payout risks paying twice`
        : withOption(m, e),
  },
  InvalidListCursorError: { exit: EXIT.invalidInput, words: (_m, e) => cursorWords((e as { foreign?: ForeignCursor }).foreign) },
  ReplayRangeError: { exit: EXIT.invalidInput, words: (m) => `--since/--until: ${m}` },
  ConcurrentModificationError: { exit: EXIT.failure, words: () => 'the payout changed while this command ran; run it again to act on its new state' },
  ProviderRejectedError: { exit: EXIT.refused, words: (m) => `the provider refused: ${m}` },
  ProviderUnauthorizedError: { exit: EXIT.refused, words: (m) => `the provider refused the keys (check them with \`payrelay secrets\`): ${m}` },
  ProviderUnavailableError: { exit: EXIT.unreachable, words: (m) => `the provider cannot be reached: ${m}` },
  ProviderAmbiguousError: { exit: EXIT.unreachable, words: (m) => `the provider's answer is unclear: ${m}` },
  KycOrderInputError: { exit: EXIT.invalidInput, words: (m) => m },
  InvalidPhoneNumberError: { exit: EXIT.invalidInput, words: (m) => m },
  KycOrderAnswerError: { exit: EXIT.unreachable, words: (m) => `the KYC service's answer cannot be used: ${m}` },
  KycResponsesFormatError: { exit: EXIT.unreachable, words: (m) => `the KYC service's /responses answer cannot be read, so nothing was stored: ${m}` },
  SecretFormatError: { exit: EXIT.invalidInput, words: (m) => m },
  SigningProfileError: { exit: EXIT.invalidInput, words: (m) => m },
  ConfigError: { exit: EXIT.invalidInput, words: (m) => `${m} (in this shell's environment)` },
  CredentialsProviderError: {
    exit: EXIT.unreachable,
    words: (m) => `no usable AWS credentials for profile ${profileTried()}: ${m} (log in, e.g. \`aws sso login --profile ${profileTried()}\`, or pass --profile)`,
  },
  ExpiredTokenException: { exit: EXIT.unreachable, words: (m) => `the AWS session of profile ${profileTried()} has expired: ${m}` },
  UnrecognizedClientException: { exit: EXIT.unreachable, words: (m) => `AWS does not accept the credentials of profile ${profileTried()}: ${m}` },
  AccessDeniedException: { exit: EXIT.unreachable, words: (m) => `AWS denies this to profile ${profileTried()}: ${m}` },
  ResourceNotFoundException: { exit: EXIT.notFound, words: (m) => `not found in AWS: ${m}` },
  QueueDoesNotExist: { exit: EXIT.notFound, words: (m) => `the queue does not exist: ${m}` },
  TimeoutError: { exit: EXIT.unreachable, words: (m) => `timed out: ${m}` },
};

/**
 * One line for any error, in words (never a class name or a stack trace), made safe to print
 * (`printable`): a message may quote a provider's answer.
 */
export function describeError(error: unknown): string {
  return printable(errorWords(error));
}

function errorWords(error: unknown): string {
  if (error instanceof CliError) return error.message;
  if (error instanceof Error) {
    const known = ERROR_CLASSES[error.name];
    const message = error.message.split('\n')[0] as string;
    if (known) return known.words(message, error);
    if (UNREACHABLE.test(`${(error as NodeJS.ErrnoException).code ?? ''} ${error.name} ${error.message}`)) return `cannot reach the service: ${message}`;
    return message || 'unexpected error';
  }
  return String(error);
}

/** The exit code of an error's class (EXIT). */
export function exitCodeOf(error: unknown): number {
  if (error instanceof CliError) return error.exitCode;
  if (!(error instanceof Error)) return EXIT.failure;
  const known = ERROR_CLASSES[error.name];
  if (known) return known.exit;
  if (UNREACHABLE.test(`${(error as NodeJS.ErrnoException).code ?? ''} ${error.name} ${error.message}`)) return EXIT.unreachable;
  return EXIT.failure;
}
