import { describe, expect, it } from 'vitest';
import { formatOf, formatRowError, parsePayoutFile, splitCsv } from '@cli/payout-file';

const HEADER = 'platform_merchant_id,currency,withdrawal_reference,amount,account_number,account_code,expected_name';

describe('formatOf', () => {
  it('picks the format from the extension', () => {
    expect(formatOf('a/b/payouts.CSV')).toBe('csv');
    expect(formatOf('payouts.jsonl')).toBe('jsonl');
    expect(formatOf('payouts.ndjson')).toBe('jsonl');
    expect(formatOf('payouts.json')).toBeUndefined();
  });
});

describe('splitCsv', () => {
  it('handles quotes, doubled quotes, commas and line breaks inside cells, CRLF, a BOM and blank lines', () => {
    const { records, error } = splitCsv('\uFEFFa,b\r\n"x, ""y""","multi\nline"\r\n\r\nlast,\n');
    expect(error).toBeUndefined();
    expect(records.map((r) => r.cells)).toEqual([['a', 'b'], ['x, "y"', 'multi\nline'], ['last', '']]);
    expect(records.map((r) => r.line)).toEqual([1, 2, 5]);
  });

  it('reports an unterminated quote with its line', () => {
    expect(splitCsv('a,b\n"open,1\n').error).toEqual({ line: 2, message: 'unterminated quoted cell' });
  });
});

describe('parsePayoutFile (CSV)', () => {
  it('returns validated, canonical requests for a good file', () => {
    const csv = `${HEADER},metadata.batch\nm1,GHS,WD-1,10,0244123456,MTN,Kwame Mensah,b7\nm1,NGN,WD-2,1.5,0123456789,057,,\n`;
    const parsed = parsePayoutFile(csv, 'csv');
    expect(parsed.errors).toEqual([]);
    expect(parsed.rows).toBe(2);
    expect(parsed.requests[0]).toMatchObject({ version: 1, amount: '10.00', account_code: 'MTN', expected_name: 'Kwame Mensah', metadata: { batch: 'b7' } });
    expect(parsed.requests[1]).toMatchObject({ amount: '1.50', account_code: '057' });
    expect(parsed.requests[1]).not.toHaveProperty('expected_name');
  });

  it('reports every error of every row, with row and line numbers and field names, and keeps no request of a bad row', () => {
    const csv = [
      HEADER,
      'm1,GHS,WD-1,10,0244123456,MTN,',
      'm1,GHS,WD-2,10.001,12,XYZ,',
      'm1,ghs,WD-3,-5,0244123456,MTN,',
      'm1,GHS,WD-4,5',
      'm1,GHS,WD-1,7,0244123456,MTN,',
    ].join('\n');
    const parsed = parsePayoutFile(csv, 'csv');
    const summary = parsed.errors.map((e) => `${e.row}:${e.line}:${e.field ?? ''}`);
    expect(summary).toEqual(['2:3:account_code', '2:3:account_number', '2:3:amount', '3:4:currency', '4:5:', '5:6:withdrawal_reference']);
    expect(parsed.requests.map((r) => r.withdrawal_reference)).toEqual(['WD-1']);
    expect(parsed.rows).toBe(5);
    expect(formatRowError(parsed.errors[4]!)).toBe('row 4 (line 5): has 4 cells, the header has 7');
    expect(formatRowError(parsed.errors[5]!)).toBe('row 5 (line 6) withdrawal_reference: repeats row 1 (same merchant, currency and reference)');
  });

  it('never echoes an account number in an error', () => {
    const parsed = parsePayoutFile(`${HEADER}\nm1,GHS,WD-1,10,12345678901234567890123456789012345678,MTN,\n`, 'csv');
    expect(parsed.errors).toHaveLength(1);
    expect(formatRowError(parsed.errors[0]!)).not.toContain('1234567890');
  });

  it('rejects unknown columns and an empty file', () => {
    expect(parsePayoutFile('amount,iban\n1,2\n', 'csv').errors[0]?.message).toBe('unknown column(s) in the header: iban');
    expect(parsePayoutFile(`${HEADER}\n`, 'csv').errors[0]?.message).toBe('the file has no payout rows');
    expect(parsePayoutFile('', 'csv').errors[0]?.message).toBe('the file has no payout rows');
  });
});

describe('parsePayoutFile (JSONL)', () => {
  it('validates each line and numbers rows by non-blank lines', () => {
    const lines = [
      JSON.stringify({ platform_merchant_id: 'm1', currency: 'GHS', withdrawal_reference: 'A', amount: '3', account_number: '0244123456', account_code: 'MTN' }),
      '',
      '{not json',
      '[1,2]',
      JSON.stringify({ platform_merchant_id: 'm1', currency: 'GHS', withdrawal_reference: 'B', amount: '3', account_number: '0244123456', account_code: 'MTN', iban: 'x' }),
    ].join('\n');
    const parsed = parsePayoutFile(lines, 'jsonl');
    expect(parsed.requests.map((r) => r.withdrawal_reference)).toEqual(['A']);
    expect(parsed.errors.map((e) => `${e.row}:${e.line}:${e.message}`)).toEqual([
      '2:3:is not valid JSON',
      '3:4:must be a JSON object',
      expect.stringMatching(/^4:5:.*iban/),
    ]);
  });
});
