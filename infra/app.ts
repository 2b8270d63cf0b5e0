import { buildApp } from './build-app';
import { PayrelayConfigError } from './config';

// The entry of cdk.json (`npx tsx infra/app.ts`). A configuration error prints its own clear message.
try {
  buildApp().app.synth();
} catch (error) {
  if (!(error instanceof PayrelayConfigError)) throw error;
  console.error(error.message);
  process.exitCode = 1;
}
