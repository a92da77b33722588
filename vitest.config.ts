import * as os from "node:os"
import { configDefaults, defineConfig } from "vitest/config"

/**
 * `npm test`: every test that runs offline with nothing but `npm install`. The tests whose third-party peers need
 * the Node 22 of tools/ (the MCP Inspector) are in test/interop/tools/ and run with `npm run test:interop`
 * (vitest.interop.config.ts).
 *
 * Speed, on a 2-core machine: one worker more than the cores, because the slow files mostly wait for child
 * processes (a CLI, a provider, an MCP server) while another worker has the CPU; and `isolate: false`, so a worker
 * loads Effect, the MCP SDK and the rest of node_modules once instead of once per file (each file still evaluates
 * src/ and itself afresh: only what node_modules keeps on globalThis, Effect's global values, is shared between the
 * files of a worker).
 */
const WORKERS = Math.max(3, os.availableParallelism() + 1)

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "docs/**/*.test.ts"],
    exclude: [...configDefaults.exclude, "test/interop/tools/**"],
    globalSetup: ["test/setup/bundles.ts"],
    isolate: false,
    maxWorkers: WORKERS,
    // as many from the start: with fewer, tinypool ends the extra ones when they idle, and ending a worker that
    // way fails the run at its end with "Terminating worker thread" (vitest-dev/vitest#8564)
    minWorkers: WORKERS,
    testTimeout: 30_000,
    hookTimeout: 60_000
  }
})
