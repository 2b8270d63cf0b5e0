import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { Payrelay } from './payrelay';
import { resolveStageConfig } from './stages';

/**
 * Builds the repository's CDK app: one payrelay stage chosen by `-c stage=<name>` (infra/stages.ts)
 * with the context overrides of CONTEXT_OVERRIDES, checked by cdk-nag's AwsSolutions pack so
 * `cdk synth` and `cdk deploy` fail on any unacknowledged finding.
 */
export function buildApp(app: App = new App()): { app: App; payrelay: Payrelay } {
  const config = resolveStageConfig((key) => app.node.tryGetContext(key));
  const account = process.env.CDK_DEFAULT_ACCOUNT;
  const region = process.env.CDK_DEFAULT_REGION;
  const payrelay = new Payrelay(app, `Payrelay-${config.stage}`, {
    ...config,
    env: account && region ? { account, region } : undefined,
  });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return { app, payrelay };
}
