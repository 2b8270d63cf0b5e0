import { describe, expect, it } from 'vitest';
import { providerAnswerOf, verificationRefusal } from '@shared/app/process-payout';
import { ProviderAmbiguousError, ProviderRejectedError, ProviderUnavailableError } from '@shared/providers/provider-errors';

/** What SQS accepts in a message attribute value (its documented character set). */
const SQS_ATTRIBUTE_TEXT = /^[\t\n\r\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]*$/u;

describe('providerAnswerOf: the reason stored on the payout and on its DLQ message', () => {
  it('replaces control characters, terminal escapes and lone surrogates with "?", so SQS accepts it as an attribute value', () => {
    const words = 'bad\u0001 state \u001b[31mred\u001b[0m \uD800 tail\r\u007f\u0085\uFFFF';
    const answer = providerAnswerOf(new ProviderAmbiguousError('payout', 'HTTP 502', { httpStatus: 502, providerMessage: words }));
    expect(answer).toBe('HTTP 502: "bad? state ?[31mred?[0m ? tail????"');
    expect(SQS_ATTRIBUTE_TEXT.test(answer)).toBe(true);
  });

  it('keeps tab, newline and well-formed text outside the BMP; a surrogate pair cut by the length bound is replaced', () => {
    const answer = providerAnswerOf(new ProviderAmbiguousError('payout', 'HTTP 500', { httpStatus: 500, providerMessage: 'a\tb\nc \u{1F600} Ça' }));
    expect(answer).toBe('HTTP 500: "a\tb\nc \u{1F600} Ça"');
    // redact bounds the words to 300 characters: the cut can fall between the halves of a pair.
    const cut = providerAnswerOf(new ProviderAmbiguousError('payout', 'HTTP 500', { httpStatus: 500, providerMessage: `${'x'.repeat(299)}\u{1F600}` }));
    expect(SQS_ATTRIBUTE_TEXT.test(cut)).toBe(true);
    expect(cut.endsWith('x?…"')).toBe(true);
  });

  it('makes a network error code inert too', () => {
    expect(providerAnswerOf(new ProviderUnavailableError('payout', 'down', { code: 'E\u0000X' }))).toBe('the provider could not be reached (E?X)');
  });

  it('makes the words of a refused account verification inert and bounded too (the REJECTED payout keeps them)', () => {
    const reason = verificationRefusal(new ProviderRejectedError('verifyAccount', 'refused', { duplicateReference: false, httpStatus: 400, providerMessage: `account not found\u001b[2J\u0007 ${'y'.repeat(400)}` }));
    expect(reason.startsWith('account verification refused: account not found?[2J? ')).toBe(true);
    expect(SQS_ATTRIBUTE_TEXT.test(reason)).toBe(true);
    expect(reason.length).toBeLessThan(400);
  });
});
