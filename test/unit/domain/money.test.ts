import { describe, expect, it } from 'vitest';
import {
  CURRENCIES,
  checkAmountForm,
  InvalidAmountError,
  UnsupportedCurrencyError,
  fromMinorUnits,
  parseAmount,
  registerCurrency,
  toMinorUnits,
} from '@shared/domain/money';
import { DomainError } from '@shared/domain/errors';

describe('parseAmount', () => {
  it.each([
    ['10', 'GHS', '10.00'],
    ['10.5', 'GHS', '10.50'],
    ['10.55', 'NGN', '10.55'],
    ['0.01', 'GHS', '0.01'],
    ['0.5', 'NGN', '0.50'],
    ['123456789012345678', 'GHS', '123456789012345678.00'],
    ['250', 'UGX', '250'],
  ])('accepts %s %s as %s', (input, currency, canonical) => {
    expect(parseAmount(input, currency)).toBe(canonical);
  });

  it.each(['1e3', '-1', '+1', '0', '0.00', '00.10', '01', ' 1', '1 ', '1.', '.5', '1,000', '1.2.3', '', 'NaN', 'Infinity', '0x10', '١٠'])(
    'rejects %j',
    (input) => {
      expect(() => parseAmount(input, 'GHS')).toThrow(InvalidAmountError);
    },
  );

  it('says what is wrong with a leading zero, rather than that the digits are not a number', () => {
    expect(() => parseAmount('0010', 'GHS')).toThrow('amount "0010" has a leading zero');
    expect(() => parseAmount('00.10', 'GHS')).toThrow('has a leading zero');
    expect(() => parseAmount('1e3', 'GHS')).toThrow('is not a plain decimal number');
  });

  it('rejects more decimals than the currency has, even trailing zeros', () => {
    expect(() => parseAmount('1.001', 'GHS')).toThrow(/more than 2 decimals for GHS/);
    expect(() => parseAmount('1.000', 'GHS')).toThrow(InvalidAmountError);
    expect(() => parseAmount('1.0', 'UGX')).toThrow(InvalidAmountError);
  });

  it('rejects absurdly long integer parts', () => {
    expect(() => parseAmount('1'.repeat(19), 'GHS')).toThrow(/more than 18 integer digits/);
  });

  it('rejects unknown currencies, including lower case codes', () => {
    expect(() => parseAmount('1', 'XXX')).toThrow(UnsupportedCurrencyError);
    expect(() => parseAmount('1', 'ghs')).toThrow(UnsupportedCurrencyError);
    expect(() => parseAmount('1', 'constructor')).toThrow(UnsupportedCurrencyError);
  });

  it('throws errors that are DomainErrors with their own names', () => {
    const error = (() => {
      try {
        parseAmount('-1', 'GHS');
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(DomainError);
    expect((error as Error).name).toBe('InvalidAmountError');
  });
});

describe('checkAmountForm (an amount whose currency is not known)', () => {
  it('refuses what parseAmount refuses whatever the currency, in the same words, and takes any number of decimals', () => {
    for (const input of ['1e3', '-1', '+1', '0', '0.00', '00.10', '1.', '.5', '', 'abc', '1'.repeat(19)]) {
      expect(() => checkAmountForm(input), input).toThrow(InvalidAmountError);
      expect(() => checkAmountForm(input), input).toThrow((() => {
        try {
          parseAmount(input, 'GHS');
        } catch (error) {
          return (error as Error).message;
        }
        return 'parseAmount took it';
      })());
    }
    for (const input of ['10', '0.001', '1.123456789']) expect(() => checkAmountForm(input), input).not.toThrow();
  });
});

describe('minor units', () => {
  it('converts both ways without floating point', () => {
    expect(toMinorUnits('10', 'GHS')).toBe(1000n);
    expect(toMinorUnits('0.07', 'NGN')).toBe(7n);
    expect(toMinorUnits('123456789012345678.99', 'GHS')).toBe(12345678901234567899n);
    expect(fromMinorUnits(1n, 'GHS')).toBe('0.01');
    expect(fromMinorUnits(100n, 'GHS')).toBe('1.00');
    expect(fromMinorUnits(12345678901234567899n, 'GHS')).toBe('123456789012345678.99');
    expect(fromMinorUnits(42n, 'UGX')).toBe('42');
  });

  it('round-trips (0.1 + 0.2 is exactly 0.30)', () => {
    const sum = toMinorUnits('0.1', 'GHS') + toMinorUnits('0.2', 'GHS');
    expect(fromMinorUnits(sum, 'GHS')).toBe('0.30');
  });

  it('refuses zero and negative minor units', () => {
    expect(() => fromMinorUnits(0n, 'GHS')).toThrow(InvalidAmountError);
    expect(() => fromMinorUnits(-5n, 'GHS')).toThrow(InvalidAmountError);
  });
});

describe('registerCurrency', () => {
  it('extends the table', () => {
    registerCurrency('TZS', 2);
    expect(CURRENCIES.TZS).toEqual({ decimals: 2 });
    expect(parseAmount('5', 'TZS')).toBe('5.00');
    registerCurrency('BHD', 3);
    expect(parseAmount('1.234', 'BHD')).toBe('1.234');
  });

  it('validates code and decimals', () => {
    expect(() => registerCurrency('tz', 2)).toThrow(UnsupportedCurrencyError);
    expect(() => registerCurrency('ABC', -1)).toThrow(UnsupportedCurrencyError);
    expect(() => registerCurrency('ABC', 1.5)).toThrow(UnsupportedCurrencyError);
    expect(() => registerCurrency('ABC', 9)).toThrow(UnsupportedCurrencyError);
  });
});
