#!/usr/bin/env node
// The package's bin is this file rather than dist/main.js so that `npm ci` on a fresh clone links
// it (npm skips bins whose file does not exist yet, and dist/ exists only after the build).
import('../dist/main.js').catch((error) => {
  if (error?.code === 'ERR_MODULE_NOT_FOUND' && /[\\/]dist[\\/](main|client)\.js/.test(String(error.message))) {
    process.stderr.write('herald is not built yet: run `npm run build` in the repository root\n');
    process.exit(1);
  }
  throw error;
});
