import type { Command } from 'commander';
import { callsNoAws } from '../aws-options';
import { withExample } from '../context';
import { jsonText, printText } from '../output';

/** `payrelay schema payout-request`: machine-readable contracts, printed for other programs. */
export function registerSchemaCommands(program: Command): void {
  const schema = withExample(
    program.command('schema').description('print machine-readable contracts (JSON Schema) for other programs'),
    'payrelay schema payout-request > payout-request.schema.json',
  );
  withExample(callsNoAws(schema.command('payout-request')), 'payrelay schema payout-request > payout-request.schema.json')
    .description('print the JSON Schema (draft 2020-12) of the payout request message, generated from the schema the worker validates with')
    .action(async () => {
      const { payoutRequestJsonSchema } = await import('@shared/messages/payout-request-json-schema');
      printText(jsonText(payoutRequestJsonSchema(), 2));
    });
}
