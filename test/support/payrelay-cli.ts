import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from '@local/lambda';

/** What one `payrelay` run printed and how it exited. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

const run = promisify(execFile);

/**
 * Runs bin/payrelay.js in a child process, as an operator runs it, against the local stack recorded in
 * `stateFile` (as `npm start` records it). A non-zero exit is returned, not thrown, so tests can assert
 * exit codes and error lines.
 */
export async function runPayrelay(stateFile: string, args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  try {
    const out = await run(process.execPath, [join(REPO_ROOT, 'bin/payrelay.js'), ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, PAYRELAY_STATE_FILE: stateFile, ...env },
    });
    return { code: 0, stdout: out.stdout, stderr: out.stderr };
  } catch (error) {
    const e = error as CliRun;
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}
