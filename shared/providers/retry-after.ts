/** The longest wait payrelay takes from a Retry-After header: a provider cannot park a payout for hours. */
export const MAX_RETRY_AFTER_MS = 15 * 60_000;

/**
 * Reads a Retry-After header value (delay in seconds, or an HTTP date) as milliseconds from `now`,
 * capped at MAX_RETRY_AFTER_MS. A date in the past is 0. An absent or unreadable value is
 * undefined: the caller keeps its own back-off.
 */
export function parseRetryAfter(value: string | undefined, now: Date): number | undefined {
  const text = value?.trim() ?? '';
  if (text === '') return undefined;
  let ms: number;
  if (/^\d+$/.test(text)) {
    ms = Number(text) * 1000;
  } else {
    // An HTTP date names its day of the week; a bare number with a sign or decimals is not one.
    if (!/[a-z]/i.test(text)) return undefined;
    const at = Date.parse(text);
    if (Number.isNaN(at)) return undefined;
    ms = at - now.getTime();
  }
  return Math.min(MAX_RETRY_AFTER_MS, Math.max(0, ms));
}
