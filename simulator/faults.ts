import { mulberry32, streamSeed, type Random } from './prng';

/** Every operation a fault can be attached to: the HTTP endpoints of both services and the outgoing posts. */
export const FAULT_OPERATIONS = [
  'onboardPartner',
  'resetPartnerKeys',
  'accountVerification',
  'payout',
  'getPayout',
  'collectionOrder',
  'orderNotification',
  'kycRegister',
  'kycVerify',
  'kycRequestToken',
  'kycTypes',
  'kycIndividualOrder',
  'kycBusinessOrder',
  'kycResponses',
  'kycVerificationStatus',
  'kycUserStatus',
  'kycCallback',
] as const;
export type FaultOperation = (typeof FAULT_OPERATIONS)[number];

/**
 * Faults of one operation. Rates are probabilities in [0, 1] drawn from the seeded PRNG (1 = always).
 * `times` caps how many faults (of any kind) this operation injects; after that it behaves normally,
 * which is how a test says "fail the first call only".
 */
export interface OperationFaults {
  /** Delay before the operation runs (incoming) or before each post (outgoing). */
  latencyMs?: number;
  /** Answer a 5xx before anything is committed. */
  errorRate?: number;
  /** The status used by errorRate: a 5xx or 429 (default 503). */
  errorStatus?: number;
  /** Retry-After header sent with errorRate answers: seconds ("30") or an HTTP date. */
  retryAfter?: string;
  /** Answer one of `refusals` before anything is committed. */
  refusalRate?: number;
  /** Commit (the money moves), then answer one of `refusals`: a provider that refuses after the fact. */
  refusalAfterCommitRate?: number;
  /** The raw answers of refusalRate and refusalAfterCommitRate, one picked per fault (default REFUSAL_ANSWERS). */
  refusals?: RawAnswer[];
  /** getPayout: answer "not found" for a payout GetPayout has already shown (a flapping read side). */
  flapRate?: number;
  /** getPayout: answer "not found" for a committed payout GetPayout has not shown yet (a read side lagging behind the commit). */
  lagRate?: number;
  /** Commit, then never answer: the socket is held until the client gives up (or stop()). */
  timeoutRate?: number;
  /** Commit, then destroy the connection without an answer. */
  resetRate?: number;
  /** Outgoing callbacks and notifications: post the same body twice. */
  duplicateRate?: number;
  /**
   * Outgoing callbacks and notifications: never post it. A dropped KYC callback is still listed by
   * GET /responses (the service believes it sent it): the missed delivery a catch-up recovers.
   */
  dropRate?: number;
  /** Outgoing callbacks and notifications: deliver a batch out of order (a stale post arrives last). */
  outOfOrderRate?: number;
  /** getPayout: extra delay before a payout settles. */
  slowProgressionMs?: number;
  /** getPayout: extra status checks before a payout settles. */
  slowProgressionChecks?: number;
  /** getPayout: answer the alternative words (SUCCESSFUL for COMPLETED, INITIATED for PENDING). */
  alternativeWordsRate?: number;
  /** getPayout: answer GATEWAY_ERROR for a payout that is still in progress. */
  gatewayErrorRate?: number;
  /** Reset the calling partner's keys after this many calls of the operation (once): the next call gets 401. */
  resetKeysAfterCalls?: number;
  /** Cap on injected faults for this operation. */
  times?: number;
}

/** An answer sent as is: any status, any body text (JSON, HTML, empty). */
export interface RawAnswer {
  status: number;
  body: string;
  /** Content-Type header (default application/json). */
  contentType?: string;
  /** Retry-After header (seconds or an HTTP date), e.g. on a 429 refusal. */
  retryAfter?: string;
}

/**
 * Refusals real providers send, in words and statuses payrelay cannot know in advance, plus bad
 * input: an empty body, an HTML error page, a refusal without a message.
 */
export const REFUSAL_ANSWERS: readonly RawAnswer[] = Object.freeze([
  { status: 200, body: '{"success":false,"message":"reference has been used"}' },
  { status: 400, body: '{"success":false,"message":"Transaction could not be processed"}' },
  { status: 422, body: '{"error":"unprocessable payout request"}' },
  { status: 400, body: '{"success":false}' },
  { status: 400, body: '' },
  { status: 400, body: '<html><body><h1>400 Bad Request</h1></body></html>', contentType: 'text/html' },
  { status: 502, body: '<html><body><h1>502 Bad Gateway</h1></body></html>', contentType: 'text/html' },
]);

