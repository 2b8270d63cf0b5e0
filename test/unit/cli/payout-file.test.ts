import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readText } from '@cli/io';
import { CliError, EXIT } from '@cli/output';
import { checkPayoutFile, formatOf, formatRowError, MAX_KEPT_ERRORS, payoutFileSize, payoutRequests, type PayoutFileFormat } from '@cli/payout-file';
import type { PayoutRequest } from '@shared/messages/payout-request';

const HEADER = 'platform_merchant_id,currency,withdrawal_reference,amount,account_number,account_code,expected_name';
const dir = mkdtempSync(join(tmpdir(), 'payrelay-payout-file-'));
let n = 0;

/** Writes `text` to a fresh file of the format and checks it; also reads the requests when it is good. */
async function check(text: string, format: PayoutFileFormat = 'csv', merchant?: string) {
  const path = join(dir, `f${(n += 1)}.${format}`);
  writeFileSync(path, text);
  const result = await checkPayoutFile(path, format, merchant === undefined ? {} : { merchant });
  const requests: PayoutRequest[] = [];
  if (result.errorCount === 0) for await (const r of payoutRequests(path, format)) requests.push(r);
  return { ...result, requests, summary: result.errors.map((e) => `${e.row}:${e.line}:${e.field ?? ''}`) };
}

describe('formatOf', () => {
  it('picks the format from the extension', () => {
    expect(formatOf('a/b/payouts.CSV')).toBe('csv');
    expect(formatOf('payouts.jsonl')).toBe('jsonl');
    expect(formatOf('payouts.ndjson')).toBe('jsonl');
    expect(formatOf('payouts.json')).toBeUndefined();
  });
});

