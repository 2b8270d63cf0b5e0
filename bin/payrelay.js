#!/usr/bin/env node
// Launcher for the `payrelay` CLI: registers tsx with the repository's tsconfig (for the @shared/...
// aliases) and runs the TypeScript entry point directly, so `npx payrelay` works right after `npm ci`.
import { fileURLToPath } from 'node:url';
import { register } from 'tsx/esm/api';

// Lambda runs Node 24; the locked SDK supports the local Node 20, so its notice is noise here.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
register({ tsconfig: fileURLToPath(new URL('../tsconfig.json', import.meta.url)) });
await import(new URL('../cli/main.ts', import.meta.url).href);
