import { run } from './program';

const code = await run(process.argv);
// Drain stdout and stderr before exiting: process.exit() drops what a pipe has not taken yet, which
// cut `payouts list --json | jq` at 64 KiB. A write's callback runs once everything before it is flushed.
const drained = (stream: NodeJS.WriteStream): Promise<void> => new Promise((resolve) => stream.write('', () => resolve()));
await Promise.all([drained(process.stdout), drained(process.stderr)]);
// Exit explicitly: idle keep-alive sockets of the SDK clients must not hold the process open.
process.exit(code);
