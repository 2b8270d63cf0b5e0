import { BlockList, isIP } from 'node:net';
import * as v from '@shared/validation/valibot';
import { SettingError } from '@shared/domain/errors';
import { envInt, envSetting } from '@shared/config/env';

/** Settings both receivers share (docs/architecture.md, "Environment variables"). */
/**
 * Upper bound of WEBHOOK_MAX_BODY_BYTES: the verbatim body is one attribute of an events item, and
 * DynamoDB items stop at 400 KB.
 */
export const MAX_WEBHOOK_BODY_BYTES = 358_400;

/** How long stored callbacks are kept (their dedupe record with them) when EVENT_RETENTION_DAYS is unset. */
export const DEFAULT_EVENT_RETENTION_DAYS = 90;

export const webhookEnvSchema = v.object({
  WEBHOOK_MAX_BODY_BYTES: v.pipe(
    envInt(262_144),
    v.maxValue(MAX_WEBHOOK_BODY_BYTES, `must be at most ${MAX_WEBHOOK_BODY_BYTES} (a stored event is one DynamoDB item, 400 KB at most)`),
  ),
  /** Read into the check of a source address; unset, every address is allowed. */
  WEBHOOK_ALLOWED_IPS: envSetting(parseAllowList, 'every source address allowed'),
  EVENT_RETENTION_DAYS: envInt(DEFAULT_EVENT_RETENTION_DAYS),
});

/** The receivers' shared settings extended with one route's own (its tables, its secret). */
export function webhookEnvSchemaWith<S extends v.ObjectEntries>(entries: S) {
  return v.object({ ...webhookEnvSchema.entries, ...entries });
}

/** A source-address check; `undefined` allow-list means every address is allowed. */
export type SourceAllowList = (ip: string) => boolean;

/** Thrown at module load for an allow-list entry that is neither an address nor a CIDR block; the message does not name the setting (SettingError). */
export class AllowListError extends SettingError {
  override name = 'AllowListError';
}

/**
 * Parses WEBHOOK_ALLOWED_IPS: comma-separated IPv4/IPv6 addresses or CIDR blocks
 * (`203.0.113.7, 198.51.100.0/24`). Absent: no restriction. A list given but naming no address (`,`)
 * is refused, never read as "no restriction".
 */
export function parseAllowList(value: string | undefined): SourceAllowList | undefined {
  if (value === undefined) return undefined;
  const entries = value.split(',').map((e) => e.trim()).filter((e) => e !== '');
  if (entries.length === 0) throw new AllowListError('names no address: list IP addresses or CIDR blocks separated by commas, or unset it to allow every address');
  const list = new BlockList();
  for (const entry of entries) {
    const [address = '', prefixText] = entry.split('/');
    const family = isIP(address);
    if (family === 0) throw new AllowListError(`"${entry}" is not an IP address or CIDR block`);
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (prefixText === undefined) {
      list.addAddress(address, type);
      continue;
    }
    const prefix = Number(prefixText);
    if (!Number.isInteger(prefix) || prefix < 0 || prefix > (family === 4 ? 32 : 128)) {
      throw new AllowListError(`"${entry}" has an invalid prefix length`);
    }
    list.addSubnet(address, prefix, type);
  }
  return (ip) => {
    const family = isIP(ip);
    return family !== 0 && list.check(ip, family === 4 ? 'ipv4' : 'ipv6');
  };
}
