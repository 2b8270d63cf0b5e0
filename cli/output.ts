import Table from 'cli-table3';
import { tableStyle } from '@local/terminal';

/**
 * Exit codes by class of failure (docs/cli.md "Exit codes"), so a script can tell them apart.
 */
export const EXIT = {
  ok: 0,
  /** Anything not in a class below (a bug, a conflict to retry). */
  failure: 1,
  /** The command line is wrong: unknown command or option, missing argument. */
  usage: 2,
  /** A value given is invalid (a file row, an option value, evidence missing). */
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
      if (json) process.stdout.write(`${JSON.stringify(data, null, 2)}\n`);
      else human();
    },
    note(line) {
      process.stderr.write(`${line}\n`);
    },
  };
}

type Cell = string | number | boolean | null | undefined;

/** Prints rows as a table with the given columns; empty cells show as '-'. */
export function printTable(head: readonly string[], rows: ReadonlyArray<readonly Cell[]>): void {
  const table = new Table({ head: [...head], wordWrap: true, style: tableStyle() });
  for (const row of rows) table.push(row.map((c) => (c === undefined || c === null || c === '' ? '-' : String(c))));
  console.log(table.toString());
}

/**
 * Prints a listing's rows as a table or, when there are none, the one line `nothing` instead of an
 * empty table, so "nothing matches" cannot be mistaken for a command that broke.
 */
export function printListing(head: readonly string[], rows: ReadonlyArray<readonly Cell[]>, nothing: string): void {
  if (rows.length === 0) console.log(nothing);
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

/**
 * Every named error the CLI meets, in one place: the exit-code class and the words of its line.
 * Matched by name so the CLI need not load the modules that define them.
 */
const ERROR_CLASSES: Readonly<Record<string, { exit: number; words: (message: string, error: Error) => string }>> = {
  PayoutNotFoundError: { exit: EXIT.notFound, words: (m) => m },
  DeadLetterNotFoundError: { exit: EXIT.notFound, words: (m) => m },
  InvalidOperatorInputError: { exit: EXIT.invalidInput, words: (m) => m },
  CollectionNotFoundError: { exit: EXIT.notFound, words: (m) => m },
  CollectionExistsError: { exit: EXIT.invalidInput, words: (m) => m },
  CollectionQueryError: { exit: EXIT.invalidInput, words: (m) => m },
  InvalidCollectionError: { exit: EXIT.invalidInput, words: (m) => m },
  InvalidAmountError: { exit: EXIT.invalidInput, words: (m) => m },
  UnsupportedCurrencyError: { exit: EXIT.invalidInput, words: (m) => m },
  OperatorActionRefusedError: {
    exit: EXIT.refused,
    words: (m, e) => ((e as { forcible?: boolean }).forcible ? `${m}. To resolve it against the provider's answer, give --force with your evidence` : m),
  },
  InvalidListCursorError: { exit: EXIT.invalidInput, words: (m) => `--cursor: ${m}` },
  ReplayRangeError: { exit: EXIT.invalidInput, words: (m) => `--since/--until: ${m}` },
  ConcurrentModificationError: { exit: EXIT.failure, words: () => 'the payout changed while this command ran; run it again to act on its new state' },
  ProviderRejectedError: { exit: EXIT.refused, words: (m) => `the provider refused: ${m}` },
  ProviderUnauthorizedError: { exit: EXIT.refused, words: (m) => `the provider refused the keys (check them with \`payrelay secrets\`): ${m}` },
  ProviderUnavailableError: { exit: EXIT.unreachable, words: (m) => `the provider cannot be reached: ${m}` },
  ProviderAmbiguousError: { exit: EXIT.unreachable, words: (m) => `the provider's answer is unclear: ${m}` },
  KycOrderInputError: { exit: EXIT.invalidInput, words: (m) => m },
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

/** One line for any error, in words (never a class name or a stack trace). */
export function describeError(error: unknown): string {
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
