/**
 * The beneficiary name policy: does the name the bank reports for an account match the name the
 * payout request expects? Names are normalized (case, accents, punctuation, token order), then
 * compared with a similarity score in [0, 1] against a threshold (NAME_MATCH_THRESHOLD).
 *
 * Score: the larger of
 * - the Levenshtein similarity of the two token-sorted names (1 - distance / longer length), which
 *   absorbs typos and token order ("Kwame Mensah" vs "MENSAH, Kwame" = 1);
 * - a middle-name allowance: when the shorter name has at least two tokens and each is found in the
 *   longer one (a token matches at Levenshtein similarity >= 0.85), the score is 1. A single given
 *   name never matches a full name this way, so "Kwame" does not pass for "Kwame Mensah".
 */

export const DEFAULT_NAME_MATCH_THRESHOLD = 0.85;

/** Lower-case, accents stripped (NFD), punctuation to spaces, tokens sorted and de-duplicated. */
export function nameTokens(name: string): string[] {
  const plain = name
    .normalize('NFD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
  if (plain === '') return [];
  return [...new Set(plain.split(' '))].sort();
}

export function normalizeName(name: string): string {
  return nameTokens(name).join(' ');
}

function levenshtein(a: string, b: string): number {
  if (a === b) return 0;
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row.push(Math.min((prev[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost));
    }
    prev = row;
  }
  return prev[b.length] ?? Math.max(a.length, b.length);
}

function similarity(a: string, b: string): number {
  const longest = Math.max(a.length, b.length);
  return longest === 0 ? 1 : 1 - levenshtein(a, b) / longest;
}

const TOKEN_MATCH = 0.85;

/** Similarity of two names in [0, 1]; 0 when either is empty after normalization. */
export function nameSimilarity(expected: string, actual: string): number {
  const a = nameTokens(expected);
  const b = nameTokens(actual);
  if (a.length === 0 || b.length === 0) return 0;
  const sorted = similarity(a.join(' '), b.join(' '));
  const [shorter, longer] = a.length <= b.length ? [a, b] : [b, a];
  const covered =
    shorter.length >= 2 && shorter.every((token) => longer.some((other) => similarity(token, other) >= TOKEN_MATCH));
  return covered ? 1 : sorted;
}

export interface NameCheck {
  readonly matches: boolean;
  readonly score: number;
  readonly threshold: number;
}

/** Applies the policy: a match when the similarity reaches the threshold. */
export function checkName(expected: string, actual: string, threshold = DEFAULT_NAME_MATCH_THRESHOLD): NameCheck {
  const score = nameSimilarity(expected, actual);
  return { matches: score >= threshold, score, threshold };
}
