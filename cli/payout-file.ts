import { createHash } from 'node:crypto';
import { createReadStream, statSync, type ReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { parse as parseCsv } from 'csv-parse';
import { parseAccountCode } from '@shared/domain/account';
import { parseJsonObject } from '@shared/domain/json-object';
import { checkAmountForm, currencyDecimals, parseAmount } from '@shared/domain/money';
import { checkPayoutRequest, type PayoutRequest } from '@shared/messages/payout-request';
import { unreadableFile } from './io';
import { CliError, EXIT } from './output';

/** One problem with one row; `row` is 1-based, counting data rows (a CSV header is not a row; 0 = the file). */
export interface RowError {
  readonly row: number;
  /** The file line the row starts on, for editors. */
  readonly line: number;
  readonly field?: string;
  readonly message: string;
}

export type PayoutFileFormat = 'csv' | 'jsonl';

/** Picks the format from the file name: `.csv`, or `.jsonl` / `.ndjson`. */
export function formatOf(fileName: string): PayoutFileFormat | undefined {
  const lower = fileName.toLowerCase();
  if (lower.endsWith('.csv')) return 'csv';
  if (lower.endsWith('.jsonl') || lower.endsWith('.ndjson')) return 'jsonl';
  return undefined;
}

/** Fields every row needs: a CSV without one of these columns is refused at its header. */
export const REQUIRED_FIELDS = ['platform_merchant_id', 'currency', 'withdrawal_reference', 'amount', 'account_number', 'account_code'] as const;

/** Columns a CSV may have; `metadata` is a JSON object in one cell, `metadata.<key>` columns also work. */
const CSV_FIELDS = new Set<string>([...REQUIRED_FIELDS, 'version', 'expected_name', 'user_reference', 'metadata']);

/** Keep at most this many errors in memory: a 50 MB file of bad rows must not need gigabytes to report. */
export const MAX_KEPT_ERRORS = 1000;

/** A record as read from the file, before validation: a value to check, or why the record is unreadable. */
interface RawRow {
  readonly row: number;
  /** The file line the record starts on; 0 in a pass that reports no row errors (the send pass). */
  readonly line: number;
  readonly value?: Record<string, unknown>;
  readonly error?: { readonly field?: string; readonly message: string };
}

/** Counts newlines, so a record's first line can be told from the line csv-parse ends it on. */
function newlinesIn(cells: readonly string[]): number {
  let n = 0;
  for (const cell of cells) for (let i = cell.indexOf('\n'); i !== -1; i = cell.indexOf('\n', i + 1)) n += 1;
  return n;
}

/** The header's problems, as one error each (a missing column is one error, not one per row). */
function headerErrors(columns: readonly string[]): string[] {
  // A spreadsheet saved with ';' or tabs (a common locale default) reads as one long column: say that
  // once instead of listing every column as both unknown and missing.
  const separator = columns.length === 1 ? [';', '\t', '|'].find((s) => columns[0]?.includes(s)) : undefined;
  if (separator !== undefined) {
    return [`the header is one column: a payout CSV is comma-separated, and this one looks separated by ${separator === '\t' ? 'tabs' : `"${separator}"`}; save it with commas`];
  }
  const unknown = columns.filter((c) => !CSV_FIELDS.has(c) && !(c.startsWith('metadata.') && c.length > 'metadata.'.length));
  // No column known at all: the first line is a payout (a file without its header) or a JSON object,
  // not a header. Its cells are not listed back: one of them is likely a full account number.
  if (unknown.length === columns.length) {
    const json = columns[0]?.trimStart().startsWith('{') === true;
    return [
      `the first line is not a header (it names none of the columns): ${json ? 'a file of JSON objects, one a line, must be named .jsonl' : `a payout CSV starts with the header row ${REQUIRED_FIELDS.join(',')} (then any of expected_name, user_reference, metadata)`}`,
    ];
  }
  const problems: string[] = [];
  if (unknown.length > 0) problems.push(`unknown column(s) in the header: ${unknown.join(', ')}`);
  const missing = REQUIRED_FIELDS.filter((f) => !columns.includes(f));
  if (missing.length > 0) problems.push(`missing required column(s) in the header: ${missing.join(', ')}`);
  const repeated = [...new Set(columns.filter((c, i) => columns.indexOf(c) !== i))];
  if (repeated.length > 0) problems.push(`column(s) named twice in the header: ${repeated.join(', ')}`);
  return problems;
}

/** Turns one CSV record into the message shape, keyed by the header's columns. */
function csvValue(columns: readonly string[], cells: readonly string[]): Pick<RawRow, 'value' | 'error'> {
  if (cells.length !== columns.length) return { error: { message: `has ${cells.length} cells, the header has ${columns.length}` } };
  const value: Record<string, unknown> = { version: 1 };
  const metadata: Record<string, string> = {};
  for (let i = 0; i < columns.length; i += 1) {
    const column = columns[i] as string;
    const cell = cells[i] as string;
    if (cell.trim() === '') continue; // an empty cell is an absent optional field
    if (column === 'version') value.version = Number(cell);
    else if (column === 'metadata') {
      // Only an object's entries are metadata: a number, true or null would be dropped without a word, and an array or a string spread into keys 0, 1, ...
      try {
        Object.assign(metadata, parseJsonObject(cell, { notJson: () => new Error(), notObject: () => new Error() }));
      } catch {
        return { error: { field: 'metadata', message: 'must be a JSON object' } };
      }
    } else if (column.startsWith('metadata.')) metadata[column.slice('metadata.'.length)] = cell;
    else value[column] = cell;
  }
  if (Object.keys(metadata).length > 0) value.metadata = metadata;
  return { value };
}

/**
 * Reads CSV records as they arrive (RFC 4180 with quoted line breaks, CRLF or LF, a BOM, blank lines
 * skipped). `withLines` numbers each record's first file line, for error messages: csv-parse then
 * builds an info object per record, about a fifth of its time, so the send pass, which reports no
 * row errors, reads without it.
 */
async function* csvRows(input: Readable, withLines: boolean): AsyncGenerator<RawRow> {
  const parser = input.pipe(
    parseCsv({ bom: true, skip_empty_lines: true, relax_column_count: true, relax_quotes: true, info: withLines, record_delimiter: ['\r\n', '\n', '\r'] }),
  );
  let columns: string[] | undefined;
  let row = 0;
  let lastLine = 0;
  try {
    for await (const item of parser as AsyncIterable<{ record: string[]; info: { lines: number } } | string[]>) {
      const record = Array.isArray(item) ? item : item.record;
      const line = Array.isArray(item) ? 0 : item.info.lines - newlinesIn(record);
      if (!Array.isArray(item)) lastLine = item.info.lines;
      if (!columns) {
        columns = record.map((c) => c.trim());
        const problems = headerErrors(columns);
        if (problems.length > 0) {
          for (const message of problems) yield { row: 0, line, error: { message } };
          return;
        }
        continue;
      }
      row += 1;
      yield { row, line, ...csvValue(columns, record) };
    }
  } catch (error) {
    const e = error as Error & { lines?: number };
    const message = e.message.replace(/^[^:]*:\s*/, '').replace(/ at line \d+.*$/, '');
    yield { row: 0, line: e.lines ?? lastLine + 1, error: { message: `unreadable CSV: ${message}` } };
  } finally {
    parser.destroy();
    input.destroy();
  }
}

/** Reads JSONL lines as they arrive; rows are numbered by non-blank lines. */
async function* jsonlRows(input: Readable): AsyncGenerator<RawRow> {
  const lines = createInterface({ input, crlfDelay: Infinity });
  let row = 0;
  let line = 0;
  try {
    for await (const raw of lines) {
      line += 1;
      const content = line === 1 ? raw.replace(/^\uFEFF/, '') : raw;
      if (content.trim() === '') continue;
      row += 1;
      let value: unknown;
      try {
        value = JSON.parse(content);
      } catch {
        yield { row, line, error: { message: 'is not valid JSON' } };
        continue;
      }
      if (value === null || typeof value !== 'object' || Array.isArray(value)) {
        yield { row, line, error: { message: 'must be a JSON object' } };
        continue;
      }
      // `version` may be left out of a file; the message always carries it.
      yield { row, line, value: { version: 1, ...(value as Record<string, unknown>) } };
    }
  } finally {
    lines.close();
    input.destroy();
  }
}

/**
 * The currency, amount and account code checks the schema runs in its transform, field by field. The
 * schema skips its transform when another field is bad, and files any failure of it under no field;
 * running them here reports every error of a row at once, each under the field it is about (an
 * unsupported currency under `currency`, not under `amount`). An amount whose currency is not valid
 * is still checked for what does not depend on the currency (`abc`, `-5`, `0`), so fixing the
 * currency does not reveal another error of the same row.
 */
function domainFieldErrors(value: Record<string, unknown>): Array<{ field: string; message: string }> {
  const out: Array<{ field: string; message: string }> = [];
  const currency = typeof value.currency === 'string' && /^[A-Z]{3}$/.test(value.currency.trim()) ? value.currency.trim() : undefined;
  let currencyKnown = false;
  if (currency) {
    try {
      currencyDecimals(currency);
      currencyKnown = true;
    } catch (error) {
      out.push({ field: 'currency', message: (error as Error).message });
    }
  }
  if (typeof value.amount === 'string' && value.amount.trim() !== '') {
    try {
      if (currencyKnown) parseAmount(value.amount.trim(), currency as string);
      else checkAmountForm(value.amount.trim());
    } catch (error) {
      out.push({ field: 'amount', message: (error as Error).message });
    }
  }
  if (typeof value.account_code === 'string' && value.account_code.trim() !== '') {
    try {
      parseAccountCode(value.account_code.trim());
    } catch (error) {
      out.push({ field: 'account_code', message: (error as Error).message });
    }
  }
  return out;
}

/** Validates one row with the queue's schema; errors name the field, never echo an account number. */
function validateRow(row: number, line: number, value: Record<string, unknown>): { request?: PayoutRequest; errors: RowError[] } {
  const checked = checkPayoutRequest(value);
  if (checked.ok) return { request: checked.request, errors: [] };
  const { problems } = checked;
  const errors: RowError[] = problems.flatMap((p) => (p.field === undefined ? [] : [{ row, line, field: p.field, message: p.message }]));
  for (const extra of domainFieldErrors(value)) {
    if (!errors.some((e) => e.field === extra.field)) errors.push({ row, line, ...extra });
  }
  if (errors.length === 0) {
    // A row-level issue the field checks above did not explain.
    errors.push(...problems.map((p) => ({ row, line, message: p.message })));
  }
  errors.sort((a, b) => (a.field ?? '').localeCompare(b.field ?? ''));
  return { errors };
}

/** A payout file opened for one pass: its rows, and how far the pass has read (for progress). */
interface FilePass {
  readonly rows: AsyncGenerator<RawRow>;
  bytesRead(): number;
}

function openPass(path: string, format: PayoutFileFormat, withLines: boolean): FilePass {
  const stream: ReadStream = createReadStream(path, { highWaterMark: 256 * 1024 });
  // An unreadable file fails on the first read; the generators rethrow it there.
  return { rows: format === 'csv' ? csvRows(stream, withLines) : jsonlRows(stream), bytesRead: () => stream.bytesRead };
}

/** Size of a payout file in bytes; the error names the file (missing, a directory, unreadable). */
export function payoutFileSize(path: string): number {
  try {
    const stat = statSync(path);
    if (!stat.isFile()) throw new CliError(`cannot read ${path}: it is not a file`, EXIT.invalidInput);
    return stat.size;
  } catch (error) {
    if (error instanceof CliError) throw error;
    throw unreadableFile(path, error);
  }
}

/**
 * The row each identity was first seen on, for finding repeated rows in a large file. It keeps a 64-bit
 * digest and a row number per identity in typed arrays (16 bytes a row, outside the garbage-collected
 * heap), not the identities as strings: a 50 MB file's 700,000 rows take about 20 MB. Two identities
 * sharing a 64-bit digest in one file is a chance of about 1 in 10^8 at that size.
 */
class FirstRows {
  private digests = new BigUint64Array(1 << 12);
  private rows = new Uint32Array(1 << 12);
  private size = 0;

  /** The row `key` was first seen on; or, when it is new, records it on `row` and returns undefined. */
  firstOrAdd(key: string, row: number): number | undefined {
    // 0 marks an empty slot, so a digest is never 0.
    const digest = createHash('md5').update(key).digest().readBigUInt64LE(0) | 1n;
    for (let i = this.slotOf(digest); ; i = (i + 1) & (this.digests.length - 1)) {
      const at = this.digests[i] as bigint;
      if (at === digest) return this.rows[i];
      if (at !== 0n) continue;
      this.digests[i] = digest;
      this.rows[i] = row;
      this.size += 1;
      if (this.size * 2 > this.digests.length) this.grow();
      return undefined;
    }
  }

  private slotOf(digest: bigint): number {
    return Number(digest >> 11n) & (this.digests.length - 1);
  }

  private grow(): void {
    const { digests, rows } = this;
    this.digests = new BigUint64Array(digests.length * 2);
    this.rows = new Uint32Array(digests.length * 2);
    for (let j = 0; j < digests.length; j += 1) {
      const digest = digests[j] as bigint;
      if (digest === 0n) continue;
      let i = this.slotOf(digest);
      while (this.digests[i] !== 0n) i = (i + 1) & (this.digests.length - 1);
      this.digests[i] = digest;
      this.rows[i] = rows[j] as number;
    }
  }
}

type IdentityField = 'platform_merchant_id' | 'currency' | 'withdrawal_reference';

/**
 * A row's identity fields as the schema would take them (trimmed), each only when it is a string
 * without an error of its own: the same values a valid row's request carries.
 */
function identityFields(value: Record<string, unknown>, errors: readonly RowError[]): Partial<Record<IdentityField, string>> {
  const fields: Partial<Record<IdentityField, string>> = {};
  for (const field of ['platform_merchant_id', 'currency', 'withdrawal_reference'] as const) {
    const cell = value[field];
    if (typeof cell === 'string' && cell.trim() !== '' && !errors.some((e) => e.field === field)) fields[field] = cell.trim();
  }
  return fields;
}

/** What a validation pass found. */
export interface PayoutFileCheck {
  /** Data rows in the file. */
  readonly rows: number;
  /** Valid rows (all rows when there is no error). */
  readonly validRows: number;
  /** Every error, or the first MAX_KEPT_ERRORS of them; `errorCount` counts them all. */
  readonly errors: RowError[];
  readonly errorCount: number;
  /** Rows (counted per merchant id) that name another merchant than the expected one. */
  readonly otherMerchants: Record<string, number>;
}

export interface CheckOptions {
  /** Rows must name this platform_merchant_id (the deployment's own); others are errors. */
  readonly merchant?: string;
  /** Called now and then with the bytes read so far. */
  readonly onBytes?: (bytes: number) => void;
}

/**
 * Reads a payout file once, streaming (memory bounded by the rows' identities, not the file), and
 * validates every row with the queue's own schema (checkPayoutRequest). Also an error: a
 * withdrawal_reference repeated for the same merchant and currency (the second row would silently be
 * skipped as "already enqueued"), and a row for another merchant than `merchant` (the worker would
 * REJECT it for good), both checked on every row, one with other errors too. Nothing is sent by this
 * pass; `enqueue` sends only when it finds no error.
 */
export async function checkPayoutFile(path: string, format: PayoutFileFormat, options: CheckOptions = {}): Promise<PayoutFileCheck> {
  const pass = openPass(path, format, true);
  const errors: RowError[] = [];
  let errorCount = 0;
  const note = (error: RowError): void => {
    errorCount += 1;
    if (errors.length < MAX_KEPT_ERRORS) errors.push(error);
  };
  const seen = new FirstRows();
  const otherMerchants: Record<string, number> = {};
  let rows = 0;
  let validRows = 0;
  let sinceProgress = 0;
  for await (const raw of pass.rows) {
    if (raw.row > 0) rows = raw.row;
    if (++sinceProgress >= 500) {
      sinceProgress = 0;
      options.onBytes?.(pass.bytesRead());
    }
    if (!raw.value) {
      note({ row: raw.row, line: raw.line, ...raw.error, message: raw.error?.message ?? 'unreadable row' });
      continue;
    }
    const checked = validateRow(raw.row, raw.line, raw.value);
    checked.errors.forEach(note);
    let valid = checked.request !== undefined;
    // The repeat and merchant checks run on every row, whatever else is wrong with it, so one run
    // reports every error and counts every row for another merchant. A field with an error of its
    // own is left out of them: its value is not one a payout could have.
    const fields = identityFields(raw.value, checked.errors);
    if (fields.platform_merchant_id !== undefined && fields.currency !== undefined && fields.withdrawal_reference !== undefined) {
      const first = seen.firstOrAdd(identityKey(fields as Required<typeof fields>), raw.row);
      if (first !== undefined) {
        note({ row: raw.row, line: raw.line, field: 'withdrawal_reference', message: `repeats row ${first} (same merchant, currency and reference)` });
        valid = false;
      }
    }
    const rowMerchant = fields.platform_merchant_id;
    if (options.merchant !== undefined && rowMerchant !== undefined && rowMerchant !== options.merchant) {
      otherMerchants[rowMerchant] = (otherMerchants[rowMerchant] ?? 0) + 1;
      note({ row: raw.row, line: raw.line, field: 'platform_merchant_id', message: `"${rowMerchant}" is not this deployment's merchant (${options.merchant})` });
      valid = false;
    }
    if (valid) validRows += 1;
  }
  options.onBytes?.(pass.bytesRead());
  if (rows === 0 && errorCount === 0) note({ row: 0, line: 1, message: 'the file has no payout rows' });
  return { rows, validRows, errors, errorCount, otherMerchants };
}

/**
 * The validated requests of a file that `checkPayoutFile` found good, read again as they are needed
 * (a second pass keeps memory flat: the requests of a large file never sit in memory together).
 * @throws CliError when a row is no longer valid (the file changed since it was checked).
 */
export async function* payoutRequests(path: string, format: PayoutFileFormat): AsyncGenerator<PayoutRequest> {
  const pass = openPass(path, format, false);
  for await (const raw of pass.rows) {
    const checked = raw.value ? validateRow(raw.row, raw.line, raw.value) : undefined;
    if (!checked?.request) throw new CliError(`${path} changed while it was being enqueued (row ${raw.row} is no longer valid); rerun the command`);
    yield checked.request;
  }
}

/** The identity of a request as one string (merchant, currency, reference): for sets and journals. */
export function identityKey(request: Pick<PayoutRequest, 'platform_merchant_id' | 'currency' | 'withdrawal_reference'>): string {
  return JSON.stringify([request.platform_merchant_id, request.currency, request.withdrawal_reference]);
}

/** One line per error, e.g. `row 3 (line 4) amount: must have at most 2 decimals`. */
export function formatRowError(error: RowError): string {
  const where = error.row === 0 ? `line ${error.line}` : `row ${error.row} (line ${error.line})`;
  return `${where}${error.field ? ` ${error.field}` : ''}: ${error.message}`;
}
