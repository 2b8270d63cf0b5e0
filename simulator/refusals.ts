/* How the simulated services answer: a status and a JSON body, and the refusals each service sends. */

/** A JSON answer with its HTTP status. */
export interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  /** Sent as is instead of the JSON of `body` (an injected refusal: HTML, empty, anything). */
  raw?: string;
}

/** Thrown by a route to answer with a specific status and body (a refusal, not a simulator bug). */
export class SimHttpError extends Error {
  override name = 'SimHttpError';
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    const message = (body as { message?: unknown } | null)?.message;
    super(typeof message === 'string' ? `${status}: ${message}` : `HTTP ${status}`);
  }
}

/** Payout-service style refusal: `{ success: false, message }`. */
export function payoutRefusal(status: number, message: string): SimHttpError {
  return new SimHttpError(status, { success: false, message });
}

/** KYC-service style refusal, the documented 400 shape: `{ error: true, message, data: null }`. */
export function kycRefusal(status: number, message: string): SimHttpError {
  return new SimHttpError(status, { error: true, message, data: null });
}
