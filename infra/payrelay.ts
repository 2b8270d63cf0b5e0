import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Annotations, type Environment, type Stack, Tags } from 'aws-cdk-lib';
import { ManagedPolicy, PermissionsBoundary } from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { type PayrelayConfig, type PayrelayConfigInput, PayrelayConfigError, isPlaceholderUrl, parsePayrelayConfig } from './config';
import { existingResourceProblems, stageEnvironment } from './environment';
import { stackNames } from './outputs';
import { PayrelayStatefulStack } from './stateful-stack';
import { PayrelayStatelessStack } from './stateless-stack';

/** The repository root (holds functions/, shared/, tsconfig.json, package-lock.json). */
export const PAYRELAY_PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Props of the payrelay construct: the deployment configuration (validated at synth time, see
 * infra/config.ts for every key and default) plus where and from what to build it.
 */
export type PayrelayProps = PayrelayConfigInput & {
  /**
   * Account and region of both stacks; omitted, the stacks are environment-agnostic, or bound to the
   * configuration's `account` and `region` when it gives them (an `env` that contradicts those is refused).
   */
  readonly env?: Environment;
  /** Where functions/, shared/ and package-lock.json live; defaults to this repository. */
  readonly projectRoot?: string;
};

/**
 * A whole payrelay deployment: a stateful stack (tables, queues, secrets, egress IPs) and a stateless
 * stack (functions, HTTP API, schedule, alarms, dashboard) that consumes it by reference. Create it
 * under an App or a Stage (it creates stacks, so not inside a Stack).
 *
 * @example
 * new Payrelay(app, 'PayrelayProd', {
 *   stage: 'prod',
 *   payoutApiBaseUrl: 'https://payouts.example.com',
 *   kycApiBaseUrl: 'https://kyc.example.com',
 *   egress: { staticIps: true, natGateways: 2 },
 *   alarms: { email: 'oncall@example.com' },
 * });
 */
export class Payrelay extends Construct {
  readonly config: PayrelayConfig;
  readonly stateful: PayrelayStatefulStack;
  /**
   * Undefined when `deferIndexes` names an index: that synth is for deploying the data stack alone, and
   * functions deployed beside a missing index would fail when they query it.
   */
  readonly stateless?: PayrelayStatelessStack;

  constructor(scope: Construct, id: string, props: PayrelayProps) {
    super(scope, id);
    const { env, projectRoot, ...configInput } = props;
    const source = `props of ${this.node.path}`;
    this.config = parsePayrelayConfig(configInput, source);
    const names = stackNames(this.config.stage);
    const stackEnv = stageEnvironment(this.config, env ?? {}, `the env given to ${this.node.path} is`) ?? env;
    const { errors, warnings } = existingResourceProblems(this.config, stackEnv);
    if (errors.length > 0) throw new PayrelayConfigError(`invalid payrelay configuration (${source}):\n  - ${errors.join('\n  - ')}`);

    this.stateful = new PayrelayStatefulStack(this, 'Stateful', {
      stackName: names.stateful,
      description: `payrelay ${this.config.stage}: tables, queues, secrets and egress IPs (data; retained by default)`,
      env: stackEnv,
      config: this.config,
    });
    if (this.config.deferIndexes.length > 0) {
      Annotations.of(this.stateful).addWarningV2(
        'payrelay:app-stack-left-out',
        `the app stack ${names.stateless} is left out of this synth (-c deferIndexes): only ${this.stateful.node.path} can be deployed with it (docs/deploy.md)`,
      );
      this.tag(this.stateful);
      return;
    }
    this.stateless = new PayrelayStatelessStack(this, 'Stateless', {
      stackName: names.stateless,
      description: `payrelay ${this.config.stage}: functions, callback API, schedule, alarms and dashboard`,
      env: stackEnv,
      config: this.config,
      stateful: this.stateful.resources,
      projectRoot: projectRoot ?? PAYRELAY_PROJECT_ROOT,
    });
    this.stateless.addStackDependency(this.stateful, 'functions reference the tables, queues and secrets');

    this.tag(this.stateful);
    this.tag(this.stateless);
    for (const warning of warnings) Annotations.of(this.stateless).addWarningV2('payrelay:alarm-topic-account', warning);
    // A stage without KYC calls no KYC service, so the address it may keep is not warned about.
    for (const key of this.config.kyc.enabled ? (['payoutApiBaseUrl', 'kycApiBaseUrl'] as const) : (['payoutApiBaseUrl'] as const)) {
      const url = this.config[key];
      if (url !== undefined && isPlaceholderUrl(url)) {
        Annotations.of(this.stateless).addWarningV2(
          `payrelay:placeholder-${key}`,
          `${key} is a placeholder (${url}): set the provider's address in infra/stages.ts or with -c ${key}=... before going live.`,
        );
      }
    }
  }

  /**
   * What every resource of a stack carries: payrelay's tags and the stage's own, and, with
   * `permissionsBoundary`, that boundary on every IAM role (CDK's helper roles included, which the
   * PermissionsBoundary aspect reaches as well).
   */
  private tag(stack: Stack): void {
    Tags.of(stack).add('app', 'payrelay');
    Tags.of(stack).add('stage', this.config.stage);
    for (const [key, value] of Object.entries(this.config.tags)) Tags.of(stack).add(key, value);
    const boundary = this.config.permissionsBoundary;
    if (boundary !== undefined) {
      const policy = boundary.startsWith('arn:')
        ? ManagedPolicy.fromManagedPolicyArn(stack, 'PermissionsBoundary', boundary)
        : ManagedPolicy.fromManagedPolicyName(stack, 'PermissionsBoundary', boundary);
      PermissionsBoundary.of(stack).apply(policy);
    }
  }
}
