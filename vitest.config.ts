import { configDefaults, defineConfig } from "vitest/config"

/**
 * `npm test`: every test that runs offline with nothing but `npm install`. The tests whose third-party peers need
 * the Node 22 of tools/ (the MCP Inspector) are in test/interop/tools/ and run with `npm run test:interop`
 * (vitest.interop.config.ts).
 */
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "docs/**/*.test.ts"],
    exclude: [...configDefaults.exclude, "test/interop/tools/**"],
    globalSetup: ["test/setup/bundles.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    sequence: { concurrent: false }
  }
})
