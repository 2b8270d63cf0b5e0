import { InvalidArgumentError, type Command } from 'commander';
import { createOutput, type Output } from './output';
import { applyTargetEnv, resolveTarget, type GlobalOptions, type Target } from './target';

/** What every command action gets: the output mode and the (lazily resolved) target. */
export interface CommandContext {
  readonly out: Output;
  readonly globals: GlobalOptions;
  /** Resolves the target once and applies its env, so adapters imported afterwards use it. */
  target(): Promise<Target>;
}

/** Builds the context from a command's own and global options. */
export function contextOf(command: Command): CommandContext {
  const globals = command.optsWithGlobals<GlobalOptions>();
  let resolved: Promise<Target> | undefined;
  return {
    out: createOutput(globals.json === true),
    globals,
    target() {
      resolved ??= resolveTarget(globals).then((target) => {
        applyTargetEnv(target);
        return target;
      });
      return resolved;
    },
  };
}

/** Appends an "Example:" block to a command's --help. */
export function withExample(command: Command, ...examples: string[]): Command {
  return command.addHelpText('after', `\nExample${examples.length > 1 ? 's' : ''}:\n${examples.map((e) => `  $ ${e}`).join('\n')}\n`);
}

/** Option parser for a positive whole number; commander prints the error and exits 1. */
export function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError('must be a positive whole number');
  return n;
}
