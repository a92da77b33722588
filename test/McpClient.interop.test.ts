/**
 * What an interop sweep of the MCP client found against third-party servers and transports, one `describe` per
 * finding, each pinned with the peer shape that showed it: an SDK 1.x server (what most servers in the sweep run),
 * a transport handed to `McpClient.connect` that is not ours, a zod 4 schema as @playwright/mcp serves it.
 */
import { describe, expect, it } from "@effect/vitest"
import type { JSONRPCMessage, Transport } from "@modelcontextprotocol/client"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import type { CallToolResult, Tool as McpTool } from "@modelcontextprotocol/sdk/types.js"
import { CallToolRequestSchema, ListToolsRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js"
import { McpServer as SdkMcpServer } from "@modelcontextprotocol/server"
import type { Scope } from "effect"
import { Chunk, Effect, Either, Stream } from "effect"
import { fileURLToPath } from "node:url"
import * as Executor from "../src/Executor.js"
import { cachedValidators } from "../src/internal/ajv.js"
import { defaultsOptional, prepareSchema } from "../src/internal/mcpClient.js"
import * as McpClient from "../src/McpClient.js"
import type * as Tool from "../src/Tool.js"
import type * as Toolkit from "../src/Toolkit.js"
import { modelText } from "./helpers.js"
import { sessionServer } from "./mcpPeers.js"

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

/**
 * A transport of someone else's (SSE, WebSocket, a custom one) as the sweep met it: a server's messages arrive in
 * bursts, several in one turn of the event loop. This one plays a server whose one tool reports three steps of
 * progress and answers, all four messages in one burst.
 */
class BurstTransport implements Transport {
  onclose?: (() => void) | undefined
  onerror?: ((error: Error) => void) | undefined
  onmessage?: ((message: JSONRPCMessage) => void) | undefined

  start(): Promise<void> {
    return Promise.resolve()
  }

  close(): Promise<void> {
    this.onclose?.()
    return Promise.resolve()
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (!("method" in message) || !("id" in message)) return Promise.resolve()
    const { id, method, params } = message
    const answer = (result: Record<string, unknown>) => ({ jsonrpc: "2.0" as const, id, result })
    const burst: Array<JSONRPCMessage> = []
    if (method === "initialize") {
      burst.push(answer({
        protocolVersion: (params as { protocolVersion: string }).protocolVersion,
        capabilities: { tools: {} },
        serverInfo: { name: "burst", version: "1.0.0" }
      }))
    } else if (method === "tools/list") {
      burst.push(answer({ tools: [{ name: "steps", inputSchema: { type: "object", properties: {} } }] }))
    } else if (method === "tools/call") {
      const progressToken = (params as { _meta: { progressToken: string | number } })._meta.progressToken
      for (let i = 1; i <= 3; i++) {
        burst.push({
          jsonrpc: "2.0",
          method: "notifications/progress",
          params: { progressToken, progress: i, total: 3 }
        })
      }
      burst.push(answer({ content: [{ type: "text", text: "done" }] }))
    } else {
      burst.push({ jsonrpc: "2.0", id, error: { code: -32601, message: "Method not found" } })
    }
    // the whole burst in one turn, after the send returns, as a socket's chunk is handed over
    setImmediate(() => {
      for (const each of burst) this.onmessage?.(each)
    })
    return Promise.resolve()
  }
}

const faultServer = fileURLToPath(new URL("./fixtures/mcp-fault-server.mjs", import.meta.url))

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

  describe("a property with a default listed as required (zod 4, as @playwright/mcp serves it)", () => {
    /** What zod 4's `z.toJSONSchema` gives for `{ url: z.string(), wait: z.number().default(30), viewport: ... }`. */
    const navigate: McpTool = {
      name: "navigate",
      inputSchema: {
        type: "object",
        properties: {
          url: { type: "string" },
          wait: { type: "number", default: 30 },
          viewport: {
            type: "object",
            properties: { width: { type: "integer", default: 1280 }, height: { type: "integer" } },
            required: ["width", "height"]
          }
        },
        required: ["url", "wait"]
      }
    }

    it.scopedLive("is optional when the arguments are checked here; the server fills it in", () =>
      Effect.gen(function*() {
        const received: Array<Record<string, unknown>> = []
        const peer = yield* sdk1Peer({
          tools: [navigate],
          handlers: {
            navigate: async (args) => {
              received.push(args)
              return { content: [{ type: "text", text: "navigated" }] }
            }
          }
        })
        const client = yield* McpClient.connect(peer.transport)
        const kit = yield* client.toolkit
        expect(modelText(yield* run(kit, "navigate", { url: "https://example.com" }))).toBe("navigated")
        expect(modelText(yield* run(kit, "navigate", { url: "https://a.example", viewport: { height: 800 } })))
          .toBe("navigated")
        expect(received).toEqual([{ url: "https://example.com" }, {
          url: "https://a.example",
          viewport: { height: 800 }
        }])
        // the server's schema is not changed, and one without defaults is the same object
        expect(navigate.inputSchema.required).toEqual(["url", "wait"])
        const plain = { type: "object", properties: { a: { type: "string" } }, required: ["a"] }
        expect(defaultsOptional(plain)).toBe(plain)
        // a required property without a default is still required, at any depth
        expect(modelText(yield* run(kit, "navigate", { viewport: { width: 1 } }))).toBe(
          "Error: invalid arguments: url: missing required property, expected a string\n" +
            "viewport.height: missing required property, expected an integer"
        )
      }))
  })

  it("defaults are optional in every place a schema can be, and only there", () => {
    const withDefault = { type: "object", properties: { a: { default: 1 }, b: {} }, required: ["a", "b"] }
    const rewritten = { type: "object", properties: { a: { default: 1 }, b: {} }, required: ["b"] }
    const schema = {
      type: "object",
      properties: { p: withDefault },
      additionalProperties: withDefault,
      unevaluatedProperties: withDefault,
      unevaluatedItems: withDefault,
      items: [withDefault, { type: "string" }],
      anyOf: [{ type: "null" }, withDefault],
      $defs: { d: withDefault },
      not: { items: withDefault },
      // values, not schemas: left as they are
      default: withDefault,
      examples: [withDefault],
      const: withDefault
    }
    expect(defaultsOptional(schema)).toEqual({
      ...schema,
      properties: { p: rewritten },
      additionalProperties: rewritten,
      unevaluatedProperties: rewritten,
      unevaluatedItems: rewritten,
      items: [rewritten, { type: "string" }],
      anyOf: [{ type: "null" }, rewritten],
      $defs: { d: rewritten },
      not: { items: rewritten }
    })
    expect(defaultsOptional({ items: withDefault })).toEqual({ items: rewritten })
    // the server's objects are not changed
    expect(withDefault.required).toEqual(["a", "b"])
  })

  it("the same walk finds an x-mcp-header in any schema, and not in values or property names", () => {
    const header = { type: "string", "x-mcp-header": "Region" }
    const declares = (schema: unknown) => prepareSchema(schema).declaresHeaders
    expect(declares({ type: "object", properties: { region: header } })).toBe(true)
    expect(declares({ properties: { nested: { properties: { region: header } } } })).toBe(true)
    expect(declares({ items: [{}, header] })).toBe(true)
    expect(declares({ anyOf: [{ type: "null" }, { properties: { r: header } }] })).toBe(true)
    expect(declares({ unevaluatedProperties: header })).toBe(true)
    expect(declares({ $defs: { r: header } })).toBe(true)
    expect(declares({ "x-mcp-header": "Root" })).toBe(true)
    // a value that looks like one, or a property that is named like one, declares nothing
    expect(declares({ properties: { "x-mcp-header": { type: "string" } } })).toBe(false)
    expect(declares({ default: header, examples: [header], const: header, enum: [header] })).toBe(false)
    expect(declares({ type: "object", properties: { a: { type: "string" } } })).toBe(false)
  })

  describe("schemas compiled on first use", () => {
    it.scopedLive("a listing compiles no schema; a tool's first call compiles its own, and a refresh none again", () =>
      Effect.gen(function*() {
        // schemas no other test has: the shared cache of compiled validators counts only these
        const unique = Math.random().toString(36).slice(2)
        const tools: Array<McpTool> = Array.from({ length: 28 }, (_, i) => ({
          name: `tool_${i}`,
          inputSchema: objectSchema({ [`${unique}_${i}`]: { type: "string" }, n: { type: "integer" } })
        }))
        const peer = yield* sdk1Peer({
          tools,
          handlers: { tool_3: async () => ({ content: [{ type: "text", text: "ran" }] }) }
        })
        const before = cachedValidators()
        const client = yield* McpClient.connect(peer.transport)
        expect(cachedValidators()).toBe(before)
        expect(modelText(yield* run(yield* client.toolkit, "tool_3", { n: 1 }))).toBe("ran")
        expect(cachedValidators()).toBe(before + 1)
        const kit = yield* client.refresh
        expect(modelText(yield* run(kit, "tool_3", { n: 2 }))).toBe("ran")
        expect(cachedValidators()).toBe(before + 1)
      }))

    it.scopedLive("a schema that is not valid JSON Schema is checked on its tool's first call, which fails saying so", () =>
      Effect.gen(function*() {
        const peer = yield* sdk1Peer({
          tools: [
            { name: "broken", inputSchema: objectSchema({ a: { type: "nonsense" } }) },
            { name: "fine", inputSchema: objectSchema() }
          ],
          handlers: { fine: async () => ({ content: [{ type: "text", text: "fine" }] }) }
        })
        const client = yield* McpClient.connect(peer.transport)
        const kit = yield* client.toolkit
        expect(kit.tools.map((tool) => tool.name)).toEqual(["broken", "fine"])
        const outcome = yield* run(kit, "broken", { a: 1 })
        expect(modelText(outcome)).toMatch(
          /^Error: tool "broken" panicked: checking the arguments failed: schema is invalid/
        )
        expect(modelText(yield* run(kit, "fine"))).toBe("fine")
      }))
  })

  describe("progress over a transport handed to connect", () => {
    it.scopedLive("every progress notification arrives before the result, however the messages are batched", () =>
      Effect.gen(function*() {
        const client = yield* McpClient.connect(new BurstTransport())
        const kit = yield* client.toolkit
        for (let round = 0; round < 3; round++) {
          const events = yield* Stream.runCollect(
            Executor.stream(kit, [{ id: `${round}`, name: "steps", arguments: {} }])
          )
          expect(Chunk.toArray(events).map((e) => e._tag === "Progress" ? e.progress.progress : e._tag)).toEqual([
            "Started",
            1,
            2,
            3,
            "Finished"
          ])
        }
      }))

    it.scopedLive("and over our own stdio, where the server wrote them in one chunk", () =>
      Effect.gen(function*() {
        const client = yield* McpClient.connect(
          McpClient.stdio({ command: process.execPath, args: [faultServer, "serve"], killGrace: "300 millis" })
        )
        const events = yield* Stream.runCollect(
          Executor.stream(yield* client.toolkit, [{ id: "1", name: "steps", arguments: {} }])
        )
        expect(Chunk.toArray(events).map((e) => e._tag === "Progress" ? e.progress.progress : e._tag)).toEqual([
          "Started",
          1,
          2,
          3,
          "Finished"
        ])
      }))
  })

  describe("closing an HTTP client", () => {
    it.scopedLive("DELETEs its session, so the server can let it go", () =>
      Effect.gen(function*() {
        const server = yield* sessionServer(() => {
          const mcp = new SdkMcpServer({ name: "sessions", version: "1.0.0" })
          mcp.registerTool("ping", { description: "Ping" }, () => ({ content: [{ type: "text", text: "pong" }] }))
          return mcp
        })
        yield* Effect.scoped(Effect.gen(function*() {
          const client = yield* McpClient.connect(McpClient.http(server.url))
          expect(modelText(yield* run(yield* client.toolkit, "ping"))).toBe("pong")
        }))
        const session = server.requests.find((r) => r.headers["mcp-session-id"] !== undefined)
          ?.headers["mcp-session-id"]
        expect(session).toBeDefined()
        expect(server.requests.filter((r) => r.method === "DELETE").map((r) => r.headers["mcp-session-id"])).toEqual([
          session
        ])
        expect(server.closed).toEqual([session])
      }))
  })

  describe("the notification grace", () => {
    it.scopedLive("a server that advertises tools.listChanged but never sends it late costs a call nothing", () =>
      Effect.gen(function*() {
        const peer = yield* sdk1Peer({
          listChanged: true,
          tools: [{ name: "write", inputSchema: objectSchema() }],
          handlers: { write: async () => ({ content: [{ type: "text", text: "written" }] }) }
        })
        const client = yield* McpClient.connect(peer.transport, { notificationGrace: "2 seconds" })
        const kit = yield* client.toolkit
        const started = Date.now()
        for (let i = 0; i < 3; i++) expect(modelText(yield* run(kit, "write"))).toBe("written")
        expect(Date.now() - started).toBeLessThan(1_000)
      }))

    it.scopedLive("a tool that adds a tool and says so before its result returns with the new list in place", () =>
      Effect.gen(function*() {
        const tools: Array<McpTool> = [{ name: "unlock", inputSchema: objectSchema() }]
        const peer = yield* sdk1Peer({
          listChanged: true,
          tools,
          handlers: {
            unlock: async () => {
              tools.push({ name: "secret", inputSchema: objectSchema() })
              await peer.server.sendToolListChanged()
              return { content: [{ type: "text", text: "unlocked" }] }
            }
          }
        })
        const client = yield* McpClient.connect(peer.transport)
        expect(modelText(yield* run(yield* client.toolkit, "unlock"))).toBe("unlocked")
        expect((yield* client.toolkit).tools.map((tool) => tool.name)).toEqual(["unlock", "secret"])
      }))
  })
})
