import { describe, expect, it } from 'vitest';
import {
  InvalidAccountCodeError,
  MAX_NESTED_JSON_DOCUMENTS,
  MAX_NESTED_JSON_LENGTH,
  MAX_NESTED_JSON_LEVELS,
  MOBILE_MONEY_PROVIDERS,
  isAccountMemberName,
  isMobileMoney,
  maskAccount,
  maskAccountsInJsonText,
  parseAccountCode,
} from '@shared/domain/account';

describe('parseAccountCode', () => {
  it('keeps digit bank codes with their leading zeros', () => {
    expect(parseAccountCode('057')).toBe('057');
    expect(parseAccountCode('000013')).toBe('000013');
    expect(isMobileMoney(parseAccountCode('057'))).toBe(false);
  });

  it('accepts the documented providers, case-insensitively, in their documented spelling', () => {
    expect(MOBILE_MONEY_PROVIDERS).toEqual(['Momo', 'MPESA', 'MTN', 'VOD']);
    expect(parseAccountCode('Momo')).toBe('Momo');
    expect(parseAccountCode('momo')).toBe('Momo');
    expect(parseAccountCode('mpesa')).toBe('MPESA');
    expect(isMobileMoney(parseAccountCode('MTN'))).toBe(true);
  });

  it.each(['', '5', '05a', ' 057', 'AIRTEL', '12345678901', 'MTN '])('rejects %j', (code) => {
    expect(() => parseAccountCode(code)).toThrow(InvalidAccountCodeError);
  });
});

describe('maskAccount', () => {
  it('shows only the last 4 characters and keeps the length', () => {
    expect(maskAccount('0241234567')).toBe('******4567');
    expect(maskAccount('+233241234567')).toBe('*********4567');
    expect(maskAccount('12345')).toBe('*2345');
  });

  it('masks short values entirely', () => {
    expect(maskAccount('1234')).toBe('****');
    expect(maskAccount('12')).toBe('**');
    expect(maskAccount('')).toBe('');
  });

  it('never contains the full number', () => {
    for (const account of ['0123456789', '5555555555555555', '233200000001']) {
      expect(maskAccount(account)).not.toContain(account.slice(0, -4));
    }
  });
});