/** The kinds of injected faults, as counted by `faultCounts()`. */
export type FaultKind =
  | 'latency'
  | 'error'
  | 'timeout'
  | 'reset'
  | 'duplicate'
  | 'drop'
  | 'outOfOrder'
  | 'slowProgression'
  | 'alternativeWords'
  | 'gatewayError'
  | 'keysReset'
  | 'refusal'
  | 'refusalAfterCommit'
  | 'flap'
  | 'lag';

/** Thrown when a fault configuration names an unknown operation or has an out-of-range value. */
export class FaultConfigError extends Error {
  override name = 'FaultConfigError';
}

const RATE_FIELDS = [
  'errorRate',
  'timeoutRate',
  'resetRate',
  'duplicateRate',
  'dropRate',
  'outOfOrderRate',
  'alternativeWordsRate',
  'gatewayErrorRate',
  'refusalRate',
  'refusalAfterCommitRate',
  'flapRate',
  'lagRate',
] as const;
const COUNT_FIELDS = [
  'latencyMs',
  'slowProgressionMs',
  'slowProgressionChecks',
  'resetKeysAfterCalls',
  'times',
  'errorStatus',
] as const;

/** Checks one operation's fault settings, naming the bad field. */
export function validateFaults(operation: string, faults: unknown): OperationFaults {
  if (!(FAULT_OPERATIONS as readonly string[]).includes(operation)) {
    throw new FaultConfigError(`unknown fault operation "${operation}"; known: ${FAULT_OPERATIONS.join(', ')}`);
  }
  if (faults === null || typeof faults !== 'object' || Array.isArray(faults)) {
    throw new FaultConfigError(`faults for ${operation} must be an object`);
  }
  const known = new Set<string>([...RATE_FIELDS, ...COUNT_FIELDS, 'retryAfter', 'refusals']);
  for (const [key, value] of Object.entries(faults)) {
    if (!known.has(key)) throw new FaultConfigError(`unknown fault field "${key}" for ${operation}`);
    if (key === 'retryAfter') {
      if (typeof value !== 'string' || value.length > 64) throw new FaultConfigError(`fault ${operation}.retryAfter must be a string (seconds or an HTTP date)`);
      continue;
    }
    if (key === 'refusals') {
      validateRawAnswers(operation, value);
      continue;
    }
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
      throw new FaultConfigError(`fault ${operation}.${key} must be a non-negative number`);
    }
    if ((RATE_FIELDS as readonly string[]).includes(key) && value > 1) {
      throw new FaultConfigError(`fault ${operation}.${key} is a rate and must be between 0 and 1`);
    }
  }
  const status = (faults as OperationFaults).errorStatus;
  if (status !== undefined && status !== 429 && (status < 500 || status > 599)) {
    throw new FaultConfigError(`fault ${operation}.errorStatus must be 429 or a 5xx status`);
  }
  return { ...(faults as OperationFaults) };
}

function validateRawAnswers(operation: string, value: unknown): void {
  if (!Array.isArray(value) || value.length === 0) throw new FaultConfigError(`fault ${operation}.refusals must be a non-empty array`);
  for (const [i, answer] of value.entries()) {
    const a = answer as Partial<RawAnswer> | null;
    if (a === null || typeof a !== 'object' || typeof a.status !== 'number' || !Number.isInteger(a.status) || a.status < 200 || a.status > 599) {
      throw new FaultConfigError(`fault ${operation}.refusals[${i}].status must be an HTTP status from 200 to 599`);
    }
    if (typeof a.body !== 'string') throw new FaultConfigError(`fault ${operation}.refusals[${i}].body must be a string (may be empty)`);
    if (a.contentType !== undefined && typeof a.contentType !== 'string') {
      throw new FaultConfigError(`fault ${operation}.refusals[${i}].contentType must be a string`);
    }
    if (a.retryAfter !== undefined && (typeof a.retryAfter !== 'string' || a.retryAfter.length > 64)) {
      throw new FaultConfigError(`fault ${operation}.refusals[${i}].retryAfter must be a string (seconds or an HTTP date)`);
    }
  }
}