describe('checkPayoutFile (CSV)', () => {
  it('returns validated, canonical requests for a good file', async () => {
    const parsed = await check(`${HEADER},metadata.batch\nm1,GHS,WD-1,10,0244123456,MTN,Kwame Mensah,b7\nm1,NGN,WD-2,1.5,0123456789,057,,\n`);
    expect(parsed.errors).toEqual([]);
    expect(parsed.rows).toBe(2);
    expect(parsed.validRows).toBe(2);
    expect(parsed.requests[0]).toMatchObject({ version: 1, amount: '10.00', account_code: 'MTN', expected_name: 'Kwame Mensah', metadata: { batch: 'b7' } });
    expect(parsed.requests[1]).toMatchObject({ amount: '1.50', account_code: '057' });
    expect(parsed.requests[1]).not.toHaveProperty('expected_name');
  });

  it('takes a metadata cell only when it holds a JSON object, never dropping or spreading another value', async () => {
    const row = (reference: string, cell: string) => `m1,GHS,${reference},10,0244123456,MTN,,${cell}`;
    // CSV cells: a number, null, true, a JSON string, an array, not JSON, then an object.
    const cells = ['123', 'null', 'true', '"""abc"""', '"[""x""]"', '{bad', '"{""batch"":""b7""}"'];
    const parsed = await check(`${HEADER},metadata\n${cells.map((cell, i) => row(`WD-${i + 1}`, cell)).join('\n')}\n`);
    expect(parsed.errors.map(formatRowError)).toEqual(cells.slice(0, -1).map((_, i) => `row ${i + 1} (line ${i + 2}) metadata: must be a JSON object`));
    expect(parsed.validRows).toBe(1);
  });

  it('handles quotes, doubled quotes, commas and line breaks inside cells, CRLF, a BOM and blank lines, numbering lines as an editor does', async () => {
    const parsed = await check(
      `\uFEFF${HEADER}\r\nm1,GHS,"WD-1, ""a""",10,0244123456,MTN,"Kwame\nMensah"\r\n\r\nm1,GHS,WD-2,1.234,0244123456,MTN,\n`,
    );
    expect(parsed.summary).toEqual(['2:5:amount']);
    const good = await check(`\uFEFF${HEADER}\r\nm1,GHS,"WD-1, ""a""",10,0244123456,MTN,"Kwame\nMensah"\r\n`);
    expect(good.requests[0]).toMatchObject({ withdrawal_reference: 'WD-1, "a"', expected_name: 'Kwame\nMensah' });
  });

  it('reports every error of every row, with row and line numbers and field names, and keeps no request of a bad row', async () => {
    const csv = [
      HEADER,
      'm1,GHS,WD-1,10,0244123456,MTN,',
      'm1,GHS,WD-2,10.001,12,XYZ,',
      'm1,ghs,WD-3,-5,0244123456,MTN,',
      'm1,GHS,WD-4,5',
      'm1,GHS,WD-1,7,0244123456,MTN,',
    ].join('\n');
    const parsed = await check(csv);
    // Row 3's amount -5 is wrong whatever its currency: reported beside the currency's own error.
    expect(parsed.summary).toEqual(['2:3:account_code', '2:3:account_number', '2:3:amount', '3:4:amount', '3:4:currency', '4:5:', '5:6:withdrawal_reference']);
    expect(parsed.validRows).toBe(1);
    expect(parsed.rows).toBe(5);
    expect(formatRowError(parsed.errors[5]!)).toBe('row 4 (line 5): has 4 cells, the header has 7');
    expect(formatRowError(parsed.errors[6]!)).toBe('row 5 (line 6) withdrawal_reference: repeats row 1 (same merchant, currency and reference)');
  });

  it('files an unsupported currency under currency, not under amount', async () => {
    const parsed = await check(`${HEADER}\nm1,XYZ,WD-1,10,0244123456,MTN,\nm1,GHS,WD-2,abc,0244123456,MTN,\n`);
    expect(parsed.errors.map((e) => `${e.row} ${e.field}: ${e.message}`)).toEqual([
      '1 currency: unsupported currency "XYZ"',
      expect.stringMatching(/^2 amount: amount "abc" is not a plain decimal/),
    ]);
  });

  it('says a file without its header row, or of JSON lines, has no header, without listing the first row back', async () => {
    const noHeader = await check('local-merchant-1,GHS,EX-0001,250.00,0244123456,MTN,Kwame Mensah\n');
    expect(noHeader.errors.map(formatRowError)).toEqual([
      'line 1: the first line is not a header (it names none of the columns): a payout CSV starts with the header row platform_merchant_id,currency,withdrawal_reference,amount,account_number,account_code (then any of expected_name, user_reference, metadata)',
    ]);
    const jsonLines = await check(`${JSON.stringify({ platform_merchant_id: 'm1', currency: 'GHS', withdrawal_reference: 'A', amount: '3', account_number: '0244123456', account_code: 'MTN' })}\n`);
    expect(jsonLines.errors.map((e) => e.message)).toEqual(['the first line is not a header (it names none of the columns): a file of JSON objects, one a line, must be named .jsonl']);
    expect(JSON.stringify([noHeader.errors, jsonLines.errors])).not.toContain('0244123456');
  });

  it('reports a missing required column once, at the header, not once per row', async () => {
    const rows = Array.from({ length: 50 }, (_, i) => `m1,GHS,WD-${i},10,0244123456`).join('\n');
    const parsed = await check(`platform_merchant_id,currency,withdrawal_reference,amount,account_number\n${rows}\n`);
    expect(parsed.errors).toEqual([{ row: 0, line: 1, message: 'missing required column(s) in the header: account_code' }]);
    expect(formatRowError(parsed.errors[0]!)).toBe('line 1: missing required column(s) in the header: account_code');
  });

  it('refuses rows for another merchant than the given one, naming the field and the merchant', async () => {
    const parsed = await check(`${HEADER}\nm1,GHS,WD-1,10,0244123456,MTN,\nm2,GHS,WD-2,10,0244123456,MTN,\nm3,GHS,WD-3,10,0244123456,MTN,\nm3,GHS,WD-4,10,0244123456,MTN,\n`, 'csv', 'm1');
    expect(parsed.summary).toEqual(['2:3:platform_merchant_id', '3:4:platform_merchant_id', '4:5:platform_merchant_id']);
    expect(parsed.errors[0]?.message).toBe('"m2" is not this deployment\'s merchant (m1)');
    expect(parsed.otherMerchants).toEqual({ m2: 1, m3: 2 });
    expect(parsed.validRows).toBe(1);
  });

  it('checks the merchant and repeats on every row, one with other errors too, so one run reports every error and counts every row for another merchant', async () => {
    // The review's file: every row names m1; row 1 has a bad amount, row 2 a bad account number and an unsupported currency (and its amount, wrong whatever the currency).
    const parsed = await check(`${HEADER}\nm1,GHS,WD-1,abc,0244123456,MTN,\nm1,XYZ,WD-2,-5,12ab,MTN,\nm1,GHS,WD-3,10,0244123456,MTN,\n`, 'csv', 'local-merchant-1');
    expect(parsed.errors.map(formatRowError)).toEqual([
      'row 1 (line 2) amount: amount "abc" is not a plain decimal number (digits and at most one point)',
      'row 1 (line 2) platform_merchant_id: "m1" is not this deployment\'s merchant (local-merchant-1)',
      'row 2 (line 3) account_number: must be 4 to 34 digits',
      'row 2 (line 3) amount: amount "-5" is not a plain decimal number (digits and at most one point)',
      'row 2 (line 3) currency: unsupported currency "XYZ"',
      'row 2 (line 3) platform_merchant_id: "m1" is not this deployment\'s merchant (local-merchant-1)',
      'row 3 (line 4) platform_merchant_id: "m1" is not this deployment\'s merchant (local-merchant-1)',
    ]);
    expect(parsed.otherMerchants).toEqual({ m1: 3 });
    expect(parsed.validRows).toBe(0);

    // A row repeating the identity of a row with another error is a repeat too (trimmed as the schema trims);
    // a row whose identity field has an error of its own is not compared.
    const repeats = await check(`${HEADER}\nm1,GHS,WD-1,abc,0244123456,MTN,\n m1 ,GHS,WD-1 ,10,0244123456,MTN,\nm1,GHS,,10,0244123456,MTN,\nm1,GHS,,10,0244123456,MTN,\nm2,GHS,WD-1,1,12,MTN,\n`, 'csv', 'm1');
    expect(repeats.summary).toEqual(['1:2:amount', '2:3:withdrawal_reference', '3:4:withdrawal_reference', '4:5:withdrawal_reference', '5:6:account_number', '5:6:platform_merchant_id']);
    expect(formatRowError(repeats.errors[1]!)).toBe('row 2 (line 3) withdrawal_reference: repeats row 1 (same merchant, currency and reference)');
    expect(repeats.errors[2]?.message).not.toMatch(/repeats/);
    expect(repeats.otherMerchants).toEqual({ m2: 1 });
    expect(repeats.validRows).toBe(0);
  });

  it('never echoes an account number in an error', async () => {
    const parsed = await check(`${HEADER}\nm1,GHS,WD-1,10,12345678901234567890123456789012345678,MTN,\n`);
    expect(parsed.errors).toHaveLength(1);
    expect(formatRowError(parsed.errors[0]!)).not.toContain('1234567890');
  });

  it('rejects unknown and repeated columns, an unterminated quote and an empty file', async () => {
    expect((await check(`${HEADER},iban\n`)).errors.map((e) => e.message)).toEqual(['unknown column(s) in the header: iban']);
    expect((await check(`${HEADER},amount\n`)).errors.map((e) => e.message)).toEqual(['column(s) named twice in the header: amount']);
    expect((await check(`${HEADER.replaceAll(',', ';')}\nm1;GHS;WD-1;10;0244123456;MTN;\n`)).errors.map(formatRowError)).toEqual([
      'line 1: the header is one column: a payout CSV is comma-separated, and this one looks separated by ";"; save it with commas',
    ]);
    expect((await check(`${HEADER}\nm1,GHS,"WD-1,10,0244123456,MTN,\n`)).errors.map(formatRowError)).toEqual([
      expect.stringMatching(/^line 2: unreadable CSV: .*quote/i),
    ]);
    expect((await check(`${HEADER}\n`)).errors[0]?.message).toBe('the file has no payout rows');
    expect((await check('')).errors[0]?.message).toBe('the file has no payout rows');
  });

  it('finds a repeated identity among thousands of rows, naming the first row', async () => {
    const rows = Array.from({ length: 6000 }, (_, i) => `m1,GHS,WD-${i},10,0244123456,MTN,`);
    rows.push('m1,GHS,WD-3,10,0244123456,MTN,', 'm1,NGN,WD-3,10,0244123456,MTN,');
    const parsed = await check(`${HEADER}\n${rows.join('\n')}\n`);
    expect(parsed.errors.map(formatRowError)).toEqual(['row 6001 (line 6002) withdrawal_reference: repeats row 4 (same merchant, currency and reference)']);
    expect(parsed.validRows).toBe(6001);
  });

  it('keeps the first errors of a file full of bad rows and counts the rest', async () => {
    const rows = Array.from({ length: MAX_KEPT_ERRORS + 200 }, (_, i) => `m1,GHS,WD-${i},1.234,0244123456,MTN,`).join('\n');
    const parsed = await check(`${HEADER}\n${rows}\n`);
    expect(parsed.errors).toHaveLength(MAX_KEPT_ERRORS);
    expect(parsed.errorCount).toBe(MAX_KEPT_ERRORS + 200);
  });
});