describe('maskAccountsInJsonText', () => {
  it('masks the reviewer\'s three spellings: a JSON number, an escaped name and an array', () => {
    const body = '{"a":{"account_number":1234567890},"b":{"account\\u005fnumber":"9876543210"},"c":{"accountNumber":["5555666677"]}}';
    const masked = maskAccountsInJsonText(body);
    expect(masked).toBe('{"a":{"account_number":"******7890"},"b":{"account\\u005fnumber":"******3210"},"c":{"accountNumber":["******6677"]}}');
    for (const full of ['1234567890', '9876543210', '5555666677']) expect(masked).not.toContain(full);
  });

  it('masks phone_number and phoneNumber, string or number', () => {
    expect(JSON.parse(maskAccountsInJsonText('{"phone_number":"+233244123456","phoneNumber":233244987654}'))).toEqual({
      phone_number: '*********3456',
      phoneNumber: '********7654',
    });
  });

  it('masks every string and number under an account member, in nested objects and arrays', () => {
    const body = JSON.stringify({
      data: {
        beneficiary_account: { number: '0123456789', bank: { sort: 12345678 } },
        msisdn: [['0244111222', 233244333444], { more: '0244555666' }],
        ACCOUNT_NO: [true, null, 1020304050],
      },
    });
    expect(JSON.parse(maskAccountsInJsonText(body))).toEqual({
      data: {
        beneficiary_account: { number: '******6789', bank: { sort: '****5678' } },
        msisdn: [['******1222', '********3444'], { more: '******5666' }],
        ACCOUNT_NO: [true, null, '******4050'],
      },
    });
  });

  it('masks a number by its digits as written, past the precision of a parsed number', () => {
    expect(maskAccountsInJsonText('{"card_number":5555666677778888999}')).toBe('{"card_number":"***************8999"}');
  });

  it('leaves amounts, references, dates, codes and names untouched, as written', () => {
    const body = '{ "amount": 100.50, "fee": 2500, "withdrawal_reference": "WD-2024-0001234567", "created_at": "2026-11-23T10:00:00.000Z",\n  "timestamp": 1732356000000, "account_code": "057", "account_name": "Ama Owusu", "order_id": 12345678901 }';
    expect(maskAccountsInJsonText(body)).toBe(body);
  });

  it('masks each of two members with the same name', () => {
    expect(maskAccountsInJsonText('{"phone":"0244000001","phone":"0244000002"}')).toBe('{"phone":"******0001","phone":"******0002"}');
  });

  it('masks every run of 6 digits or more of a body that is not JSON', () => {
    const body = '{"account_number":1234567890, "phone": +233244123456, ref 12345';
    expect(maskAccountsInJsonText(body)).toBe('{"account_number":******7890, "phone": *********3456, ref 12345');
    expect(maskAccountsInJsonText('')).toBe('');
    // JSON, but a bare value: no member says what it is, so masked by shape too.
    expect(maskAccountsInJsonText('"0244123456"')).toBe('"******3456"');
    expect(maskAccountsInJsonText('1234567890')).toBe('******7890');
  });

  it('does not throw on a body nested 10,000 levels deep, and masks it', () => {
    const deepArray = `${'['.repeat(10_000)}"0244123456"${']'.repeat(10_000)}`;
    const deepObject = `${'{"msisdn":'.repeat(10_000)}"0244123456"${'}'.repeat(10_000)}`;
    const unbalanced = `${'{"account_number":['.repeat(10_000)}1234567890`;
    const [array, object, cut] = [deepArray, deepObject, unbalanced].map((body) => {
      let masked = '';
      expect(() => (masked = maskAccountsInJsonText(body))).not.toThrow();
      return masked;
    });
    expect(array).toBe(deepArray);
    expect(object).not.toContain('0244123456');
    expect(object).toContain('"******3456"');
    expect(cut).not.toContain('1234567890');
  });
});

