/** A source of uniformly distributed numbers in [0, 1). */
export type Random = () => number;

/**
 * mulberry32: a tiny 32-bit PRNG. The simulator draws every random decision from seeded streams
 * (outcome probabilities and identifiers from one, each kind of fault of each operation from its
 * own: see FaultBook), so a chaotic run replays exactly when the same requests arrive in the same order.
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

/**
 * The seed of a named stream derived from `seed` (FNV-1a of the name, mixed with the seed): separate
 * streams for separate decisions, so how often one is drawn never shifts what another draws.
 */
export function streamSeed(seed: number, name: string): number {
  let hash = 0x811c9dc5 ^ (seed >>> 0);
  for (let i = 0; i < name.length; i += 1) {
    hash ^= name.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
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
