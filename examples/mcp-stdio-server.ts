/**
 * A small MCP server on stdio, written with this library: the one docs/mcp-server.md registers in Claude Desktop /
 * Claude Code, and the one the interop tests drive with the MCP Inspector.
 *
 *   node --import tsx examples/mcp-stdio-server.ts
 *
 * It serves until stdin ends, then answers what it has read and exits. Everything it logs goes to stderr.
 */
// Modules by path rather than the packages' index files: a client starts this process when it launches, and the
// index of @effect/platform-node alone takes longer to load than the whole server otherwise.
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as McpServer from "../src/McpServer.js"
import * as Tool from "../src/Tool.js"
import * as Toolkit from "../src/Toolkit.js"
import * as ToolResult from "../src/ToolResult.js"

const Upper = Tool.make("upper", {
  description: "Uppercase a text",
  parameters: { text: Schema.String.annotations({ description: "The text to uppercase" }) },
  annotations: { readOnly: true, idempotent: true, openWorld: false },
  handler: ({ text }) => Effect.as(Effect.logDebug(`upper: ${text.length} characters`), text.toUpperCase())
})

const Add = Tool.make("add", {
  description: "Add two integers",
  title: "Add",
  strict: true,
  parameters: { a: Schema.Int, b: Schema.Int },
  success: Schema.Struct({ sum: Schema.Int }),
  annotations: { readOnly: true, idempotent: true, openWorld: false },
  handler: ({ a, b }) => Effect.succeed({ sum: a + b })
})

/** The smallest PNG there is: one transparent pixel. */
const PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="

const TinyImage = Tool.make("tiny_image", {
  description: "Return a 1x1 PNG image",
  annotations: { readOnly: true, openWorld: false },
  handler: () => Effect.succeed(ToolResult.image(PIXEL, "image/png"))
})

NodeRuntime.runMain(McpServer.stdio(Toolkit.make(Upper, Add, TinyImage), { name: "text-tools", version: "1.0.0" }))
