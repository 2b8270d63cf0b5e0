import { readFileSync } from 'node:fs';

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const DIGIT = new Map([...BASE64].map((c, i) => [c, i]));

/** Decodes one Base64 VLQ segment of a source map into its fields. */
function decodeSegment(segment: string): number[] {
  const values: number[] = [];
  let value = 0;
  let shift = 0;
  for (const char of segment) {
    const digit = DIGIT.get(char) ?? 0;
    value += (digit & 31) << shift;
    if (digit & 32) {
      shift += 5;
      continue;
    }
    values.push(value & 1 ? -(value >>> 1) : value >>> 1);
    value = 0;
    shift = 0;
  }
  return values;
}

/** The npm package a bundled source belongs to, or `payrelay` for the project's own files. */
export function packageOf(source: string): string {
  const at = source.lastIndexOf('node_modules/');
  if (at < 0) return 'payrelay';
  const parts = source.slice(at + 'node_modules/'.length).split('/');
  return parts[0]?.startsWith('@') ? `${parts[0]}/${parts[1]}` : (parts[0] ?? source);
}

/**
 * Bytes of generated code per npm package, from a bundle and its source map: each mapped span of
 * the output is charged to the source it came from. Unmapped bytes (esbuild's glue) are left out.
 */
export function bytesByPackage(bundleFile: string, groupOf: (source: string) => string = packageOf): Array<{ pkg: string; bytes: number }> {
  const map = JSON.parse(readFileSync(`${bundleFile}.map`, 'utf8')) as { sources: string[]; mappings: string };
  const lines = readFileSync(bundleFile, 'utf8').split('\n');
  const totals = new Map<string, number>();
  let source = 0;
  map.mappings.split(';').forEach((line, lineIndex) => {
    const length = Buffer.byteLength(lines[lineIndex] ?? '');
    let column = 0;
    let previous: { column: number; source: number } | undefined;
    const charge = (end: number): void => {
      if (!previous) return;
      const pkg = groupOf(map.sources[previous.source] ?? '');
      totals.set(pkg, (totals.get(pkg) ?? 0) + (end - previous.column));
    };
    for (const segment of line.split(',')) {
      if (segment === '') continue;
      const fields = decodeSegment(segment);
      column += fields[0] ?? 0;
      charge(column);
      if (fields.length >= 4) {
        source += fields[1] ?? 0;
        previous = { column, source };
      } else {
        previous = undefined;
      }
    }
    charge(length);
  });
  return [...totals].map(([pkg, bytes]) => ({ pkg, bytes })).sort((a, b) => b.bytes - a.bytes);
}
