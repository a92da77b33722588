/**
 * Vitest's global setup: builds what the tests run as child processes, once, before the first test file, and only
 * what is older than its sources: the agent-tools binary (dist/cli/main.js, which the CLI tests run as a user runs
 * it) and the programs tests spawn (test/fixtures/compiled.ts, all of them in one esbuild run). So `npm test` after
 * an edit of src/ tests the edit.
 */
import { bundleCli } from "../../scripts/bundle.mjs"
import { build, entries } from "../fixtures/compiled.js"

export default function setup(): void {
  bundleCli()
  build(entries())
}
