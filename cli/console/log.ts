import type { Log } from '@shared/ports/runtime';

/**
 * The console's own log: one JSON line per entry on stderr (the terminal that started it), every
 * level, so each action and each refused request leaves a line with its correlation keys.
 */
export const consoleLog: Log = {
  info: (message, ...extra) => write('INFO', message, extra),
  warn: (message, ...extra) => write('WARN', message, extra),
  error: (message, ...extra) => write('ERROR', message, extra),
};

function write(level: string, message: string, extra: Array<Record<string, unknown>>): void {
  process.stderr.write(`${JSON.stringify({ level, at: new Date().toISOString(), service: 'payrelay-console', message, ...Object.assign({}, ...extra) })}\n`);
}
