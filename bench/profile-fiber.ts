/**
 * A loop for a CPU profile of row 13's path (a handler that needs a fiber): `node --cpu-prof
 * node_modules/.cache/effect-agent-tools-bench/bench/profile-fiber.js [batches]`.
 */
import * as Effect from "effect/Effect"
import * as Executor from "../src/Executor.js"
import * as Tool from "../src/Tool.js"
import * as Toolkit from "../src/Toolkit.js"
import * as Fixtures from "./fixtures.js"

const kit = Toolkit.make(Tool.make(Fixtures.TOOL_NAME, {
  description: Fixtures.DESCRIPTION,
  parameters: Fixtures.parameters,
  handler: ({ path }) => Effect.sync(() => path.length)
}))
const calls = Fixtures.validCalls(10_000)
const batches = Number(process.argv[2] ?? 60)
for (let i = 0; i < batches; i++) await Effect.runPromise(Executor.run(kit, calls, { maxParallel: 8 }))