/** The fault settings in force, the PRNG rolls against them, and the counts of what was injected. */
export class FaultBook {
  private readonly settings = new Map<FaultOperation, OperationFaults>();
  private readonly injected = new Map<FaultOperation, number>();
  private readonly calls = new Map<FaultOperation, number>();
  private readonly counts: Partial<Record<FaultOperation, Partial<Record<FaultKind, number>>>> = {};

  private readonly streams = new Map<string, Random>();

  /**
   * Fault decisions draw from one seeded stream per operation and kind, apart from the services'
   * own draws: which calls of an operation get a fault then depends only on that operation's calls,
   * not on how they interleave with other operations' calls or with the identifiers the services
   * draw. A chaos run therefore injects each kind about as often on every run with the same seed.
   */
  constructor(private readonly seed: number) {}

  private stream(operation: FaultOperation, decision: string): Random {
    const name = `${operation}:${decision}`;
    let stream = this.streams.get(name);
    if (!stream) {
      stream = mulberry32(streamSeed(this.seed, name));
      this.streams.set(name, stream);
    }
    return stream;
  }

  /** Replaces the faults of one operation (an empty object clears them). */
  set(operation: FaultOperation, faults: OperationFaults): void {
    this.settings.set(operation, validateFaults(operation, faults));
    this.injected.set(operation, 0);
    this.calls.set(operation, 0);
  }

  /** Removes every fault setting; the counts stay (clear them with `resetCounts`). */
  clear(): void {
    this.settings.clear();
    this.injected.clear();
    this.calls.clear();
  }

  resetCounts(): void {
    for (const key of Object.keys(this.counts)) delete this.counts[key as FaultOperation];
  }

  get(operation: FaultOperation): OperationFaults {
    return this.settings.get(operation) ?? {};
  }

  all(): Partial<Record<FaultOperation, OperationFaults>> {
    return Object.fromEntries(this.settings.entries());
  }

  countsSnapshot(): Partial<Record<FaultOperation, Partial<Record<FaultKind, number>>>> {
    return structuredClone(this.counts);
  }

  /** True when `times` still allows another fault for this operation. */
  private allowed(operation: FaultOperation): boolean {
    const times = this.get(operation).times;
    return times === undefined || (this.injected.get(operation) ?? 0) < times;
  }

  /** Records one injected fault. */
  count(operation: FaultOperation, kind: FaultKind): void {
    this.injected.set(operation, (this.injected.get(operation) ?? 0) + 1);
    const perOp = (this.counts[operation] ??= {});
    perOp[kind] = (perOp[kind] ?? 0) + 1;
  }

  /**
   * Rolls a rate fault. Its stream is drawn only for rates strictly between 0 and 1, so turning an
   * always/never fault on does not shift the rolls that follow.
   */
  roll(operation: FaultOperation, kind: FaultKind, rate: number | undefined): boolean {
    if (rate === undefined || rate <= 0 || !this.allowed(operation)) return false;
    const hit = rate >= 1 || this.stream(operation, kind)() < rate;
    if (hit) this.count(operation, kind);
    return hit;
  }

  /** Picks one of the operation's refusal answers (seeded PRNG). */
  refusal(operation: FaultOperation): RawAnswer {
    const list = this.get(operation).refusals ?? REFUSAL_ANSWERS;
    return list[Math.floor(this.stream(operation, 'refusal-answer')() * list.length) % list.length] as RawAnswer;
  }

  /** The latency to add to this call, counted when non-zero. */
  latency(operation: FaultOperation): number {
    const ms = this.get(operation).latencyMs ?? 0;
    if (ms <= 0 || !this.allowed(operation)) return 0;
    this.count(operation, 'latency');
    return ms;
  }

  /** Counts one call of the operation and says whether the keys-reset fault fires now (once). */
  keysResetDue(operation: FaultOperation): boolean {
    const after = this.get(operation).resetKeysAfterCalls;
    const calls = (this.calls.get(operation) ?? 0) + 1;
    this.calls.set(operation, calls);
    if (after === undefined || calls !== after + 1 || !this.allowed(operation)) return false;
    this.count(operation, 'keysReset');
    return true;
  }
}
