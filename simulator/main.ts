import { Command } from 'commander';
import { configureSimulatorCommand } from './command';

// `npm run simulator -- --help`: the same command as `payrelay simulator`.
const program = configureSimulatorCommand(new Command('simulator'));
program.parseAsync(process.argv).catch((error: unknown) => {
  console.error(`simulator: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
