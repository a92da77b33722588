// Bundles the agent-tools binary into one file, dist/cli/main.js, over tsc's output for it.
//
// Why: the CLI imports a large part of Effect, @effect/cli, the MCP SDK and Ajv; Node resolving and loading
// hundreds of ES modules one by one takes about 1.6 s before the first line of output, the same code in one file
// about 0.6 s. The library itself stays unbundled (dist/*.js with declarations) for its users' own bundlers.
import * as esbuild from "esbuild"
import * as fs from "node:fs"

const outfile = "dist/cli/main.js"

await esbuild.build({
  entryPoints: ["src/cli/main.ts"],
  outfile,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  // CommonJS dependencies (Ajv) call require; an ES module has none of its own
  banner: {
    js:
      "import { createRequire as __createRequire } from \"node:module\"; const require = __createRequire(import.meta.url);"
  },
  legalComments: "none",
  logLevel: "warning"
})
fs.chmodSync(outfile, 0o755)
