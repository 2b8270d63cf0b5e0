import { InvalidArgumentError } from 'commander';

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