describe('checkPayoutFile (JSONL)', () => {
  it('validates each line and numbers rows by non-blank lines', async () => {
    const lines = [
      JSON.stringify({ platform_merchant_id: 'm1', currency: 'GHS', withdrawal_reference: 'A', amount: '3', account_number: '0244123456', account_code: 'MTN' }),
      '',
      '{not json',
      '[1,2]',
      JSON.stringify({ platform_merchant_id: 'm1', currency: 'GHS', withdrawal_reference: 'B', amount: '3', account_number: '0244123456', account_code: 'MTN', iban: 'x' }),
    ].join('\n');
    const parsed = await check(lines, 'jsonl');
    expect(parsed.validRows).toBe(1);
    expect(parsed.errors.map((e) => `${e.row}:${e.line}:${e.message}`)).toEqual([
      '2:3:is not valid JSON',
      '3:4:must be a JSON object',
      '4:5:not a field of a payout request',
    ]);
    expect(formatRowError(parsed.errors[2]!)).toBe('row 4 (line 5) iban: not a field of a payout request');
  });

  it('refuses a row whose metadata is over its bounds, naming the row and the key, whatever else the file holds', async () => {
    const row = (reference: string, metadata: Record<string, string>) =>
      JSON.stringify({ platform_merchant_id: 'm1', currency: 'GHS', withdrawal_reference: reference, amount: '3', account_number: '0244123456', account_code: 'MTN', metadata });
    const tooMany = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v']));
    const parsed = await check([row('A', { note: 'x'.repeat(400 * 1024) }), row('B', { note: 'x'.repeat(500) }), row('C', tooMany)].join('\n'), 'jsonl');
    expect(parsed.validRows).toBe(1);
    expect(parsed.errors.map((e) => formatRowError(e))).toEqual([
      'row 1 (line 1) metadata.note: must be at most 500 characters',
      'row 3 (line 3) metadata: must have at most 50 keys',
    ]);
  });

  it('names the missing field of a row', async () => {
    const parsed = await check(`${JSON.stringify({ platform_merchant_id: 'm1', currency: 'GHS', withdrawal_reference: 'A', account_number: '0244123456', account_code: 'MTN' })}\n`, 'jsonl');
    expect(parsed.summary).toEqual(['1:1:amount']);
  });
});

