import { parseAccountCode } from '@shared/domain/account';
import { parseAmount } from '@shared/domain/money';
import { payoutRequestSchema, type PayoutRequest } from '@shared/messages/payout-request';

/** One problem with one row; `row` is 1-based, counting data rows (a CSV header is not a row). */
export interface RowError {
  readonly row: number;
  /** The file line the row starts on, for editors. */
  readonly line: number;
  readonly field?: string;
  readonly message: string;
}

export interface ParsedPayoutFile {
  readonly requests: PayoutRequest[];
  readonly errors: RowError[];
  readonly rows: number;
}

export type PayoutFileFormat = 'csv' | 'jsonl';

/** Picks the format from the file name: `.csv`, or `.jsonl` / `.ndjson`. */
export function formatOf(fileName: string): PayoutFileFormat | undefined {
  const lower = fileName.toLowerCase();
  if (lower.endsWith('.csv')) return 'csv';
  if (lower.endsWith('.jsonl') || lower.endsWith('.ndjson')) return 'jsonl';
  return undefined;
}

/** Columns a CSV may have; `metadata` is a JSON object in one cell, `metadata.<key>` columns also work. */
const CSV_FIELDS = new Set([
  'version',
  'platform_merchant_id',
  'currency',
  'withdrawal_reference',
  'amount',
  'account_number',
  'account_code',
  'expected_name',
  'user_reference',
  'metadata',
]);

interface CsvRecord {
  readonly line: number;
  readonly cells: string[];
}

/**
 * Splits CSV text (RFC 4180: quoted cells may hold commas, quotes doubled, and line breaks) into
 * records, keeping the line each starts on. Blank lines are skipped.
 */
export function splitCsv(text: string): { records: CsvRecord[]; error?: { line: number; message: string } } {
  const records: CsvRecord[] = [];
  let cells: string[] = [];
  let cell = '';
  let quoted = false;
  let line = 1;
  let recordLine = 1;
  let cellStarted = false;
  const endRecord = (): void => {
    cells.push(cell);
    if (!(cells.length === 1 && cells[0]?.trim() === '')) records.push({ line: recordLine, cells });
    cells = [];
    cell = '';
    cellStarted = false;
  };
  const src = text.replace(/^\uFEFF/, '');
  for (let i = 0; i < src.length; i += 1) {
    const ch = src[i] as string;
    if (quoted) {
      if (ch === '"') {
        if (src[i + 1] === '"') {
          cell += '"';
          i += 1;
        } else quoted = false;
      } else {
        if (ch === '\n') line += 1;
        cell += ch;
      }
      continue;
    }
    if (ch === '"' && !cellStarted) {
      quoted = true;
      cellStarted = true;
    } else if (ch === ',') {
      cells.push(cell);
      cell = '';
      cellStarted = false;
    } else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && src[i + 1] === '\n') i += 1;
      endRecord();
      line += 1;
      recordLine = line;
    } else {
      cell += ch;
      cellStarted = true;
    }
  }
  if (quoted) return { records, error: { line: recordLine, message: 'unterminated quoted cell' } };
  if (cell !== '' || cells.length > 0) endRecord();
  return { records };
}

/**
 * The amount and account code checks the schema runs in its transform, field by field. The schema
 * skips its transform when another field is bad; running them here too reports every error of a
 * row at once, each with its field.
 */
function domainFieldErrors(value: unknown): Array<{ field: string; message: string }> {
  const v = (value ?? {}) as Record<string, unknown>;
  const out: Array<{ field: string; message: string }> = [];
  if (typeof v.amount === 'string' && typeof v.currency === 'string' && /^[A-Z]{3}$/.test(v.currency.trim())) {
    try {
      parseAmount(v.amount.trim(), v.currency.trim());
    } catch (error) {
      out.push({ field: 'amount', message: (error as Error).message });
    }
  }
  if (typeof v.account_code === 'string' && v.account_code.trim() !== '') {
    try {
      parseAccountCode(v.account_code.trim());
    } catch (error) {
      out.push({ field: 'account_code', message: (error as Error).message });
    }
  }
  return out;
}

/** Validates one row with the queue's schema; errors name the field, never echo an account number. */
function schemaErrors(row: number, line: number, value: unknown): { request?: PayoutRequest; errors: RowError[] } {
  const result = payoutRequestSchema.safeParse(value);
  if (result.success) return { request: result.data, errors: [] };
  const errors: RowError[] = result.error.issues
    .filter((issue) => issue.path.length > 0)
    .map((issue) => ({ row, line, field: issue.path.join('.'), message: issue.message }));
  for (const extra of domainFieldErrors(value)) {
    if (!errors.some((e) => e.field === extra.field)) errors.push({ row, line, ...extra });
  }
  if (errors.length === 0) {
    // A row-level issue the field checks above did not explain.
    errors.push(...result.error.issues.map((issue) => ({ row, line, message: issue.message })));
  }
  errors.sort((a, b) => (a.field ?? '').localeCompare(b.field ?? ''));
  return { errors };
}

