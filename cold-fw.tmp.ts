import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import { PayrelayFunction } from '@infra/payrelay-function';
import { FUNCTIONS } from '@shared/config/functions';
import { importTime } from './bench/parts/cold-start';

const outdir = mkdtempSync(join(tmpdir(), 'fw-'));
const app = new App({ outdir, context: { 'aws:cdk:enable-asset-metadata': true } });
const stack = new Stack(app, 'Fw');
const defs = [
  { id: 'floor', entry: 'bench/cold-start/dynamodb-only.ts', timeoutSeconds: 10, memoryMb: 256, callsProvider: false },
  { id: 'framework', entry: 'bench/cold-start/framework-only-tmp.ts', timeoutSeconds: 10, memoryMb: 256, callsProvider: false },
  FUNCTIONS.payoutWorker,
  FUNCTIONS.kycCallback,
] as any[];
const ids = new Map<string, string>();
for (const d of defs) {
  const fn = new PayrelayFunction(stack, `F-${d.id}`, { definition: d, projectRoot: process.cwd(), logRetention: RetentionDays.ONE_WEEK, logRemovalPolicy: RemovalPolicy.DESTROY, logLevel: 'INFO', namePrefix: 'fw', stage: 'fw' });
  ids.set(d.id, stack.getLogicalId(fn.node.defaultChild as CfnFunction));
}
const t = app.synth().getStackByName('Fw').template as any;
const files = defs.map((d) => ({ id: d.id, file: join(outdir, t.Resources[ids.get(d.id)!].Metadata['aws:asset:path'], 'index.mjs') }));
const runs = Number(process.argv[2] ?? 15);
const res: Record<string, number[]> = {};
for (let r = 0; r < runs; r++) {
  const round: Record<string, number> = {};
  for (const f of files) for (const mode of ['traced', 'untraced'] as const) round[`${f.id}/${mode}`] = (await importTime(f.file, mode)).cpuMs;
  const floor = (round['floor/traced']! + round['floor/untraced']!) / 2;
  for (const [k, v] of Object.entries(round)) (res[k] ??= []).push(v / floor);
}
const med = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!;
for (const [k, v] of Object.entries(res)) console.log(k.padEnd(28), med(v).toFixed(3));
