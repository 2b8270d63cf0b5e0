import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { PayrelayConfigInput } from './config';
import { stageEnvironment } from './environment';
import { Payrelay } from './payrelay';
import { STAGES, resolveStageConfig } from './stages';

/**
 * Builds the repository's CDK app: one payrelay stage chosen by `-c stage=<name>` (infra/stages.ts)
 * with the context overrides of CONTEXT_OVERRIDES, checked by cdk-nag's AwsSolutions pack so
 * `cdk synth` and `cdk deploy` fail on any unacknowledged finding.
 */
export function buildApp(app: App = new App(), stages: Record<string, PayrelayConfigInput> = STAGES): { app: App; payrelay: Payrelay } {
  const config = resolveStageConfig((key) => app.node.tryGetContext(key), stages);
  // Where the credentials cdk runs with point (the CLI sets these; offline, without credentials, neither is set).
  const account = process.env.CDK_DEFAULT_ACCOUNT;
  const region = process.env.CDK_DEFAULT_REGION;
  // A stage bound to an account and region deploys there, and only with credentials of that account and region.
  const env =
    stageEnvironment(config, { account, region }, 'the credentials cdk runs with (CDK_DEFAULT_ACCOUNT, CDK_DEFAULT_REGION) are for') ??
    (account && region ? { account, region } : undefined);
  const payrelay = new Payrelay(app, `Payrelay-${config.stage}`, { ...config, env });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return { app, payrelay };
}
