import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { contentCodings, decodeContent, withoutByteOrderMark } from '@shared/http/body-decoding';
import { PayloadTooLargeError, UndecodableBodyError, UnsupportedContentEncodingError } from '@shared/http/request-errors';

const text = '{"status":"success","amount":"100.50"}';
const decoded = (body: Buffer, encoding: string | undefined, max = 1024): string => decodeContent(body, encoding, max).toString('utf8');

describe('decoding a request body by its Content-Encoding', () => {
  it('decodes gzip, x-gzip, zlib deflate, raw deflate and br, and leaves identity or none alone', () => {
    expect(decoded(gzipSync(text), 'gzip')).toBe(text);
    expect(decoded(gzipSync(text), 'X-GZIP')).toBe(text);
    expect(decoded(deflateSync(text), 'deflate')).toBe(text);
    expect(decoded(deflateRawSync(text), 'deflate')).toBe(text);
    expect(decoded(brotliCompressSync(text), 'br')).toBe(text);
    expect(decoded(Buffer.from(text), 'identity')).toBe(text);
    expect(decoded(Buffer.from(text), undefined)).toBe(text);
  });

  it('undoes several codings last-applied first', () => {
    expect(contentCodings('gzip, identity, br')).toEqual(['gzip', 'br']);
    expect(decoded(brotliCompressSync(gzipSync(text)), 'gzip, br')).toBe(text);
  });

  it('stops at the size cap, refuses unknown codings and corrupt data with named errors', () => {
    expect(() => decodeContent(gzipSync(Buffer.alloc(4096)), 'gzip', 1024)).toThrow(PayloadTooLargeError);
    expect(() => decodeContent(brotliCompressSync(Buffer.alloc(4096)), 'br', 1024)).toThrow(PayloadTooLargeError);
    expect(decodeContent(gzipSync(Buffer.alloc(1024)), 'gzip', 1024)).toHaveLength(1024);
    expect(() => decodeContent(Buffer.from(text), 'compress', 1024)).toThrow(UnsupportedContentEncodingError);
    expect(() => decodeContent(Buffer.from(text), 'gzip, zstd', 1024)).toThrow(UnsupportedContentEncodingError);
    expect(() => decodeContent(Buffer.from(text), 'gzip', 1024)).toThrow(UndecodableBodyError);
    expect(() => decodeContent(Buffer.from(text), 'br', 1024)).toThrow(UndecodableBodyError);
  });

  it('drops one leading byte order mark and nothing else', () => {
    expect(withoutByteOrderMark(`\uFEFF${text}`)).toBe(text);
    expect(withoutByteOrderMark(text)).toBe(text);
    expect(withoutByteOrderMark(`{"a":"\uFEFF"}`)).toBe(`{"a":"\uFEFF"}`);
  });
});
