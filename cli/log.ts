import type { Log, Telemetry } from '@shared/ports/runtime';
import { jsonText, printErrorLine } from './output';

/*
 * What the CLI hands the use cases to log and count with. It prints each command's outcome itself,
 * so the use cases' lines are warnings for the operator, an audit trail, or nothing.
 */

/** Use-case log lines for an operator: warnings and errors on stderr, info dropped; made safe to print (they may quote a provider). */
export const cliLog: Log = {
  info: () => {},
  warn: (message, extra) => printErrorLine(`warning: ${message}${extra ? ` ${jsonText(extra)}` : ''}`),
  error: (message, extra) => printErrorLine(`error: ${message}${extra ? ` ${jsonText(extra)}` : ''}`),
};

/** A log that drops every line: for a command whose printed result says all there is. */
export const quietLog: Log = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** The CLI emits no metrics: counts of operator actions are printed instead. */
export const noTelemetry: Telemetry = { count: () => undefined, seconds: () => undefined };

/**
 * One JSON line per entry on stderr, every level (`{ level, at, ...fields, message, ...extra }`), so
 * each operator action leaves a line with its correlation keys: the console's log, the DLQ audit.
 */
export function jsonLinesLog(fields: Record<string, string> = {}): Log {
  const write = (level: string, message: string, extra: Array<Record<string, unknown>>): void => {
    process.stderr.write(`${jsonText({ level, at: new Date().toISOString(), ...fields, message, ...Object.assign({}, ...extra) })}\n`);
  };
  return {
    info: (message, ...extra) => write('INFO', message, extra),
    warn: (message, ...extra) => write('WARN', message, extra),
    error: (message, ...extra) => write('ERROR', message, extra),
  };
}
