import { readFileSync } from 'node:fs';

/** Linux clock ticks per second (`getconf CLK_TCK`), the unit of /proc/<pid>/stat's CPU times. */
const CLOCK_TICKS = 100;

/** VmHWM (peak resident set) of a live process, in KiB; undefined once it is gone. */
export function peakRssKiB(pid: number): number | undefined {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * CPU seconds (user + system) another live process has used so far, to 10 ms (the kernel's clock
 * tick); undefined once it is gone. The bench reads its emulator hosts and the CLI's process with it.
 */
export function cpuSeconds(pid: number): number | undefined {
  try {
    // Fields after the parenthesised command name: state is field 3, utime 14 and stime 15.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}
