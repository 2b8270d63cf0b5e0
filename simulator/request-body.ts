import type { IncomingMessage } from 'node:http';
import { payoutRefusal, type SimHttpError } from './refusals';

/** Upper bound of a request body; larger bodies get 413 rather than filling memory. */
const MAX_BODY_BYTES = 1024 * 1024;

/** Reads the request body as text, refusing bodies over the size limit. */
export async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buf = chunk as Buffer;
    size += buf.length;
    if (size > MAX_BODY_BYTES) throw payoutRefusal(413, `request body larger than ${MAX_BODY_BYTES} bytes`);
    chunks.push(buf);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Parses a JSON object body; an empty body is `{}`. Anything else is a 400 naming the problem. */
export function parseJsonObject(text: string, refuse: (status: number, message: string) => SimHttpError): Record<string, unknown> {
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw refuse(400, 'request body is not valid JSON');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw refuse(400, 'request body must be a JSON object');
  }
  return value as Record<string, unknown>;
}

/**
 * Returns the named string fields of `body`, refusing with one message that lists every missing
 * or non-string field, so a caller fixes them all at once.
 */
export function requireStrings<K extends string>(
  body: Record<string, unknown>,
  fields: readonly K[],
  refuse: (status: number, message: string) => SimHttpError,
): Record<K, string> {
  const missing = fields.filter((f) => typeof body[f] !== 'string' || (body[f] as string).trim() === '');
  if (missing.length > 0) throw refuse(400, `missing or empty field(s): ${missing.join(', ')}`);
  return Object.fromEntries(fields.map((f) => [f, body[f] as string])) as Record<K, string>;
}
