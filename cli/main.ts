import { run } from './program';

// A reader that stops early (`payrelay payouts list | head`) closes the pipe: the rest of the output
// has nowhere to go, which is no failure of the command. Drop it quietly instead of dying on EPIPE
// with a stack trace; the command still finishes its work and exits with its own code.
const readerGone = (error: NodeJS.ErrnoException): void => {
  if (error.code !== 'EPIPE' && error.code !== 'ERR_STREAM_DESTROYED') throw error;
};
process.stdout.on('error', readerGone);
process.stderr.on('error', readerGone);

const code = await run(process.argv);
// Drain stdout and stderr before exiting: process.exit() drops what a pipe has not taken yet, which
// cut `payouts list --json | jq` at 64 KiB. A write's callback runs once everything before it is flushed.
const drained = (stream: NodeJS.WriteStream): Promise<void> => new Promise((resolve) => stream.write('', () => resolve()));
await Promise.all([drained(process.stdout), drained(process.stderr)]);
// Exit explicitly: idle keep-alive sockets of the SDK clients must not hold the process open.
process.exit(code);
