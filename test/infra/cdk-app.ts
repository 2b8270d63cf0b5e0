import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { App, Validations } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { CloudAssembly } from 'aws-cdk-lib/cx-api';
import { AwsSolutionsChecks } from 'cdk-nag';
import { FUNCTIONS } from '@shared/config/functions';
import { stackNames } from '@infra/outputs';
import { Payrelay, PAYRELAY_PROJECT_ROOT, type PayrelayProps } from '@infra/payrelay';

/** The feature flags of cdk.json, so tests synthesize exactly what `cdk synth` does. */
export function cdkJsonContext(): Record<string, unknown> {
  const cdkJson = JSON.parse(readFileSync(path.join(PAYRELAY_PROJECT_ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> };
  return cdkJson.context;
}

/**
 * NodejsFunction needs every handler file to exist, even with bundling skipped. Fail with the list
 * of missing handlers (written by the worker and receiver issues) rather than a CDK stack trace.
 */
export function assertHandlersExist(): void {
  const missing = Object.values(FUNCTIONS)
    .map((f) => f.entry)
    .filter((entry) => !existsSync(path.join(PAYRELAY_PROJECT_ROOT, entry)));
  if (missing.length > 0) {
    throw new Error(`infra tests need the handler modules, not yet in the repository: ${missing.join(', ')}`);
  }
}

/** An app holding one payrelay deployment, checked by cdk-nag, with bundling skipped; not yet synthesized. */
export function buildTestApp(props: PayrelayProps): { app: App; payrelay: Payrelay } {
  assertHandlersExist();
  const app = new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
  const payrelay = new Payrelay(app, 'Payrelay', props);
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return { app, payrelay };
}

export interface SynthesizedPayrelay {
  readonly payrelay: Payrelay;
  readonly assembly: CloudAssembly;
  readonly stateful: Template;
  readonly stateless: Template;
}

/**
 * Synthesizes a payrelay deployment with the cdk.json flags and the cdk-nag AwsSolutions pack (a
 * finding that is not acknowledged makes synth throw), skipping esbuild bundling for speed: the
 * `npm run synth` test bundles for real.
 */
export function synthPayrelay(props: PayrelayProps): SynthesizedPayrelay {
  const { app, payrelay } = buildTestApp(props);
  const assembly = app.synth();
  const template = (stackName: string) => Template.fromJSON(assembly.getStackByName(stackName).template as Record<string, unknown>);
  return {
    payrelay,
    assembly,
    stateful: template(payrelay.stateful.stackName),
    stateless: template(stackNames(payrelay.config.stage).stateless),
  };
}
