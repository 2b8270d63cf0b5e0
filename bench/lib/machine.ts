import { readFileSync } from 'node:fs';
import { availableParallelism, loadavg, totalmem } from 'node:os';

/** The machine a run came from: what docs/performance.md records next to the figures. */
export interface MachineInfo {
  readonly date: string;
  readonly node: string;
  readonly cpus: number;
  readonly cpuModel: string;
  readonly memoryGiB: number;
  /** 1, 5 and 15 minute load averages at the start and the end of the run. */
  readonly loadAtStart: readonly number[];
  loadAtEnd?: readonly number[];
}

function cpuModel(): string {
  try {
    const line = readFileSync('/proc/cpuinfo', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('model name'));
    return line?.split(':')[1]?.trim() ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

export function machineInfo(): MachineInfo {
  return {
    date: new Date().toISOString(),
    node: process.version,
    cpus: availableParallelism(),
    cpuModel: cpuModel(),
    memoryGiB: Math.round(totalmem() / 1024 ** 3),
    loadAtStart: loadavg().map((x) => Number(x.toFixed(2))),
  };
}

export function currentLoad(): number[] {
  return loadavg().map((x) => Number(x.toFixed(2)));
}
