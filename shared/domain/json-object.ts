/**
 * Why a text is not JSON, in the parser's words without the text itself (Node quotes the start of
 * the text: `Unexpected token 'x', "{x: 1}" is not valid JSON`). A setting's error says it once.
 */
function jsonProblem(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/, ".*" is not valid JSON$/s, '');
}

/**
 * Reads a setting written as JSON (PAYOUT_DEFINITE_REFUSALS, and through `parseJsonObject` the
 * settings written as a JSON object). Each setting has its own error class, so the caller builds
 * the error from the parser's reason.
 * @throws the caller's `notJson(reason)` when the text is not JSON
 */
export function parseJsonSetting(text: string, notJson: (reason: string) => Error): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    // `VAR={"a":"b"}` typed in a shell arrives as `{a:b}`: the shell removed the quotes.
    const unquoted = /^\s*[[{]/.test(text) && !text.includes('"') ? ' (it has no double quotes: in a shell, put the JSON in single quotes)' : '';
    throw notJson(`is not valid JSON: ${jsonProblem(error)}${unquoted}`);
  }
}

/**
 * Reads a setting written as a JSON object (PROVIDER_STATUS_MAP, COLLECTION_ORDER_BODY, a JSON
 * SIGNING_PROFILE); this only decides which of the two problems the text has.
 * @throws the caller's `notJson(reason)` when the text is not JSON, its `notObject()` when the JSON is
 *   an array, null or a scalar
 */
export function parseJsonObject(text: string, errors: { notJson: (reason: string) => Error; notObject: () => Error }): Record<string, unknown> {
  const raw = parseJsonSetting(text, errors.notJson);
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw errors.notObject();
  return raw as Record<string, unknown>;
}
