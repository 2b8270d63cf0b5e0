/** How chatty the simulator is: `silent` for tests, `info` for the command, `debug` for every request. */
export type LogLevel = 'silent' | 'info' | 'debug';

/** The simulator's own small console logger (a dev tool, not runtime code, so not Powertools). */
export interface SimLogger {
  info(message: string, fields?: Record<string, unknown>): void;
  debug(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
}

/** Builds a logger writing one line per record: time, level, message and JSON fields. */
export function createLogger(level: LogLevel): SimLogger {
  const write = (tag: string, message: string, fields?: Record<string, unknown>): void => {
    const extra = fields && Object.keys(fields).length > 0 ? ` ${JSON.stringify(fields)}` : '';
    console.log(`${new Date().toISOString()} simulator ${tag} ${message}${extra}`);
  };
  return {
    info: (m, f) => {
      if (level !== 'silent') write('INFO', m, f);
    },
    debug: (m, f) => {
      if (level === 'debug') write('DEBUG', m, f);
    },
    warn: (m, f) => {
      if (level !== 'silent') write('WARN', m, f);
    },
  };
}
