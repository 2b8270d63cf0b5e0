import { describe, expect, it } from 'vitest';
import { checkName, nameSimilarity, nameTokens, normalizeName } from '@shared/domain/name-policy';

describe('name policy', () => {
  it('normalizes case, accents, punctuation and token order', () => {
    expect(normalizeName('  MENSAH,  Kwámé-Ëfó ')).toBe('efo kwame mensah');
    expect(nameTokens("O'Neil   Adé")).toEqual(['ade', 'neil', 'o']);
    expect(normalizeName('...')).toBe('');
  });

  it.each([
    ['Kwame Mensah', 'MENSAH KWAME'],
    ['Adébáyọ̀ Ọlá', 'Adebayo Ola'],
    ['Kwame  Mensah', 'kwame-mensah'],
    ['Ama Serwaa Owusu', 'Ama Owusu'],
    ['Chukwuemeka Obi', 'Chukwuemeka Obi.'],
    ['Chukwuemeka Obi', 'Chukwuemeka Obie'],
  ])('matches %s ~ %s', (expected, actual) => {
    expect(checkName(expected, actual).matches).toBe(true);
  });

  it.each([
    ['Kwame Mensah', 'Kofi Boateng'],
    ['Kwame', 'Kwame Mensah'],
    ['Kwame Mensah', 'Kwabena Tetteh'],
    ['', 'Kwame Mensah'],
  ])('rejects %s ~ %s', (expected, actual) => {
    expect(checkName(expected, actual).matches).toBe(false);
  });

  it('is symmetric and in [0, 1]', () => {
    const pairs: Array<[string, string]> = [
      ['Ama Owusu', 'Owusu Amma'],
      ['A B', 'C'],
      ['John Smith', 'Jon Smyth'],
    ];
    for (const [a, b] of pairs) {
      const s = nameSimilarity(a, b);
      expect(s).toBeGreaterThanOrEqual(0);
      expect(s).toBeLessThanOrEqual(1);
      expect(nameSimilarity(b, a)).toBeCloseTo(s, 10);
    }
  });

  it('honours the threshold', () => {
    const score = nameSimilarity('Jon Smyth', 'John Smith');
    expect(score).toBeGreaterThan(0.5);
    expect(score).toBeLessThan(1);
    expect(checkName('Jon Smyth', 'John Smith', score).matches).toBe(true);
    expect(checkName('Jon Smyth', 'John Smith', Math.min(1, score + 0.01)).matches).toBe(false);
  });
});
