/** A source of uniformly distributed numbers in [0, 1). */
export type Random = () => number;

/**
 * mulberry32: a tiny 32-bit PRNG. The simulator draws every random decision (fault rolls,
 * outcome probabilities, identifiers) from one seeded stream, so a chaotic run replays exactly
 * when the same requests arrive in the same order.
 */
export function mulberry32(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Random lowercase hex of `length` characters drawn from `random`. */
export function randomHex(random: Random, length: number): string {
  let out = '';
  while (out.length < length) out += Math.floor(random() * 16).toString(16);
  return out;
}

/** Random decimal digits of `length` characters drawn from `random`. */
export function randomDigits(random: Random, length: number): string {
  let out = '';
  while (out.length < length) out += Math.floor(random() * 10).toString();
  return out;
}
