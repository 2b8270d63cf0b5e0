import * as path from 'node:path';
import { Duration, type RemovalPolicy } from 'aws-cdk-lib';
import type { ISecurityGroup, IVpc } from 'aws-cdk-lib/aws-ec2';
import { SubnetType } from 'aws-cdk-lib/aws-ec2';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { KYC_GATE_BUILD_FLAG } from '@shared/config/build-flags';
import { FUNCTIONS, type FunctionDefinition } from '@shared/config/functions';
import { METRICS_NAMESPACE, METRICS_SERVICE } from '@shared/observability/metric-names';

/**
 * ESM bundles have no `require`; some CommonJS dependencies still call it (Powertools pulls a few),
 * so the banner gives the bundle a real one. Renamed import avoids clashing with bundled code.
 */
const ESM_REQUIRE_BANNER =
  "import { createRequire as __payrelayCreateRequire } from 'node:module'; const require = __payrelayCreateRequire(import.meta.url);";

/**
 * The X-Ray SDK build the bundles carry in place of the package's entry: only what a traced Lambda
 * function uses, which spares every traced cold start the rest (see the file's header). Relative to
 * the project root, where the bundling runs.
 */
export const XRAY_SDK_FOR_LAMBDA = './infra/bundling/xray-sdk-for-lambda.cjs';

/**
 * The context store that SDK build runs on in place of `cls-hooked/context`: the same namespace API
 * on Node's AsyncLocalStorage, without cls-hooked's process-wide async hook (see the file's header).
 */
export const CLS_CONTEXT_FOR_LAMBDA = './infra/bundling/cls-context-for-lambda.ts';

/**
 * `node:stream/web` resolved on first use, since middy 6 imports it at its top only for streamed
 * responses, which no payrelay function returns (see the file's header).
 */
export const STREAM_WEB_FOR_LAMBDA = './infra/bundling/stream-web-for-lambda.ts';

/** The esbuild aliases of every bundle: package (or package file) => the module bundled in its place. */
export const BUNDLE_ALIASES: Readonly<Record<string, string>> = {
  'aws-xray-sdk-core': XRAY_SDK_FOR_LAMBDA,
  'cls-hooked/context': CLS_CONTEXT_FOR_LAMBDA,
  'node:stream/web': STREAM_WEB_FOR_LAMBDA,
};

/**
 * The build-time constants (esbuild `define`) of a function's bundle: the worker of a stage without
 * KYC gating is built without the gate (see PayrelayFunctionProps.kycGating).
 */
export function bundleDefines(definition: FunctionDefinition, kycGating: boolean): Record<string, string> {
  return definition.id === FUNCTIONS.payoutWorker.id ? { [KYC_GATE_BUILD_FLAG]: JSON.stringify(kycGating ? 'on' : 'off') } : {};
}

export interface PayrelayFunctionProps {
  /** The function's entry, timeout and memory from shared/config/functions.ts. */
  readonly definition: FunctionDefinition;
  /** Directory holding functions/, shared/, tsconfig.json and package-lock.json. */
  readonly projectRoot: string;
  readonly logRetention: RetentionDays;
  readonly logRemovalPolicy: RemovalPolicy;
  /**
   * The stage's customer-managed key, which then encrypts the function's log group (CloudWatch Logs
   * uses it under the key policy's own statement, so the role needs nothing of it to write logs).
   */
  readonly logEncryptionKey?: IKey;
  /** POWERTOOLS_LOG_LEVEL. */
  readonly logLevel: string;
  /** Physical name prefix, e.g. `payrelay-dev`. */
  readonly namePrefix: string;
  /** The stage, a dimension of every payrelay metric (PAYRELAY_STAGE), so stages never share alarms. */
  readonly stage: string;
  /** Settings env vars; resource env vars are added with their grants by infra/access.ts. */
  readonly environment?: Record<string, string>;
  /** Present when static egress is on: the function runs in the VPC's private subnets. */
  readonly vpc?: IVpc;
  readonly securityGroups?: ISecurityGroup[];
  /** Concurrency reserved for (and capping) this function; left out, it shares the account's pool. */
  readonly reservedConcurrentExecutions?: number;
  /**
   * The stage's KYC gating (default off). The worker's bundle carries the KYC gate only when it is on:
   * otherwise esbuild builds it with KYC_GATE_BUILD_FLAG set to "off", which leaves the gate's code
   * out, and the worker refuses KYC_GATING=on at start (shared/config/worker.ts).
   */
  readonly kycGating?: boolean;
  /**
   * X-Ray tracing (the stage's `tracing`, default on). Off: no active tracing, no X-Ray grant, and
   * POWERTOOLS_TRACE_ENABLED=false, so the function never loads the tracer or the X-Ray SDK.
   */
  readonly tracing?: boolean;
}

