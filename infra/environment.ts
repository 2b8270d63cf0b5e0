import { type Environment, Token } from 'aws-cdk-lib';
import { type PayrelayConfig, PayrelayConfigError } from './config';

/** An account and a region as far as they are known (either may be missing). */
export interface PartialEnvironment {
  readonly account?: string;
  readonly region?: string;
}

/** A concrete value, or undefined for one that is missing, empty or a token (resolved only at deploy time). */
function known(value: string | undefined): string | undefined {
  return value !== undefined && value !== '' && !Token.isUnresolved(value) ? value : undefined;
}

/**
 * The environment of a stage's stacks when the stage names its `account` and/or `region`: those, with
 * whatever of `actual` the stage leaves out. `actual` is where the deploy would otherwise go (the
 * credentials' CDK_DEFAULT_ACCOUNT and CDK_DEFAULT_REGION, or the `env` an embedding app gives):
 * when it is known and differs from the stage, this throws, naming the stage, what it expects and what
 * `actualSource` says, so `-c stage=prod --profile sandbox` never puts prod's settings in sandbox.
 * Returns undefined when the stage names neither: the caller keeps its own environment.
 */
export function stageEnvironment(config: PayrelayConfig, actual: PartialEnvironment, actualSource: string): Environment | undefined {
  if (config.account === undefined && config.region === undefined) return undefined;
  const account = known(actual.account);
  const region = known(actual.region);
  // Without credentials (no account) the CDK CLI still reports a region, its default us-east-1: only
  // a region that comes with an account says where the deploy would go, so only that one is compared.
  const deployRegion = account === undefined ? undefined : region;
  const mismatches = [
    config.account !== undefined && account !== undefined && account !== config.account ? `account ${account}, not ${config.account}` : undefined,
    config.region !== undefined && deployRegion !== undefined && deployRegion !== config.region ? `region ${deployRegion}, not ${config.region}` : undefined,
  ].filter((text) => text !== undefined);
  if (mismatches.length > 0) {
    const expected = [config.account && `account ${config.account}`, config.region && `region ${config.region}`].filter(Boolean).join(', ');
    throw new PayrelayConfigError(
      `stage "${config.stage}" deploys to ${expected} (its account and region in the stage configuration), but ${actualSource} ${mismatches.join(' and ')}: ` +
        `deploy with credentials of the stage's account and region (--profile, AWS_REGION), or correct the stage's account and region`,
    );
  }
  return { account: config.account ?? account, region: config.region ?? region };
}

/** The region and account of an ARN (`arn:<partition>:<service>:<region>:<account>:...`). */
function arnPlace(arn: string): { region: string; account: string } {
  const [, , , region = '', account = ''] = arn.split(':');
  return { region, account };
}

/**
 * Where an ARN is, as far as it differs from the deploy's known region and account: e.g.
 * `['region us-east-1', 'account 222222222222']`, empty when it is where the stacks deploy (or where
 * they deploy is unknown).
 */
function placeMismatches(arn: string, region: string | undefined, account: string | undefined): string[] {
  const place = arnPlace(arn);
  return [
    region !== undefined && place.region !== region ? `region ${place.region}` : undefined,
    account !== undefined && place.account !== account ? `account ${place.account}` : undefined,
  ].filter((text) => text !== undefined);
}

/**
 * The existing resources a stage names, checked against where its stacks deploy, as far as both are
 * known (an environment-agnostic synth checks nothing). The certificate of a regional API domain must be
 * in the stack's account and region, and so must an existing data key (`encryption.keyArn`), and
 * CloudWatch notifies only topics in its own region: those are errors. A topic in another account can
 * work (its policy must let this account's CloudWatch publish, and its key, if any, be usable by it),
 * so that is a warning to check, not a refusal.
 */
export function existingResourceProblems(config: PayrelayConfig, env: Environment | undefined): { errors: string[]; warnings: string[] } {
  const account = known(env?.account);
  const region = known(env?.region);
  const errors: string[] = [];
  const warnings: string[] = [];
  const deployTo = [account && `account ${account}`, region && `region ${region}`].filter(Boolean).join(', ');
  const certificateArn = config.api.domain?.certificateArn;
  if (certificateArn !== undefined) {
    const wrong = placeMismatches(certificateArn, region, account);
    if (wrong.length > 0) {
      errors.push(
        `api.domain.certificateArn: the certificate is in ${wrong.join(', ')}, but stage "${config.stage}" deploys to ${deployTo}: ` +
          'a regional API domain needs an ACM certificate issued in its own account and region (request or import it there)',
      );
    }
  }
  const keyArn = config.encryption.keyArn;
  if (keyArn !== undefined) {
    const wrong = placeMismatches(keyArn, region, account);
    if (wrong.length > 0) {
      errors.push(
        `encryption.keyArn: the key is in ${wrong.join(', ')}, but stage "${config.stage}" deploys to ${deployTo}: ` +
          "DynamoDB, SQS, Secrets Manager and CloudWatch Logs take only a KMS key of their own region, and payrelay grants the key to its roles by this account's IAM policies; " +
          "give a key in the stage's account and region, or leave keyArn out to create one",
      );
    }
  }
  for (const [index, previous] of config.encryption.previousKeyArns.entries()) {
    const wrong = placeMismatches(previous, region, account);
    if (wrong.length > 0) {
      errors.push(
        `encryption.previousKeyArns[${index}]: the key is in ${wrong.join(', ')}, but stage "${config.stage}" deploys to ${deployTo}: ` +
          "a previous key of this stage's stores is in its own account and region; check the ARN",
      );
    }
  }
  const boundary = config.permissionsBoundary;
  if (boundary !== undefined && boundary.startsWith('arn:')) {
    // An IAM ARN names no region; only its account can be wrong.
    const place = arnPlace(boundary);
    if (account !== undefined && place.account !== account) {
      errors.push(
        `permissionsBoundary: the policy is in account ${place.account}, but stage "${config.stage}" deploys to ${deployTo}: ` +
          "a role's permissions boundary must be a managed policy of the role's own account; give that account's policy (or just its name)",
      );
    }
  }
  const topicArn = config.alarms.topicArn;
  if (topicArn !== undefined) {
    const place = arnPlace(topicArn);
    if (region !== undefined && place.region !== region) {
      errors.push(
        `alarms.topicArn: the topic is in region ${place.region}, but stage "${config.stage}" deploys to ${deployTo}: ` +
          "CloudWatch alarms notify only SNS topics in their own region; give a topic in the stage's region",
      );
    }
    if (account !== undefined && place.account !== account) {
      warnings.push(
        `alarms.topicArn: the topic is in account ${place.account}, not in account ${account} where stage "${config.stage}" deploys: ` +
          "its policy must allow cloudwatch.amazonaws.com to publish for this account's alarms (and its KMS key, if any, to be used by them), " +
          'or no alarm is delivered; test it after the deploy (docs/alarms.md, "Where alarms go")',
      );
    }
  }
  return { errors, warnings };
}
