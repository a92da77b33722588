import { defineConfig } from "vitest/config"

/**
 * `npm run test:interop`: the tests whose third-party peers need the Node 22 of tools/ (the MCP Inspector), which
 * `npm ci --prefix tools` installs. `.ci/run` runs it after `npm test`.
 */
export default defineConfig({
  test: {
    include: ["test/interop/tools/**/*.test.ts"],
    globalSetup: ["test/setup/bundles.ts"],
    testTimeout: 30_000,
    hookTimeout: 120_000
  }
})
