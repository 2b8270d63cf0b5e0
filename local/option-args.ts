import { InvalidArgumentError } from 'commander';

/*
 * Option parsers that both `npm start` (local/main.ts) and the CLI use. They live here because the
 * CLI may import the local stack's code but not the other way round (docs/architecture.md).
 */

/**
 * Option parser for a provider base URL (`--provider-url`, `--kyc-url` of `npm start` and of the CLI):
 * an absolute http(s) URL, without its trailing slash. Refusing anything else here makes a typo a
 * usage error naming the option, instead of a failure deep inside the first provider call.
 */
export function providerBaseUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw new InvalidArgumentError('must be an absolute http(s) URL, e.g. https://provider.example');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new InvalidArgumentError(`must be an http(s) URL, e.g. https://provider.example (got ${url.protocol})`);
  }
  return url.toString().replace(/\/$/, '');
}

/**
 * Option parser for a TCP port on 127.0.0.1 (`npm start --port`, `payrelay console --port`): a whole
 * number 0-65535, 0 letting the system pick a free one. A bad value is a usage error naming the option,
 * not a listen() failure.
 */
export function portArg(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('must be a port number (0-65535)');
  return n;
}
