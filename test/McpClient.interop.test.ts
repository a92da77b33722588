/**
 * What an interop sweep of the MCP client found against third-party servers and transports, one `describe` per
 * finding, each pinned with the peer shape that showed it: an SDK 1.x server (what most servers in the sweep run),
 * a transport handed to `McpClient.connect` that is not ours, a zod 4 schema as @playwright/mcp serves it.
 */
import { describe, expect, it } from "@effect/vitest"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import type { CallToolResult, Tool as McpTool } from "@modelcontextprotocol/sdk/types.js"
import { CallToolRequestSchema, ListToolsRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js"
import type { Scope } from "effect"
import { Effect, Either } from "effect"
import * as Executor from "../src/Executor.js"
import * as McpClient from "../src/McpClient.js"
import type * as Tool from "../src/Tool.js"
import type * as Toolkit from "../src/Toolkit.js"
import { modelText } from "./helpers.js"

// ---------------------------------------------------------------------------------------------------------------
// peers
// ---------------------------------------------------------------------------------------------------------------

type Handler = (args: Record<string, unknown>) => Promise<CallToolResult>

/** An SDK 1.x server in memory (the shape of most servers in the sweep), closed with the scope. */
const sdk1Peer = (options: {
  readonly tools: ReadonlyArray<McpTool>
  readonly handlers: Readonly<Record<string, Handler>>
  readonly listChanged?: boolean
}): Effect.Effect<{ readonly server: Server; readonly transport: InMemoryTransport }, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
      const server = new Server({ name: "sdk1-peer", version: "1.0.0" }, {
        capabilities: { tools: options.listChanged === true ? { listChanged: true } : {} }
      })
      server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [...options.tools] }))
      server.setRequestHandler(CallToolRequestSchema, async (request) => {
        const handler = options.handlers[request.params.name]
        if (handler === undefined) throw new McpError(-32602, `Tool ${request.params.name} not found`)
        return handler(request.params.arguments ?? {})
      })
      await server.connect(serverSide)
      return { server, transport: clientSide }
    }),
    ({ server }) => Effect.promise(() => server.close())
  )

const objectSchema = (properties: Record<string, object> = {}, required: ReadonlyArray<string> = []) => ({
  type: "object" as const,
  properties,
  required: [...required]
})

const run = (kit: Toolkit.Toolkit<Tool.Tool<string>>, name: string, args: Record<string, unknown> = {}) =>
  Effect.map(Executor.run(kit, [{ id: "call_1", name, arguments: args }]), (outcomes) => outcomes[0])

// ---------------------------------------------------------------------------------------------------------------
// the findings
// ---------------------------------------------------------------------------------------------------------------

describe("McpClient, what the interop sweep found", () => {
  describe("one `Error:` prefix", () => {
    it.scopedLive("a tool's own `Error: ` before its isError text reaches the model once", () =>
      Effect.gen(function*() {
        const peer = yield* sdk1Peer({
          tools: [{ name: "write", inputSchema: objectSchema() }],
          handlers: {
            write: async () => ({ content: [{ type: "text", text: "Error: the disk is full" }], isError: true })
          }
        })
        const client = yield* McpClient.connect(peer.transport)
        expect(modelText(yield* run(yield* client.toolkit, "write"))).toBe("Error: the disk is full")
      }))

    it.scopedLive("a JSON-RPC error from an SDK 1.x server (`MCP error -32603: ...`) reads `Error: ` once", () =>
      Effect.gen(function*() {
        const peer = yield* sdk1Peer({
          tools: [{ name: "crash", inputSchema: objectSchema() }],
          handlers: {
            crash: async () => {
              throw new McpError(-32603, "the index is corrupt")
            }
          }
        })
        const client = yield* McpClient.connect(peer.transport)
        const outcome = yield* run(yield* client.toolkit, "crash")
        expect(Either.isLeft(outcome)).toBe(true)
        expect(modelText(outcome)).toBe("Error: the index is corrupt")
      }))
  })
})
