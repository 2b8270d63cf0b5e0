import { existsSync } from 'node:fs';
import { join } from 'node:path';

/** The files of a --cold-baseline checkout the cold-start part runs: its bench part and its own tsx. */
export function baselineFiles(dir: string): { entry: string; tsx: string } {
  return { entry: join(dir, 'bench/parts/cold-start.ts'), tsx: join(dir, 'node_modules/.bin/tsx') };
}

/** Why `dir` cannot serve as --cold-baseline, or undefined when it can. */
export function baselineProblem(dir: string): string | undefined {
  const { entry, tsx } = baselineFiles(dir);
  if (!existsSync(entry)) return `--cold-baseline ${dir}: no bench/parts/cold-start.ts there; give a payrelay checkout (git worktree add <dir> <commit>)`;
  if (!existsSync(tsx)) return `--cold-baseline ${dir}: its dependencies are not installed; run npm ci there first`;
  return undefined;
}