/** Functions a stage deploys only when a setting asks for them (`kycCatchUp`), or leaves out (`kyc.enabled: false`). */
export type OptionalFunctionId = 'kyc-catch-up' | 'kyc-callback';

/** The handlers of payrelay, by function id (the stateless stack builds them, monitoring watches them). */
export type PayrelayFunctions = Record<Exclude<FunctionDefinition['id'], OptionalFunctionId>, PayrelayFunction> &
  Partial<Record<OptionalFunctionId, PayrelayFunction>>;

/**
 * ENI management Lambda needs for a function in a VPC (what AWSLambdaVPCAccessExecutionRole grants,
 * without its `logs:*` on every log group). EC2 offers no resource-level scoping for these.
 */
const VPC_ENI_ACTIONS = [
  'ec2:CreateNetworkInterface',
  'ec2:DescribeNetworkInterfaces',
  'ec2:DescribeSubnets',
  'ec2:DeleteNetworkInterface',
  'ec2:AssignPrivateIpAddresses',
  'ec2:UnassignPrivateIpAddresses',
];

/**
 * A payrelay Lambda function with the project's defaults: Node.js 24 (nodejs24.x) on arm64, bundled locally by
 * esbuild (minified ESM with source maps, tsconfig path aliases honoured, the X-Ray SDK's Lambda
 * build on AsyncLocalStorage), X-Ray tracing, its own
 * log group with a retention, and the Powertools service, namespace and log level.
 *
 * Its role starts empty: no AWS-managed policy (their log permissions cover every log group).
 * It may write only to its own log group; infra/access.ts adds the data it may touch.
 */
export class PayrelayFunction extends NodejsFunction {
  constructor(scope: Construct, id: string, props: PayrelayFunctionProps) {
    const { definition, projectRoot } = props;
    const logGroup = new LogGroup(scope, `${id}Logs`, {
      retention: props.logRetention,
      encryptionKey: props.logEncryptionKey,
      removalPolicy: props.logRemovalPolicy,
    });
    const traced = props.tracing ?? true;
    const role = new Role(scope, `${id}Role`, {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `${props.namePrefix}-${definition.id}: its own log group, ${traced ? 'X-Ray, ' : ''}and the grants of infra/access.ts`,
    });
    logGroup.grantWrite(role);
    if (props.vpc) role.addToPrincipalPolicy(new PolicyStatement({ actions: VPC_ENI_ACTIONS, resources: ['*'] }));
    super(scope, id, {
      functionName: `${props.namePrefix}-${definition.id}`,
      entry: path.join(projectRoot, definition.entry),
      handler: 'handler',
      projectRoot,
      depsLockFilePath: path.join(projectRoot, 'package-lock.json'),
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      timeout: Duration.seconds(definition.timeoutSeconds),
      memorySize: definition.memoryMb,
      tracing: traced ? Tracing.ACTIVE : Tracing.DISABLED,
      logGroup,
      role,
      vpc: props.vpc,
      vpcSubnets: props.vpc ? { subnetType: SubnetType.PRIVATE_WITH_EGRESS } : undefined,
      securityGroups: props.securityGroups,
      reservedConcurrentExecutions: props.reservedConcurrentExecutions,
      environment: {
        POWERTOOLS_SERVICE_NAME: METRICS_SERVICE,
        POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
        POWERTOOLS_LOG_LEVEL: props.logLevel,
        PAYRELAY_STAGE: props.stage,
        // Stack traces point at the TypeScript sources through the bundled source maps.
        NODE_OPTIONS: '--enable-source-maps',
        ...(traced ? {} : { POWERTOOLS_TRACE_ENABLED: 'false' }),
        ...props.environment,
      },
      bundling: {
        format: OutputFormat.ESM,
        target: 'node24',
        // Prefer the ESM builds of dependencies (middy 6 ships ESM only).
        mainFields: ['module', 'main'],
        banner: ESM_REQUIRE_BANNER,
        minify: true,
        sourceMap: true,
        sourcesContent: false,
        tsconfig: path.join(projectRoot, 'tsconfig.json'),
        // Bundle the AWS SDK too, so the deployed code runs the SDK version the tests ran.
        bundleAwsSDK: true,
        externalModules: [],
        esbuildArgs: { '--alias': Object.entries(BUNDLE_ALIASES).map(([from, to]) => `${from}=${to}`) },
        define: bundleDefines(definition, props.kycGating ?? false),
      },
    });
  }
}