function csvRows(text: string): Array<{ row: number; line: number; value?: unknown; error?: string }> {
  const { records, error } = splitCsv(text);
  const out: Array<{ row: number; line: number; value?: unknown; error?: string }> = [];
  const [header, ...data] = records;
  if (!header) return error ? [{ row: 0, line: error.line, error: error.message }] : [];
  const columns = header.cells.map((c) => c.trim());
  const unknown = columns.filter((c) => !CSV_FIELDS.has(c) && !c.startsWith('metadata.'));
  if (unknown.length > 0) {
    return [{ row: 0, line: header.line, error: `unknown column(s) in the header: ${unknown.join(', ')}` }];
  }
  data.forEach((record, index) => {
    const row = index + 1;
    if (record.cells.length !== columns.length) {
      out.push({ row, line: record.line, error: `has ${record.cells.length} cells, the header has ${columns.length}` });
      return;
    }
    const value: Record<string, unknown> = { version: 1 };
    const metadata: Record<string, string> = {};
    let bad: string | undefined;
    columns.forEach((column, i) => {
      const cell = record.cells[i] as string;
      if (cell.trim() === '') return; // an empty cell is an absent optional field
      if (column === 'version') value.version = Number(cell);
      else if (column === 'metadata') {
        try {
          Object.assign(metadata, JSON.parse(cell) as Record<string, string>);
        } catch {
          bad = 'metadata: must be a JSON object';
        }
      } else if (column.startsWith('metadata.')) metadata[column.slice('metadata.'.length)] = cell;
      else value[column] = cell;
    });
    if (bad) {
      out.push({ row, line: record.line, error: bad });
      return;
    }
    if (Object.keys(metadata).length > 0) value.metadata = metadata;
    out.push({ row, line: record.line, value });
  });
  if (error) out.push({ row: data.length + 1, line: error.line, error: error.message });
  return out;
}

function jsonlRows(text: string): Array<{ row: number; line: number; value?: unknown; error?: string }> {
  const out: Array<{ row: number; line: number; value?: unknown; error?: string }> = [];
  let row = 0;
  text
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/)
    .forEach((content, index) => {
      if (content.trim() === '') return;
      row += 1;
      try {
        const value = JSON.parse(content) as unknown;
        if (value === null || typeof value !== 'object' || Array.isArray(value)) {
          out.push({ row, line: index + 1, error: 'must be a JSON object' });
          return;
        }
        // `version` may be left out of a file; the message always carries it.
        out.push({ row, line: index + 1, value: { version: 1, ...(value as Record<string, unknown>) } });
      } catch {
        out.push({ row, line: index + 1, error: 'is not valid JSON' });
      }
    });
  return out;
}

/**
 * Parses a payout file and validates every row with the queue's own schema (payoutRequestSchema),
 * collecting ALL errors with row and line numbers, so nothing is sent until the whole file is good.
 * A withdrawal_reference repeated for the same merchant and currency is an error too: the second row
 * would silently be skipped as "already enqueued".
 */
export function parsePayoutFile(text: string, format: PayoutFileFormat): ParsedPayoutFile {
  const rows = format === 'csv' ? csvRows(text) : jsonlRows(text);
  const requests: PayoutRequest[] = [];
  const errors: RowError[] = [];
  const seen = new Map<string, number>();
  let dataRows = 0;
  for (const r of rows) {
    if (r.row > 0) dataRows = Math.max(dataRows, r.row);
    if (r.error !== undefined) {
      errors.push({ row: r.row, line: r.line, message: r.error });
      continue;
    }
    const checked = schemaErrors(r.row, r.line, r.value);
    errors.push(...checked.errors);
    if (!checked.request) continue;
    const id = checked.request;
    const key = JSON.stringify([id.platform_merchant_id, id.currency, id.withdrawal_reference]);
    const first = seen.get(key);
    if (first !== undefined) {
      errors.push({ row: r.row, line: r.line, field: 'withdrawal_reference', message: `repeats row ${first} (same merchant, currency and reference)` });
      continue;
    }
    seen.set(key, r.row);
    requests.push(checked.request);
  }
  if (dataRows === 0 && errors.length === 0) errors.push({ row: 0, line: 1, message: 'the file has no payout rows' });
  return { requests, errors, rows: dataRows };
}

/** One line per error, e.g. `row 3 (line 4) amount: must have at most 2 decimals`. */
export function formatRowError(error: RowError): string {
  const where = error.row === 0 ? `line ${error.line}` : `row ${error.row} (line ${error.line})`;
  return `${where}${error.field ? ` ${error.field}` : ''}: ${error.message}`;
}