describe('a payout or secret file that cannot be read', () => {
  it('is invalid input (exit 3), named, in words rather than a system error code', () => {
    const dir = mkdtempSync(join(tmpdir(), 'payrelay-unreadable-'));
    const missing = join(dir, 'missing.csv');
    for (const read of [() => payoutFileSize(missing), () => readText(missing)]) {
      const error = (() => {
        try {
          read();
        } catch (e) {
          return e;
        }
        return undefined;
      })();
      expect(error).toBeInstanceOf(CliError);
      expect((error as CliError).message).toBe(`cannot read ${missing}: no such file`);
      expect((error as CliError).exitCode).toBe(EXIT.invalidInput);
    }
    expect(() => payoutFileSize(dir)).toThrow(`cannot read ${dir}: it is not a file`);
    expect(() => readText(dir)).toThrow(`cannot read ${dir}: it is a directory, not a file`);
  });
});

describe('payoutRequests (the send pass)', () => {
  it('reads a checked CSV, quoted line breaks and blank lines included, into the same requests as the check', async () => {
    const parsed = await check(`${HEADER}\nm1,GHS,WD-1,10,0244123456,MTN,"Kwame\nMensah"\n\nm1,GHS,WD-2,2,0244123456,MTN,\n`);
    expect(parsed.errorCount).toBe(0);
    expect(parsed.requests.map((r) => [r.withdrawal_reference, r.expected_name])).toEqual([
      ['WD-1', 'Kwame\nMensah'],
      ['WD-2', undefined],
    ]);
  });

  it.each(['csv', 'jsonl'] as const)('stops at the first row that is no longer valid (%s file changed after its check), naming the row', async (format) => {
    const path = join(dir, `changed.${format}`);
    writeFileSync(
      path,
      format === 'csv'
        ? `${HEADER}\nm1,GHS,WD-1,10,0244123456,MTN,\nm1,GHS,WD-2,10.001,0244123456,MTN,\n`
        : '{"platform_merchant_id":"m1","currency":"GHS","withdrawal_reference":"WD-1","amount":"10","account_number":"0244123456","account_code":"MTN"}\n{"currency":"GHS"}\n',
    );
    const read: string[] = [];
    const reading = (async () => {
      for await (const r of payoutRequests(path, format)) read.push(r.withdrawal_reference);
    })();
    await expect(reading).rejects.toThrow(new CliError(`${path} changed while it was being enqueued (row 2 is no longer valid); rerun the command`));
    expect(read).toEqual(['WD-1']);
  });
});

describe('docs/examples/payouts.csv (the file the docs and npm start tell a newcomer to enqueue)', () => {
  it('is valid for the local merchant and pays only accounts the simulator knows, as the docs say', async () => {
    const { SEEDED_ACCOUNTS } = await import('@simulator/index');
    const path = 'docs/examples/payouts.csv';
    expect((await checkPayoutFile(path, 'csv', { merchant: 'local-merchant-1' })).errors).toEqual([]);
    const requests: PayoutRequest[] = [];
    for await (const r of payoutRequests(path, 'csv')) requests.push(r);
    expect(requests.map((r) => r.withdrawal_reference)).toEqual(['EX-0001', 'EX-0002', 'EX-0003', 'EX-0004', 'EX-0005']);
    const seeded = (r: PayoutRequest) => SEEDED_ACCOUNTS.find((a) => a.account_number === r.account_number && a.account_code === r.account_code);
    for (const r of requests) expect(seeded(r), r.withdrawal_reference).toBeDefined();
    expect(seeded(requests[4] as PayoutRequest)?.failPayouts).toBe(true);
    expect(requests[3]?.expected_name).not.toBe(seeded(requests[3] as PayoutRequest)?.account_name);
  });
});
