import Table from 'cli-table3';
import { tableStyle } from '@local/terminal';

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

/** Prints an object's fields as a two-column table. */
export function printRecord(record: Record<string, unknown>): void {
  printTable(['field', 'value'], flattenRecord(record));
}

/** One line for any error: the message of a named error, never a stack trace. */
export function describeError(error: unknown): string {
  if (error instanceof CliError) return error.message;
  if (error instanceof Error) {
    const name = error.name && error.name !== 'Error' ? `${error.name}: ` : '';
    return `${name}${error.message}`.split('\n')[0] as string;
  }
  return String(error);
}