describe('maskAccountsInJsonText: JSON documents carried in string values', () => {
  /** The text of `doc`, as a provider or a queue puts a document into a string of another. */
  const wrapped = (doc: unknown): string => JSON.stringify(doc);

  it('masks a document nested once, and rewrites only that string', () => {
    const body = '{"payload":"{\\"account_number\\":\\"0123456789\\",\\"amount\\":100.50}", "amount" : 100.50}';
    expect(maskAccountsInJsonText(body)).toBe('{"payload":"{\\"account_number\\":\\"******6789\\",\\"amount\\":100.50}", "amount" : 100.50}');
  });

  it('masks a document nested twice', () => {
    const body = wrapped({ event: 'payout.completed', data: wrapped({ queue: 'payouts', message: wrapped({ beneficiary: { msisdn: '0244123456' }, ref: 'WD-1' }) }) });
    const masked = maskAccountsInJsonText(body);
    expect(masked).not.toContain('0244123456');
    const data = JSON.parse((JSON.parse(masked) as { data: string }).data) as { queue: string; message: string };
    expect(data.queue).toBe('payouts');
    expect(JSON.parse(data.message)).toEqual({ beneficiary: { msisdn: '******3456' }, ref: 'WD-1' });
  });

  it(`reads ${MAX_NESTED_JSON_LEVELS} levels deep, and hides a document deeper than that whole rather than show it unread`, () => {
    /** The body (level 0) carrying `third` as the document of level 3. */
    const carrying = (third: unknown): string => wrapped({ level1: wrapped({ level2: wrapped({ level3: wrapped(third) }) }) });
    const levelThree = (body: string): unknown => {
      const level1 = JSON.parse((JSON.parse(body) as { level1: string }).level1) as { level2: string };
      const level2 = JSON.parse(level1.level2) as { level3: string };
      return JSON.parse(level2.level3);
    };
    const fourth = wrapped({ account_number: '0123456789', note: 'level 4' });
    const masked = maskAccountsInJsonText(carrying({ phone: '0244123456', inner: fourth }));
    expect(masked).not.toContain('0123456789');
    expect(masked).not.toContain('0244123456');
    expect(levelThree(masked)).toEqual({ phone: '******3456', inner: '*'.repeat(fourth.length) });
    // Not read means not known to be harmless: a fourth level with no number is hidden too.
    const harmlessFourth = wrapped({ note: 'no number' });
    expect(levelThree(maskAccountsInJsonText(carrying({ inner: harmlessFourth })))).toEqual({ inner: '*'.repeat(harmlessFourth.length) });
    // Up to the third level, a document with nothing to mask is shown as it came, byte for byte.
    const harmless = carrying({ note: 'no number', inner: 'not json' });
    expect(maskAccountsInJsonText(harmless)).toBe(harmless);
  });

  it('hides whole a string shaped like a document that is longer than it reads, and reads one just under', () => {
    const filler = 'x'.repeat(MAX_NESTED_JSON_LENGTH);
    const long = wrapped({ account_number: '0123456789', filler });
    expect(long.length).toBeGreaterThan(MAX_NESTED_JSON_LENGTH);
    expect(JSON.parse(maskAccountsInJsonText(wrapped({ payload: long, ref: 'WD-1' })))).toEqual({ payload: '*'.repeat(long.length), ref: 'WD-1' });
    const fits = wrapped({ account_number: '0123456789', filler: filler.slice(0, MAX_NESTED_JSON_LENGTH - 64) });
    expect(JSON.parse((JSON.parse(maskAccountsInJsonText(wrapped({ payload: fits }))) as { payload: string }).payload)).toMatchObject({ account_number: '******6789' });
  });

  it(`reads the first ${MAX_NESTED_JSON_DOCUMENTS} strings shaped like a document and hides the ones after them`, () => {
    const documents = Array.from({ length: MAX_NESTED_JSON_DOCUMENTS + 1 }, (_, i) => wrapped({ phone: `0244${String(i).padStart(6, '0')}` }));
    // Tries that are not JSON count too: each costs a thrown SyntaxError.
    const body = wrapped({ tries: ['{x}', '[y'], documents });
    const masked = JSON.parse(maskAccountsInJsonText(body)) as { tries: string[]; documents: string[] };
    expect(masked.tries).toEqual(['{x}', '[y']);
    expect(JSON.parse(masked.documents[MAX_NESTED_JSON_DOCUMENTS - 2] as string)).toEqual({ phone: `******${String(MAX_NESTED_JSON_DOCUMENTS - 2).padStart(4, '0')}` });
    expect(masked.documents.slice(-2)).toEqual(documents.slice(-2).map((d) => '*'.repeat(d.length)));
    for (const i of [MAX_NESTED_JSON_DOCUMENTS - 1, MAX_NESTED_JSON_DOCUMENTS]) expect(maskAccountsInJsonText(body)).not.toContain(`0244${String(i).padStart(6, '0')}`);
  });

  it('leaves strings without a document in them as they are, digits and all', () => {
    const body = wrapped({
      cut: '[1, 2',
      text: 'paid to 0123456789',
      scalar: wrapped('0123456789'),
      number: '1234567890',
      braces: '{} and []',
    });
    expect(maskAccountsInJsonText(body)).toBe(body);
  });

  it('masks documents in arrays inside strings, and strings inside arrays', () => {
    const body = wrapped({ items: wrapped([{ phone: '0244123456' }, { phone: '0244999888', amount: 5 }]), list: [wrapped({ iban: 'GB33BUKB20201555555555' }), 'plain 0123456789'] });
    const masked = JSON.parse(maskAccountsInJsonText(body)) as { items: string; list: [string, string] };
    expect(JSON.parse(masked.items)).toEqual([{ phone: '******3456' }, { phone: '******9888', amount: 5 }]);
    expect(JSON.parse(masked.list[0])).toEqual({ iban: '******************5555' });
    expect(masked.list[1]).toBe('plain 0123456789');
  });

  it('copies every byte outside the rewritten string, and a nested document with nothing to mask, escapes and all', () => {
    const untouched = '"{\\u0022ref\\u0022:\\u0022WD-1\\u0022,\\n \\"path\\":\\"a\\/b\\"}"';
    const body = `{ "caf\\u00e9" : "\\/x",\n  "first": ${untouched},\t"second":"[{\\"acct_no\\":1020304050}]", "amount": 1.50e2 }`;
    expect(maskAccountsInJsonText(body)).toBe(`{ "caf\\u00e9" : "\\/x",\n  "first": ${untouched},\t"second":"[{\\"acct_no\\":\\"******4050\\"}]", "amount": 1.50e2 }`);
  });

  it('reads a nested document whatever the escapes of its braces, and masks it whole under an account member', () => {
    expect(maskAccountsInJsonText('{"p":"\\u007b\\"account_number\\":\\"0123456789\\"}"}')).toBe('{"p":"{\\"account_number\\":\\"******6789\\"}"}');
    expect(maskAccountsInJsonText('{"beneficiary_account":"{\\"n\\":\\"0123456789\\"}"}')).not.toContain('0123456789');
  });
});

