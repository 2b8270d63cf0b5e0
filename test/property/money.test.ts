import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CURRENCIES, InvalidAmountError, fromMinorUnits, parseAmount, toMinorUnits } from '@shared/domain/money';
import { fuzzSeed, runs, scaledTimeout } from './runs';

/* Money-safety rule 5: amounts are decimal strings, exact for their currency, with no floating point. */

const currencyArb = fc.constantFrom(...Object.keys(CURRENCIES));
/** Up to 18 integer digits (the parser's bound) plus the currency's decimals. */
const minorArb = (decimals: number): fc.Arbitrary<bigint> => fc.bigInt({ min: 1n, max: 10n ** BigInt(18 + decimals) - 1n });

const decimalsOf = (currency: string): number => CURRENCIES[currency]!.decimals;

/** A plain decimal string a producer may legitimately write: no leading zeros, at most `decimals` fraction digits. */
const writtenAmountArb = currencyArb.chain((currency) => {
  const decimals = decimalsOf(currency);
  const integer = fc.bigInt({ min: 0n, max: 10n ** 18n - 1n }).map(String);
  const fraction = fc
    .tuple(fc.integer({ min: 0, max: decimals }), fc.bigInt({ min: 0n, max: 10n ** BigInt(decimals) - 1n }))
    .map(([length, value]) => value.toString().padStart(decimals, '0').slice(0, length));
  return fc
    .tuple(integer, fraction)
    .filter(([i, f]) => /[1-9]/.test(i + f))
    .map(([i, f]) => ({ currency, text: f === '' ? i : `${i}.${f}`, integer: i, fraction: f }));
});

describe('money (property)', () => {
  it('minor units -> canonical amount -> minor units is the identity, and the amount re-parses to itself', () => {
    fc.assert(
      fc.property(currencyArb.chain((c) => fc.tuple(fc.constant(c), minorArb(decimalsOf(c)))), ([currency, minor]) => {
        const amount = fromMinorUnits(minor, currency);
        expect(toMinorUnits(amount, currency)).toBe(minor);
        expect(parseAmount(amount, currency)).toBe(amount);
        const decimals = decimalsOf(currency);
        const fraction = amount.split('.')[1] ?? '';
        expect(fraction.length).toBe(decimals);
      }),
      { numRuns: runs(2000), seed: fuzzSeed() },
    );
  }, scaledTimeout());

  it('any plain decimal a producer writes parses to the same value, canonically, and formatting is idempotent', () => {
    fc.assert(
      fc.property(writtenAmountArb, ({ currency, text, integer, fraction }) => {
        const decimals = decimalsOf(currency);
        const canonical = parseAmount(text, currency);
        // Exact value check in integers: no float ever involved.
        const expectedMinor = BigInt(integer + fraction.padEnd(decimals, '0'));
        expect(toMinorUnits(canonical, currency)).toBe(expectedMinor);
        expect(toMinorUnits(text, currency)).toBe(expectedMinor);
        expect(parseAmount(canonical, currency)).toBe(canonical);
        expect(fromMinorUnits(expectedMinor, currency)).toBe(canonical);
      }),
      { numRuns: runs(2000), seed: fuzzSeed() },
    );
  }, scaledTimeout());

  it('any other string is refused with InvalidAmountError, never coerced', () => {
    const plain = /^(0|[1-9][0-9]*)(\.[0-9]+)?$/;
    fc.assert(
      fc.property(currencyArb, fc.oneof(fc.string({ maxLength: 30 }), fc.stringMatching(/^[-+ 0-9.eE,_x]{0,24}$/)), (currency, text) => {
        let parsed: string | undefined;
        try {
          parsed = parseAmount(text, currency);
        } catch (error) {
          expect(error).toBeInstanceOf(InvalidAmountError);
          return;
        }
        // Accepted only when it is a plain positive decimal within the currency's precision.
        expect(text).toMatch(plain);
        expect((text.split('.')[1] ?? '').length).toBeLessThanOrEqual(decimalsOf(currency));
        expect(toMinorUnits(parsed, currency) > 0n).toBe(true);
      }),
      { numRuns: runs(3000), seed: fuzzSeed() },
    );
  }, scaledTimeout());
});
