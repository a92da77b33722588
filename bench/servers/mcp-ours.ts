/**
 * Row 4 and row 7's baseline: the no-op tool served over stdio by our `McpServer`. Modules are imported by path,
 * as a server that a client launches should (see examples/mcp-stdio-server.ts).
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as McpServer from "../../src/McpServer.js"
import * as Toolkit from "../../src/Toolkit.js"
import { ReadFileAnswering } from "../fixtures.js"

NodeRuntime.runMain(
  McpServer.stdio(Toolkit.make(ReadFileAnswering), { name: "bench-ours", version: "1.0.0", maxParallel: 16 })
)
