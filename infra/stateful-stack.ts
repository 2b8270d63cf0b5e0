import { Annotations, ArnFormat, Duration, RemovalPolicy, Stack, type StackProps, Token, Validations } from 'aws-cdk-lib';
import { AttributeType, BillingMode, ProjectionType, StreamViewType, Table, TableEncryption, type ITable } from 'aws-cdk-lib/aws-dynamodb';
import { DomainName, EndpointType, SecurityPolicy } from 'aws-cdk-lib/aws-apigatewayv2';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import { CfnEIP, FlowLogDestination, GatewayVpcEndpointAwsService, FlowLogTrafficType, NatProvider, SubnetType, Vpc, type IVpc } from 'aws-cdk-lib/aws-ec2';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { type IKey, Key } from 'aws-cdk-lib/aws-kms';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Secret, type CfnSecret, type ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { Queue, QueueEncryption, type IQueue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { FUNCTIONS } from '@shared/config/functions';
import {
  ACCOUNT_KEY_SECRET,
  CALLBACK_APPLY_FAILURES_QUEUE,
  COLLECTIONS_TABLE,
  EVENTS_TABLE,
  KYC_SECRET,
  KYC_TABLE,
  CHECKS_QUEUE,
  PAYOUTS_QUEUE,
  PAYOUTS_TABLE,
  PROVIDER_SECRET,
  QUARANTINE_TABLE,
  TABLES,
  resourceName,
  type IndexDefinition,
  type KeyDefinition,
  type QueueDefinition,
  type TableDefinition,
} from '@shared/config/resources';
import { PayrelayConfigError, type PayrelayConfig } from './config';
import type { GrantableResources } from './access';
import { stackNames } from './outputs';

/** SQS must not hand a message to a second worker while the first may still run: AWS's rule is >= 6x. */
export const VISIBILITY_TIMEOUT_FACTOR = 6;

/**
 * How long SQS reuses a data key of the stage's KMS key before it calls KMS again (SQS's own default,
 * written out because docs/deploy.md reasons from it). It bounds a queue's KMS requests, however busy,
 * to about 2 per sending role and 1 per receiving role every 5 minutes (SQS's own estimate), so KMS
 * costs cents a month and never throttles a burst of payouts; and a disabled or revoked key stops the
 * queues within about those 5 minutes. Longer (up to 24 hours) saves cents and keeps a revoked key's
 * cached data keys usable for longer.
 */
export const QUEUE_DATA_KEY_REUSE = Duration.minutes(5);

/** A table together with its definition in shared/config/resources.ts (which names its indexes). */
export interface PayrelayTable {
  readonly table: ITable;
  readonly definition: TableDefinition;
}

/** Everything the stateless stack consumes from the stateful one. */
export interface PayrelayStatefulResources {
  readonly payoutsTable: PayrelayTable;
  readonly eventsTable: PayrelayTable;
  readonly kycTable: PayrelayTable;
  readonly quarantineTable: PayrelayTable;
  readonly collectionsTable: PayrelayTable;
  readonly payoutsQueue: IQueue;
  readonly payoutsDlq: IQueue;
  /** Stream records the callback applier gave up on. */
  readonly callbackApplyFailures: IQueue;
  /** Delayed checks of open payouts, drained by the payout checker. */
  readonly checksQueue: IQueue;
  /** Checks that failed every receive (reminders only: the reconciler's sweep still finds their payouts). */
  readonly checksDlq: IQueue;
  readonly providerSecret: ISecret;
  readonly kycSecret: ISecret;
  /** The key of the payouts' account fingerprints: generated once, never rotated, kept with the data. */
  readonly accountKeySecret: ISecret;
  /** Every table, queue and secret by its id in shared/config/resources.ts: what infra/access.ts grants name. */
  readonly byId: GrantableResources;
  /** Present with `api.domain`: the callback API's custom domain, kept with the data so its DNS target never changes. */
  readonly apiDomain?: DomainName;
  /**
   * The stage's customer-managed KMS key (`encryption.key: 'customer-managed'`) of every table, queue,
   * secret and log group; undefined with AWS-managed encryption.
   */
  readonly dataKey?: IKey;
  /** Present when static egress is on. */
  readonly vpc?: IVpc;
  /** The Elastic IPs provider calls leave from (empty without static egress). */
  readonly egressIps: readonly string[];
}

export interface PayrelayStatefulStackProps extends StackProps {
  readonly config: PayrelayConfig;
}

const attribute = (key: KeyDefinition) => ({ name: key.name, type: key.type === 'S' ? AttributeType.STRING : AttributeType.NUMBER });

function projection(index: IndexDefinition): { projectionType: ProjectionType; nonKeyAttributes?: string[] } {
  if (index.projection === 'ALL') return { projectionType: ProjectionType.ALL };
  if (index.projection === 'KEYS_ONLY') return { projectionType: ProjectionType.KEYS_ONLY };
  return { projectionType: ProjectionType.INCLUDE, nonKeyAttributes: [...index.projection] };
}

/**
 * The resources that hold data or identity: the tables, the queues and their DLQs, the secrets, with
 * `encryption.key: 'customer-managed'` the KMS key of all of them, with static egress the VPC and
 * the Elastic IPs the provider whitelists, and with `api.domain` the callback API's custom domain.
 * Kept apart from the functions so a redeploy of code never touches them; RETAIN unless the stage
 * says otherwise.
 */
export class PayrelayStatefulStack extends Stack {
  readonly resources: PayrelayStatefulResources;
  private readonly egressIps: string[] = [];

  constructor(scope: Construct, id: string, props: PayrelayStatefulStackProps) {
    super(scope, id, props);
    const { config } = props;
    const removalPolicy = config.removalPolicy === 'retain' ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;
    const name = (resourceId: string) => resourceName(config.stage, resourceId);
    const dataKey = this.dataKey(config, removalPolicy);

    const tables = new Map<string, PayrelayTable>();
    for (const definition of TABLES as readonly TableDefinition[]) {
      tables.set(definition.id, { table: this.table(definition, name(definition.id), removalPolicy, config.deferIndexes, dataKey), definition });
    }
    const tableById = (tableId: string): PayrelayTable => {
      const found = tables.get(tableId);
      if (!found) throw new Error(`table "${tableId}" is missing from TABLES in shared/config/resources.ts`);
      return found;
    };

    const { queue: payoutsQueue, deadLetterQueue: payoutsDlq } = this.queueWithDeadLetters('Payouts', PAYOUTS_QUEUE, {
      visibilityTimeoutSeconds: FUNCTIONS.payoutWorker.timeoutSeconds * VISIBILITY_TIMEOUT_FACTOR,
      maxReceiveCount: config.maxReceiveCount,
      name,
      removalPolicy,
      dataKey,
    });

    // Encrypted like the payouts queues; it holds stream records (event ids and their bodies).
    const callbackApplyFailures = new Queue(this, 'CallbackApplyFailures', {
      queueName: name(CALLBACK_APPLY_FAILURES_QUEUE.id),
      ...queueEncryption(dataKey),
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
      removalPolicy,
    });
    Validations.of(callbackApplyFailures).acknowledge({
      id: 'AwsSolutions::AwsSolutions-SQS3',
      reason: "This queue is itself a failure destination (the callback applier's stream records that exhausted their retries); nothing consumes it automatically, so it needs no dead-letter queue.",
    });

    const { queue: checksQueue, deadLetterQueue: checksDlq } = this.queueWithDeadLetters('PayoutChecks', CHECKS_QUEUE, {
      visibilityTimeoutSeconds: FUNCTIONS.payoutChecker.timeoutSeconds * VISIBILITY_TIMEOUT_FACTOR,
      maxReceiveCount: CHECKS_QUEUE.defaultMaxReceiveCount,
      name,
      removalPolicy,
      dataKey,
    });

    const providerSecret = this.emptySecret('ProviderSecret', name(PROVIDER_SECRET.id), `payrelay ${config.stage}: payout provider credentials (${PROVIDER_SECRET.fields.join(', ')}). Created empty; put the values with \`payrelay secrets put provider\`.`, removalPolicy, dataKey);
    const kycSecret = this.emptySecret('KycSecret', name(KYC_SECRET.id), `payrelay ${config.stage}: KYC app id and callback URL token (${KYC_SECRET.fields.join(', ')}). Created empty; create the token once with \`payrelay secrets put kyc --new-callback-token\`.`, removalPolicy, dataKey);
    Validations.of(providerSecret).acknowledge({
      id: 'AwsSolutions::AwsSolutions-SMG4',
      reason:
        'The payout provider issues these keys by a one-time e-mail link (ResetPartnerKeys); no rotation Lambda can obtain them. Operators rotate with `payrelay partner reset-keys` then `payrelay secrets put provider` (docs/deploy.md).',
    });
    Validations.of(kycSecret).acknowledge({
      id: 'AwsSolutions::AwsSolutions-SMG4',
      reason:
        'The callback token is part of the callback URL registered on every KYC order: rotating it automatically would make the KYC service call old URLs that are then refused. It changes only by an operator decision (docs/deploy.md).',
    });

    // Secrets Manager generates the key at the first deploy: the template holds only the generator's
    // settings, never the value. A later deploy keeps it as long as these settings stay as they are:
    // CloudFormation generates a new value when GenerateSecretString changes (the synth test pins it).
    const accountKeySecret = new Secret(this, 'AccountKeySecret', {
      secretName: name(ACCOUNT_KEY_SECRET.id),
      description: `payrelay ${config.stage}: the key of the payout items' account fingerprints (${ACCOUNT_KEY_SECRET.fields.join(', ')}). Generated at the first deploy; never change or rotate it.`,
      generateSecretString: { secretStringTemplate: '{}', generateStringKey: 'key', passwordLength: 64, excludePunctuation: true },
      encryptionKey: dataKey,
      removalPolicy,
    });
    Validations.of(accountKeySecret).acknowledge({
      id: 'AwsSolutions::AwsSolutions-SMG4',
      reason:
        "The key of the account fingerprints stored on every payout item: a rotated key would make each stored fingerprint unequal to its own account's, so a redelivered request for a stored payout would be refused as a conflict. It is never sent anywhere and only the worker, enqueue and retry read it.",
    });

    const vpc = config.egress.staticIps ? this.staticEgress(config, name, removalPolicy, config.logRetentionDays as RetentionDays, dataKey) : undefined;

    let apiDomain: DomainName | undefined;
    if (config.api.domain) {
      // Here, not in the app stack: destroying and recreating the app stack only re-maps the new
      // API to this domain, so the callback URLs and the DNS record stay as they are.
      apiDomain = new DomainName(this, 'CallbackApiDomain', {
        domainName: config.api.domain.name,
        certificate: Certificate.fromCertificateArn(this, 'CallbackApiCertificate', config.api.domain.certificateArn),
        endpointType: EndpointType.REGIONAL,
        securityPolicy: SecurityPolicy.TLS_1_2,
      });
      apiDomain.applyRemovalPolicy(removalPolicy);
    }

    this.resources = {
      payoutsTable: tableById(PAYOUTS_TABLE.id),
      eventsTable: tableById(EVENTS_TABLE.id),
      kycTable: tableById(KYC_TABLE.id),
      quarantineTable: tableById(QUARANTINE_TABLE.id),
      collectionsTable: tableById(COLLECTIONS_TABLE.id),
      payoutsQueue,
      payoutsDlq,
      callbackApplyFailures,
      checksQueue,
      checksDlq,
      providerSecret,
      kycSecret,
      accountKeySecret,
      apiDomain,
      dataKey,
      byId: {
        tables: Object.fromEntries([...tables].map(([id, { table }]) => [id, table])),
        queues: {
          [PAYOUTS_QUEUE.id]: payoutsQueue,
          [PAYOUTS_QUEUE.deadLetterQueue.id]: payoutsDlq,
          [CALLBACK_APPLY_FAILURES_QUEUE.id]: callbackApplyFailures,
          [CHECKS_QUEUE.id]: checksQueue,
          [CHECKS_QUEUE.deadLetterQueue.id]: checksDlq,
        },
        secrets: { [PROVIDER_SECRET.id]: providerSecret, [KYC_SECRET.id]: kycSecret, [ACCOUNT_KEY_SECRET.id]: accountKeySecret },
        dataKey,
      },
      vpc,
      egressIps: this.egressIps,
    };
  }

  /**
   * The stage's customer-managed key, or undefined with `encryption.key: 'aws-managed'`. Created here
   * (rotated yearly, kept with the data by `removalPolicy`), or the existing key of `encryption.keyArn`,
   * whose policy is its owner's to write: docs/deploy.md lists what it must allow.
   */
  private dataKey(config: PayrelayConfig, removalPolicy: RemovalPolicy): IKey | undefined {
    if (config.encryption.key !== 'customer-managed') return undefined;
    if (config.encryption.keyArn !== undefined) return Key.fromKeyArn(this, 'DataKey', config.encryption.keyArn);
    const stacks = stackNames(config.stage);
    const key = new Key(this, 'DataKey', {
      alias: `payrelay-${config.stage}-data`,
      description: `payrelay ${config.stage}: encrypts the tables, queues, secrets and log groups of the stacks ${stacks.stateful} and ${stacks.stateless}`,
      enableKeyRotation: true,
      removalPolicy,
    });
    // CloudWatch Logs encrypts with the key under its own service principal, never the writer's role,
    // so the key policy must allow it, and only for log groups named `payrelay-<stage>-*`. None of
    // payrelay's has a fixed name: CloudFormation names each `<stack name>-<logical id>-<suffix>`, and
    // both stack names start with `payrelay-<stage>`. (A name outside the pattern fails the log
    // group's creation, not silently. The pattern also takes a stage named `<stage>-...`, whose log
    // groups use their own stage's key unless someone associates them with this one.)
    key.addToResourcePolicy(
      new PolicyStatement({
        sid: 'AllowThisStageLogGroups',
        principals: [new ServicePrincipal(`logs.${this.region}.amazonaws.com`)],
        actions: ['kms:Encrypt*', 'kms:Decrypt*', 'kms:ReEncrypt*', 'kms:GenerateDataKey*', 'kms:Describe*'],
        resources: ['*'],
        conditions: {
          ArnLike: {
            'kms:EncryptionContext:aws:logs:arn': this.formatArn({
              service: 'logs',
              resource: 'log-group',
              resourceName: `${stacks.stateless}-*`,
              arnFormat: ArnFormat.COLON_RESOURCE_NAME,
            }),
          },
        },
      }),
    );
    return key;
  }

  /**
   * A queue and its dead-letter queue (construct ids `<prefix>Queue`, `<prefix>Dlq`), both encrypted
   * and TLS-only. The DLQ keeps messages 14 days, the longest SQS allows: a poison message must wait
   * for a person, not expire.
   */
  private queueWithDeadLetters(
    prefix: string,
    definition: QueueDefinition,
    options: {
      visibilityTimeoutSeconds: number;
      maxReceiveCount: number;
      name: (resourceId: string) => string;
      removalPolicy: RemovalPolicy;
      dataKey: IKey | undefined;
    },
  ): { queue: Queue; deadLetterQueue: Queue } {
    const { name, removalPolicy } = options;
    const deadLetterQueue = new Queue(this, `${prefix}Dlq`, {
      queueName: name(definition.deadLetterQueue.id),
      ...queueEncryption(options.dataKey),
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
      removalPolicy,
    });
    const queue = new Queue(this, `${prefix}Queue`, {
      queueName: name(definition.id),
      ...queueEncryption(options.dataKey),
      enforceSSL: true,
      visibilityTimeout: Duration.seconds(options.visibilityTimeoutSeconds),
      retentionPeriod: Duration.seconds(definition.retentionSeconds),
      deadLetterQueue: { queue: deadLetterQueue, maxReceiveCount: options.maxReceiveCount },
      removalPolicy,
    });
    return { queue, deadLetterQueue };
  }

  /**
   * A secret the template never gives a value: no SecretString and no GenerateSecretString (the
   * Secret construct would add a generator by default), so no deploy can overwrite the stored keys
   * or regenerate the callback token. Values are put with `payrelay secrets put`.
   */
  private emptySecret(id: string, secretName: string, description: string, removalPolicy: RemovalPolicy, encryptionKey: IKey | undefined): Secret {
    const secret = new Secret(this, id, { secretName, description, encryptionKey, removalPolicy });
    (secret.node.defaultChild as CfnSecret).addPropertyDeletionOverride('GenerateSecretString');
    return secret;
  }

  private table(definition: TableDefinition, tableName: string, removalPolicy: RemovalPolicy, deferIndexes: readonly string[], dataKey: IKey | undefined): Table {
    const table = new Table(this, `${definition.id[0]?.toUpperCase()}${definition.id.slice(1)}Table`, {
      tableName,
      partitionKey: attribute(definition.partitionKey),
      sortKey: definition.sortKey ? attribute(definition.sortKey) : undefined,
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      ...(dataKey ? { encryption: TableEncryption.CUSTOMER_MANAGED, encryptionKey: dataKey } : { encryption: TableEncryption.AWS_MANAGED }),
      timeToLiveAttribute: definition.timeToLiveAttribute,
      stream: definition.stream === 'NEW_IMAGE' ? StreamViewType.NEW_IMAGE : undefined,
      deletionProtection: removalPolicy === RemovalPolicy.RETAIN,
      removalPolicy,
    });
    for (const index of definition.indexes) {
      if (deferIndexes.includes(index.indexName)) {
        Annotations.of(this).addWarningV2(
          'payrelay:deferred-index',
          `index ${index.indexName} of ${tableName} is left out of this deploy (-c deferIndexes): deploy again without it before deploying the app stack (docs/deploy.md)`,
        );
        continue;
      }
      table.addGlobalSecondaryIndex({
        indexName: index.indexName,
        partitionKey: attribute(index.partitionKey),
        sortKey: index.sortKey ? attribute(index.sortKey) : undefined,
        ...projection(index),
      });
    }
    return table;
  }

  /**
   * A VPC whose private subnets reach the internet only through NAT gateways holding Elastic IPs
   * created here (or adopted from `egress.elasticIps`), so the IPs survive NAT replacement, are
   * known before the first call, and every IP listed in EgressIps is one a NAT gateway uses.
   */
  private staticEgress(config: PayrelayConfig, name: (id: string) => string, removalPolicy: RemovalPolicy, retention: RetentionDays, dataKey: IKey | undefined): Vpc {
    const count = config.egress.natGateways;
    const zones = this.availabilityZones.length;
    if (count > zones) {
      // The VPC would place NAT gateways in `zones` AZs only; the extra IPs would be allocated,
      // paid for and sent to the provider without ever carrying a call.
      throw new PayrelayConfigError(
        `invalid payrelay configuration: egress.natGateways: ${count} NAT gateways need ${count} availability zones, but ${this.stackName} has ${zones}` +
          (Token.isUnresolved(this.region) ? ' (an environment-agnostic stack always has 2: deploy with an account and region to use 3)' : '') +
          `; set natGateways to at most ${zones}`,
      );
    }
    const allocations =
      config.egress.elasticIps?.map((eip) => ({ allocationId: eip.allocationId, publicIp: eip.publicIp })) ??
      Array.from({ length: count }, (_, i) => {
        const eip = new CfnEIP(this, `EgressIp${i + 1}`, { domain: 'vpc', tags: [{ key: 'Name', value: name(`egress-${i + 1}`) }] });
        eip.applyRemovalPolicy(removalPolicy);
        return { allocationId: eip.attrAllocationId, publicIp: eip.attrPublicIp };
      });
    this.egressIps.push(...allocations.map((a) => a.publicIp));
    const vpc = new Vpc(this, 'EgressVpc', {
      vpcName: name('egress'),
      maxAzs: Math.max(2, count),
      natGateways: count,
      natGatewayProvider: NatProvider.gateway({ eipAllocationIds: allocations.map((a) => a.allocationId) }),
      subnetConfiguration: [
        { name: 'public', subnetType: SubnetType.PUBLIC, cidrMask: 24 },
        { name: 'private', subnetType: SubnetType.PRIVATE_WITH_EGRESS, cidrMask: 22 },
      ],
    });
    // DynamoDB traffic takes the free gateway endpoint instead of paying NAT data processing.
    vpc.addGatewayEndpoint('DynamoDbEndpoint', { service: GatewayVpcEndpointAwsService.DYNAMODB });
    vpc.addFlowLog('FlowLog', {
      destination: FlowLogDestination.toCloudWatchLogs(new LogGroup(this, 'FlowLogs', { retention, encryptionKey: dataKey, removalPolicy })),
      trafficType: FlowLogTrafficType.ALL,
    });
    return vpc;
  }
}

/**
 * A queue's encryption: SQS-managed (SSE-SQS), or the stage's key with its data key reused for
 * QUEUE_DATA_KEY_REUSE.
 */
function queueEncryption(dataKey: IKey | undefined): { encryption: QueueEncryption; encryptionMasterKey?: IKey; dataKeyReuse?: Duration } {
  return dataKey
    ? { encryption: QueueEncryption.KMS, encryptionMasterKey: dataKey, dataKeyReuse: QUEUE_DATA_KEY_REUSE }
    : { encryption: QueueEncryption.SQS_MANAGED };
}