describe('maskAccountsInJsonText: documents the parser does not take, and JSON strings in strings', () => {
  const wrapped = (doc: unknown): string => JSON.stringify(doc);

  it('reads a string that is a JSON string as one more level: a double-encoded document is masked', () => {
    const body = '{"payload":"\\"{\\\\\\"account_number\\\\\\":\\\\\\"0244123456\\\\\\"}\\""}';
    expect(body).toBe(wrapped({ payload: wrapped(wrapped({ account_number: '0244123456' })) }));
    expect(maskAccountsInJsonText(body)).toBe('{"payload":"\\"{\\\\\\"account_number\\\\\\":\\\\\\"******3456\\\\\\"}\\""}');
    // The white space around the inner string is kept; nothing masked in it, it is not written again.
    const spaced = wrapped({ payload: ` ${wrapped(wrapped({ msisdn: '0244123456' }))}\n` });
    expect(JSON.parse(maskAccountsInJsonText(spaced))).toEqual({ payload: ` ${wrapped(wrapped({ msisdn: '******3456' }))}\n` });
    const harmless = wrapped({ payload: wrapped(wrapped({ ref: 'WD-1' })), scalar: wrapped('0123456789') });
    expect(maskAccountsInJsonText(harmless)).toBe(harmless);
  });

  it('masks every run of 6 digits or more of a string shaped like a document that is not JSON', () => {
    expect(maskAccountsInJsonText('{"payload":"{\\"account_number\\":\\"0244123456\\",}"}')).toBe('{"payload":"{\\"account_number\\":\\"******3456\\",}"}');
    expect(maskAccountsInJsonText('{"payload":"{\\"account_number\\":\\"0244123456\\"} x"}')).toBe('{"payload":"{\\"account_number\\":\\"******3456\\"} x"}');
    expect(JSON.parse(maskAccountsInJsonText(wrapped({ note: '{not json, call 0244123456}', cut: '[{"iban":"GB33BUKB20201555555555"' })))).toEqual({
      note: '{not json, call ******3456}',
      cut: '[{"iban":"GB33BUKB**********5555"',
    });
  });

  it('masks the digit runs of a string with a document, or part of one, after other text; a string without {, }, [, ] or " stays', () => {
    const body = wrapped({
      error: 'upstream refused: {"account_number":"0244123456","amount":100}',
      tail: 'cut: _number":"0244123456"}',
      quoted: 'wallet "+233244123456"',
      text: 'order 12345678 paid',
      reference: 'WD-2024-0001234567',
    });
    expect(JSON.parse(maskAccountsInJsonText(body))).toEqual({
      error: 'upstream refused: {"account_number":"******3456","amount":100}',
      tail: 'cut: _number":"******3456"}',
      quoted: 'wallet "*********3456"',
      text: 'order 12345678 paid',
      reference: 'WD-2024-0001234567',
    });
  });

  it(`counts a JSON string in a string as a level: a double-encoded document past level ${MAX_NESTED_JSON_LEVELS} is shown as * whole`, () => {
    // Level 1 is a JSON string, level 2 the document it carries, level 3 a JSON string again: its document is level 4.
    const fourth = wrapped({ account_number: '0123456789' });
    const body = wrapped({ payload: wrapped(wrapped({ inner: wrapped(fourth), phone: '0244123456' })) });
    const masked = maskAccountsInJsonText(body);
    expect(masked).not.toContain('0123456789');
    expect(masked).not.toContain('0244123456');
    const second = JSON.parse(JSON.parse((JSON.parse(masked) as { payload: string }).payload) as string) as { inner: string; phone: string };
    expect(second).toEqual({ inner: wrapped('*'.repeat(fourth.length)), phone: '******3456' });
  });

  it('reads a member name as it reads a string value: a name carrying a document shows no number, a plain name stays', () => {
    const body = '{"{\\"account_number\\":\\"0244123456\\"}":1,"note {\\"msisdn\\":\\"0244987654\\"}":2,"order 12345678":3}';
    expect(maskAccountsInJsonText(body)).toBe('{"{\\"account_number\\":\\"******3456\\"}":1,"note {\\"msisdn\\":\\"******7654\\"}":2,"order 12345678":3}');
  });

  it('stays linear on a body of 100,000 strings that open a document or a JSON string: the bounds show the output', () => {
    const opens = wrapped(Array.from({ length: 100_000 }, () => '{x'));
    expect(maskAccountsInJsonText(opens)).toBe(opens);
    const strings = Array.from({ length: 100_000 }, () => wrapped('{}'));
    const masked = JSON.parse(maskAccountsInJsonText(wrapped(strings))) as string[];
    // Each is two documents parsed (the JSON string, then the {} it carries) out of MAX_NESTED_JSON_DOCUMENTS.
    // Counted, not compared element by element: a failing diff of 100,000 strings takes minutes to print.
    const read = MAX_NESTED_JSON_DOCUMENTS / 2;
    const hidden = '*'.repeat(wrapped('{}').length);
    expect(masked.length).toBe(strings.length);
    expect(masked.findIndex((s) => s !== wrapped('{}'))).toBe(read);
    expect(masked.slice(read).filter((s) => s !== hidden)).toEqual([]);
  });
});

describe('isAccountMemberName', () => {
  it.each([
    'account_number', 'accountNumber', 'Account-Number', 'account no', 'account_no', 'accountNo', 'acct_no', 'acc_no', 'account_numbers',
    'iban', 'IBAN', 'nuban', 'phone', 'phone_number', 'phoneNumber', 'telephone', 'customer_phone', 'msisdn', 'mobile', 'mobile_number',
    'beneficiary_account', 'beneficiaryAccountNumber', 'bank_account', 'bankAccountNumber', 'virtual_account_number', 'card_number', 'pan', 'wallet_number',
  ])('%s is an account member', (name) => {
    expect(isAccountMemberName(name)).toBe(true);
  });

  it.each(['account', 'account_code', 'account_name', 'accountMasked', 'amount', 'company', 'withdrawal_reference', 'created_at', 'mobile_money_provider', 'phone_verified'])(
    '%s is not',
    (name) => {
      expect(isAccountMemberName(name)).toBe(false);
    },
  );
});
