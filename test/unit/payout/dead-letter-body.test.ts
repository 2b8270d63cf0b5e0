import { describe, expect, it } from 'vitest';
import { maskedBody } from '@shared/app/dead-letters';

describe('maskedBody (dlq show)', () => {
  it('masks account members at any depth and in any spelling, and pretty-prints a JSON object', () => {
    const body = '{"version":1,"withdrawal_reference":"WD-1","amount":"100.50","account_number":244123456,"beneficiary":{"phone\\u005fnumber":"0244987654"}}';
    const shown = maskedBody(body);
    expect(JSON.parse(shown)).toEqual({
      version: 1,
      withdrawal_reference: 'WD-1',
      amount: '100.50',
      account_number: '*****3456',
      beneficiary: { phone_number: '******7654' },
    });
    expect(shown).toContain('\n  "withdrawal_reference": "WD-1"');
  });

  it('masks the digit runs of a body that is not JSON', () => {
    expect(maskedBody('{"version":1,"withdrawal_reference":"POISON","account_number":"0244123456"')).toBe(
      '{"version":1,"withdrawal_reference":"POISON","account_number":"******3456"',
    );
  });
});
