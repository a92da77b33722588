/**
 * Row 10: the no-op tool served by our `McpServer.http`, stateless, on a free port; prints `{"url": ...}`.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Effect from "effect/Effect"
import * as McpServer from "../../src/McpServer.js"
import * as Toolkit from "../../src/Toolkit.js"
import { ReadFileAnswering } from "../fixtures.js"

NodeRuntime.runMain(Effect.scoped(Effect.gen(function*() {
  const { url } = yield* McpServer.http(Toolkit.make(ReadFileAnswering), {
    name: "bench-ours",
    version: "1.0.0",
    port: 0,
    stateless: true,
    maxParallel: 16
  })
  process.stdout.write(`${JSON.stringify({ url })}\n`)
  return yield* Effect.never
})))
