import * as path from 'node:path';
import { Duration, type RemovalPolicy } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { ISecurityGroup, IVpc } from 'aws-cdk-lib/aws-ec2';
import { SubnetType } from 'aws-cdk-lib/aws-ec2';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import type { FunctionDefinition } from '@shared/config/functions';
import type { TableDefinition } from '@shared/config/resources';
import { METRICS_NAMESPACE, METRICS_SERVICE } from '@shared/observability/metric-names';

/**
 * ESM bundles have no `require`; some CommonJS dependencies still call it (Powertools pulls a few),
 * so the banner gives the bundle a real one. Renamed import avoids clashing with bundled code.
 */
const ESM_REQUIRE_BANNER =
  "import { createRequire as __payrelayCreateRequire } from 'node:module'; const require = __payrelayCreateRequire(import.meta.url);";

export interface PayrelayFunctionProps {
  /** The function's entry, timeout and memory from shared/config/functions.ts. */
  readonly definition: FunctionDefinition;
  /** Directory holding functions/, shared/, tsconfig.json and package-lock.json. */
  readonly projectRoot: string;
  readonly logRetention: RetentionDays;
  readonly logRemovalPolicy: RemovalPolicy;
  /** POWERTOOLS_LOG_LEVEL. */
  readonly logLevel: string;
  /** Physical name prefix, e.g. `payrelay-dev`. */
  readonly namePrefix: string;
  /** The stage, a dimension of every payrelay metric (PAYRELAY_STAGE), so stages never share alarms. */
  readonly stage: string;
  /** Settings env vars; resource env vars are added by useTable/useQueue/useSecret with their grants. */
  readonly environment?: Record<string, string>;
  /** Present when static egress is on: the function runs in the VPC's private subnets. */
  readonly vpc?: IVpc;
  readonly securityGroups?: ISecurityGroup[];
}

/**
 * A payrelay Lambda function with the project's defaults: Node.js 22 on arm64, bundled locally by
 * esbuild (minified ESM with source maps, tsconfig path aliases honoured), X-Ray tracing, its own
 * log group with a retention, and the Powertools service, namespace and log level.
 */
export class PayrelayFunction extends NodejsFunction {
  constructor(scope: Construct, id: string, props: PayrelayFunctionProps) {
    const { definition, projectRoot } = props;
    const logGroup = new LogGroup(scope, `${id}Logs`, {
      retention: props.logRetention,
      removalPolicy: props.logRemovalPolicy,
    });
    super(scope, id, {
      functionName: `${props.namePrefix}-${definition.id}`,
      entry: path.join(projectRoot, definition.entry),
      handler: 'handler',
      projectRoot,
      depsLockFilePath: path.join(projectRoot, 'package-lock.json'),
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      timeout: Duration.seconds(definition.timeoutSeconds),
      memorySize: definition.memoryMb,
      tracing: Tracing.ACTIVE,
      logGroup,
      vpc: props.vpc,
      vpcSubnets: props.vpc ? { subnetType: SubnetType.PRIVATE_WITH_EGRESS } : undefined,
      securityGroups: props.securityGroups,
      environment: {
        POWERTOOLS_SERVICE_NAME: METRICS_SERVICE,
        POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
        POWERTOOLS_LOG_LEVEL: props.logLevel,
        PAYRELAY_STAGE: props.stage,
        // Stack traces point at the TypeScript sources through the bundled source maps.
        NODE_OPTIONS: '--enable-source-maps',
        ...props.environment,
      },
      bundling: {
        format: OutputFormat.ESM,
        target: 'node22',
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
      },
    });
  }
}

/** The access a function needs to a table. */
export type TableAccess = 'read' | 'readWrite';

/** A table together with its definition in shared/config/resources.ts (which names its indexes). */
export interface PayrelayTable {
  readonly table: ITable;
  readonly definition: TableDefinition;
}

/** Item-level DynamoDB actions. No streams, no table management, no PartiQL. */
export const TABLE_ACTIONS: Record<TableAccess, readonly string[]> = {
  read: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query', 'dynamodb:Scan', 'dynamodb:ConditionCheckItem', 'dynamodb:DescribeTable'],
  readWrite: [
    'dynamodb:GetItem',
    'dynamodb:BatchGetItem',
    'dynamodb:Query',
    'dynamodb:Scan',
    'dynamodb:ConditionCheckItem',
    'dynamodb:DescribeTable',
    'dynamodb:PutItem',
    'dynamodb:UpdateItem',
    'dynamodb:DeleteItem',
    'dynamodb:BatchWriteItem',
  ],
};

/**
 * Grants `fn` the table access it uses and sets the env var naming the table, in one step, so a
 * function never has a table name without the permission or a permission it has no name for.
 * Index access is granted per named index (no `index/*` wildcard).
 */
export function useTable(fn: NodejsFunction, envName: string, { table, definition }: PayrelayTable, access: TableAccess): void {
  const indexArns = definition.indexes.map((index) => `${table.tableArn}/index/${index.indexName}`);
  fn.addToRolePolicy(new PolicyStatement({ actions: [...TABLE_ACTIONS[access]], resources: [table.tableArn, ...indexArns] }));
  fn.addEnvironment(envName, table.tableName);
}

/** Grants read access to a secret and sets the env var holding its ARN. */
export function useSecret(fn: NodejsFunction, envName: string, secret: ISecret): void {
  secret.grantRead(fn);
  fn.addEnvironment(envName, secret.secretArn);
}

/** The access a function needs to a queue (consuming goes through the event source, not this). */
export type QueueAccess = 'send';

/** Grants the queue access a function uses and sets the env var holding the queue URL. */
export function useQueue(fn: NodejsFunction, envName: string, queue: IQueue, access: QueueAccess): void {
  if (access === 'send') queue.grantSendMessages(fn);
  fn.addEnvironment(envName, queue.queueUrl);
}
