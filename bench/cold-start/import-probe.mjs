// Runs in a fresh Node process: imports one bundle and reports how long the import took, in wall
// time and in CPU time (user + system of this process). Plain JavaScript on purpose: no loader may
// sit between Node and the bundle.
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';

const cpuBefore = process.cpuUsage();
const started = performance.now();
const mod = await import(pathToFileURL(process.argv[2]).href);
const elapsed = performance.now() - started;
const cpu = process.cpuUsage(cpuBefore);
if (typeof mod.handler !== 'function') throw new Error(`${process.argv[2]} exports no handler`);
process.stderr.write(`\nPAYRELAY_IMPORT_MS=${elapsed}\nPAYRELAY_IMPORT_CPU_MS=${(cpu.user + cpu.system) / 1000}\n`);
