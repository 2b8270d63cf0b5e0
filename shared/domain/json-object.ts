/**
 * Reads a setting written as a JSON object (PROVIDER_STATUS_MAP, COLLECTION_ORDER_BODY, a JSON
 * SIGNING_PROFILE). Each setting names itself in its own error class and words, so the caller
 * builds the error; this only decides which of the two problems the text has.
 * @throws the caller's `notJson()` when the text is not JSON, its `notObject()` when the JSON is an
 *   array, null or a scalar
 */
export function parseJsonObject(text: string, errors: { notJson: () => Error; notObject: () => Error }): Record<string, unknown> {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw errors.notJson();
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw errors.notObject();
  return raw as Record<string, unknown>;
}
