import { brotliDecompressSync, gunzipSync, inflateRawSync, inflateSync, type ZlibOptions } from 'node:zlib';
import { PayloadTooLargeError, UndecodableBodyError, UnsupportedContentEncodingError } from './request-errors';

/** Content codings a provider may send; `identity` means none. */
const DECODERS: Record<string, (input: Buffer, options: ZlibOptions) => Buffer> = {
  gzip: gunzipSync,
  'x-gzip': gunzipSync,
  // HTTP's "deflate" is zlib-wrapped, but some senders use raw deflate: accept both.
  deflate: (input, options) => {
    try {
      return inflateSync(input, options);
    } catch (error) {
      if ((error as { code?: string }).code === 'Z_DATA_ERROR') return inflateRawSync(input, options);
      throw error;
    }
  },
  br: brotliDecompressSync,
};

/** The codings of a Content-Encoding header, in the order they were applied; `identity` dropped. */
export function contentCodings(header: string | undefined): string[] {
  return (header ?? '')
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
}

/**
 * Undoes the Content-Encoding of a request body, never producing more than `maxBytes`: a small
 * compressed body that expands without bound (a zip bomb) stops at the cap instead of filling memory.
 * Codings are undone last-applied first, as HTTP lists them in the order applied.
 * @throws UnsupportedContentEncodingError for a coding other than gzip, deflate, br or identity (415)
 * @throws PayloadTooLargeError when the decoded body would exceed `maxBytes` (413)
 * @throws UndecodableBodyError when the bytes are not valid data of the stated coding (400)
 */
export function decodeContent(body: Buffer, contentEncoding: string | undefined, maxBytes: number): Buffer {
  const codings = contentCodings(contentEncoding);
  const unknown = codings.find((coding) => DECODERS[coding] === undefined);
  if (unknown !== undefined) {
    throw new UnsupportedContentEncodingError(`content-encoding ${unknown.slice(0, 40)} is not supported; send gzip, deflate, br or none`);
  }
  let decoded = body;
  for (const coding of codings.reverse()) {
    try {
      decoded = (DECODERS[coding] as (input: Buffer, options: ZlibOptions) => Buffer)(decoded, { maxOutputLength: maxBytes });
    } catch (error) {
      if ((error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') {
        throw new PayloadTooLargeError(`body decodes (${coding}) to more than ${maxBytes} bytes; the limit is ${maxBytes}`);
      }
      throw new UndecodableBodyError(`body is not valid ${coding} data`);
    }
  }
  return decoded;
}

const BOM = '\uFEFF';

/** Body text without a leading UTF-8 byte order mark, which JSON parsers refuse and some senders add. */
export function withoutByteOrderMark(text: string): string {
  return text.startsWith(BOM) ? text.slice(BOM.length) : text;
}
