// Bundles the agent-tools binary, from src/cli/main.ts (`npm run build`): one CommonJS file, dist/cli/agent-tools.cjs,
// run by a small launcher, dist/cli/main.js (src/cli/launcher.ts), from V8's code cache.
//
// Why: the CLI imports a large part of Effect, @effect/cli, the MCP SDK and Ajv; Node resolving and loading
// hundreds of ES modules one by one takes about 1.6 s before the first line of output, the same code in one file
// about 0.6 s. And the CLI's own dependencies (@effect/cli, the printers, @effect/platform-node) are dev
// dependencies, inlined here, so they never reach a library user's install. The library itself stays unbundled
// (dist/*.js with declarations) for its users' own bundlers.
import { bundleCli } from "./bundle.mjs"

bundleCli({ force: true })
