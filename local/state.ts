import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { REPO_ROOT } from './lambda';

/**
 * Where a running `npm start` tells the CLI what it is running. Git-ignored. The env it holds points
 * at loopback emulators with the fixed local credentials, so it holds nothing secret beyond the
 * DEV-ONLY callback token already in local/config.json. PAYRELAY_STATE_FILE moves it (tests, or two
 * local stacks side by side); set but empty it is the default, like unset (an empty path would put the
 * state file, and the enqueue journal beside it, nowhere or in the current directory).
 */
export const LOCAL_STATE_PATH = process.env.PAYRELAY_STATE_FILE?.trim() || resolve(REPO_ROOT, '.payrelay-local/state.json');

export interface LocalStackUrls {
  readonly gateway: string;
  readonly kycCallback: string;
  readonly payoutNotification: string;
  readonly payoutApi: string;
  readonly kycApi: string;
  /** Present when the local stack runs the simulator. */
  readonly simulator?: string;
}

export interface LocalState {
  readonly pid: number;
  readonly startedAt: string;
  readonly stage: string;
  readonly urls: LocalStackUrls;
  /** What handlers and the CLI need in process.env to reach this stack. */
  readonly env: Record<string, string>;
}

export function writeLocalState(state: LocalState, path = LOCAL_STATE_PATH): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
}

/** Removes the state file, but only if it still belongs to `pid` (a newer stack may have replaced it). */
export function removeLocalState(pid: number, path = LOCAL_STATE_PATH): void {
  const current = readLocalState(path);
  if (current && current.pid !== pid) return;
  rmSync(path, { force: true });
}

/** Thrown by `npm start` instead of taking over the state file of another running local stack. */
export class StateFileInUseError extends Error {
  override name = 'StateFileInUseError';
}

/**
 * Refuses to take over a state file that belongs to another live local stack: the CLI would silently
 * talk to whichever stack wrote last. A file left by a stack that is gone (crashed, killed) is free.
 * @throws StateFileInUseError naming the file, the owner's pid and gateway, and the ways out
 */
export function assertStateFileFree(path = LOCAL_STATE_PATH, self = process.pid): void {
  const owner = readLocalState(path);
  if (!owner || owner.pid === self) return;
  throw new StateFileInUseError(
    [
      `another local stack is running with the state file ${path}: pid ${owner.pid}, started ${owner.startedAt}, gateway ${owner.urls.gateway}.`,
      `Stop it first (Ctrl-C in its terminal, or kill ${owner.pid}), or run this one beside it with its own state file and ports:`,
      `  PAYRELAY_STATE_FILE=/tmp/payrelay-2/state.json npm start -- --port 3100 --simulator-port 4110`,
      `and point the CLI at it with the same PAYRELAY_STATE_FILE.`,
    ].join('\n'),
  );
}

/** The state of a running local stack, or undefined when none is recorded or its process is gone. */
export function readLocalState(path = LOCAL_STATE_PATH): LocalState | undefined {
  let state: LocalState;
  try {
    state = JSON.parse(readFileSync(path, 'utf8')) as LocalState;
  } catch {
    return undefined;
  }
  return isAlive(state.pid) ? state : undefined;
}

/** Whether a process with this pid runs (EPERM: it does, under another user). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
