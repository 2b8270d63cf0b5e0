import { run } from './program';

// Exit explicitly: idle keep-alive sockets of the SDK clients must not hold the process open.
process.exit(await run(process.argv));
