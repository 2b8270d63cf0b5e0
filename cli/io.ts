import { readFileSync } from 'node:fs';
import { CliError, EXIT } from './output';

/**
 * A file named on the command line cannot be read: a wrong value given (invalid input, exit 3), said
 * in words (`no such file`), not as a system error code (`ENOENT`).
 */
export function unreadableFile(path: string, error: unknown): CliError {
  const code = (error as NodeJS.ErrnoException).code;
  const why =
    code === 'ENOENT'
      ? 'no such file'
      : code === 'EACCES' || code === 'EPERM'
        ? 'permission denied'
        : code === 'EISDIR'
          ? 'it is a directory, not a file'
          : (error as Error).message;
  return new CliError(`cannot read ${path}: ${why}`, EXIT.invalidInput);
}

/** Reads a text file, or stdin when the path is `-`; the error names the file. */
export function readText(path: string): string {
  try {
    return readFileSync(path === '-' ? 0 : path, 'utf8');
  } catch (error) {
    throw unreadableFile(path, error);
  }
}

/** Reads a JSON object from a file (or `-`). */
export function readJsonObject(path: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(readText(path));
  } catch (error) {
    if (error instanceof CliError) throw error;
    throw new CliError(`${path} is not valid JSON`, EXIT.invalidInput);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new CliError(`${path} must hold a JSON object`, EXIT.invalidInput);
  return value as Record<string, unknown>;
}

/**
 * Asks for a value on the terminal without echoing it (for secrets). Refuses when stdin is not a
 * terminal, so a secret is never read from a place that might echo or log it by accident.
 */
export function promptHidden(question: string): Promise<string> {
  const stdin = process.stdin;
  if (!stdin.isTTY) return Promise.reject(new CliError('no terminal to prompt on: pass --file <secret.json> instead', EXIT.usage));
  process.stderr.write(question);
  return new Promise((resolve, reject) => {
    let value = '';
    stdin.setRawMode(true);
    stdin.resume();
    stdin.setEncoding('utf8');
    const done = (error?: Error): void => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.removeListener('data', onData);
      process.stderr.write('\n');
      if (error) reject(error);
      else resolve(value);
    };
    const onData = (chunk: string): void => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n') return done();
        if (ch === '\u0003') return done(new CliError('cancelled'));
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1);
        else if (ch >= ' ') value += ch;
      }
    };
    stdin.on('data', onData);
  });
}

/** Asks for a visible value (identifiers, not secrets). */
export async function promptVisible(question: string): Promise<string> {
  if (!process.stdin.isTTY) throw new CliError('no terminal to prompt on: pass --file <secret.json> instead', EXIT.usage);
  const { createInterface } = await import('node:readline/promises');
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return (await rl.question(question)).trim();
  } finally {
    rl.close();
  }
}
