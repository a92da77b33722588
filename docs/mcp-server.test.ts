/**
 * The examples of docs/mcp-server.md, run (see ./examples.ts for how the page and this file are kept the same).
 * `NodeRuntime.runMain` is replaced by a recorder: the page's `main`s are type-checked and kept, not run (one would
 * serve this process's stdin, the other port 3000); their toolkit is served in memory and over HTTP instead.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { describe, expect, it } from "@effect/vitest"
import { Client, InMemoryTransport, StreamableHTTPClientTransport, type Transport } from "@modelcontextprotocol/client"
import { Deferred, Effect, Exit, Option, Schema, SubscriptionRef } from "effect"
import { vi } from "vitest"
import { Tool, Toolkit, ToolResult } from "../src/index.js"
import * as McpServer from "../src/McpServer.js"
import { checkExamples } from "./examples.js"

const mains = vi.hoisted(() => [] as Array<unknown>)
vi.mock("@effect/platform-node/NodeRuntime", () => ({ runMain: (main: unknown) => void mains.push(main) }))

// #region stdio
const Upper = Tool.make("upper", {
  description: "Uppercase a text",
  parameters: { text: Schema.String.annotations({ description: "The text to uppercase" }) },
  annotations: { readOnly: true, idempotent: true, openWorld: false },
  handler: ({ text }) => Effect.succeed(text.toUpperCase())
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

const PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="

const TinyImage = Tool.make("tiny_image", {
  description: "Return a 1x1 PNG image",
  annotations: { readOnly: true, openWorld: false },
  handler: () => Effect.succeed(ToolResult.image(PIXEL, "image/png"))
})

const kit = Toolkit.make(Upper, Add, TinyImage)

NodeRuntime.runMain(McpServer.stdio(kit, { name: "text-tools", version: "1.0.0" }))
// #endregion

// #region in-memory
// continues the example "stdio"

/** An MCP SDK client on a transport, closed with the scope. */
const clientOn = (transport: Transport) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new Client({ name: "my-tests", version: "1.0.0" })
      await client.connect(transport)
      return client
    }),
    (client) => Effect.promise(() => client.close())
  )

const inMemoryDemo = Effect.scoped(Effect.gen(function*() {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  yield* McpServer.serve(kit, { name: "text-tools", version: "1.0.0" }, serverSide)
  const client = yield* clientOn(clientSide)
  const { tools } = yield* Effect.promise(() => client.listTools())
  const sum = yield* Effect.promise(() => client.callTool({ name: "add", arguments: { a: 2, b: 3 } }))
  const wrong = yield* Effect.promise(() => client.callTool({ name: "add", arguments: { a: 2, b: "3" } }))
  const image = yield* Effect.promise(() => client.callTool({ name: "tiny_image" }))
  return { tools: tools.map((tool) => tool.name), sum, wrong, image }
}))
// => {
//   tools: ["upper", "add", "tiny_image"],
//   sum: { content: [{ type: "text", text: "{\"sum\":5}" }], structuredContent: { sum: 5 } },
//   wrong: {
//     content: [{ type: "text", text: "invalid arguments: b: expected an integer, got \"3\"" }],
//     isError: true
//   },
//   image: { content: [{ type: "image", data: "iVBORw0KGgo...", mimeType: "image/png" }] }
// }
// #endregion

// #region http
// continues the examples "stdio" and "in-memory"

const httpDemo = Effect.scoped(Effect.gen(function*() {
  const { url } = yield* McpServer.http(kit, { name: "text-tools", version: "1.0.0", port: 0 })
  const client = yield* clientOn(new StreamableHTTPClientTransport(new URL(url)))
  const result = yield* Effect.promise(() => client.callTool({ name: "upper", arguments: { text: "over http" } }))
  return { url, result }
}))
// => { url: "http://127.0.0.1:<a free port>/mcp", result: { content: [{ type: "text", text: "OVER HTTP" }] } }
// #endregion

// #region limits
// continues the examples "stdio" and "in-memory"

const limitsDemo = Effect.scoped(Effect.gen(function*() {
  const { url } = yield* McpServer.http(kit, {
    name: "text-tools",
    version: "1.0.0",
    port: 0,
    maxSessions: 1,
    sessionIdleTimeout: "10 minutes"
  })
  const first = yield* clientOn(new StreamableHTTPClientTransport(new URL(url)))
  yield* Effect.promise(() => first.callTool({ name: "upper", arguments: { text: "first" } }))
  // the first client is in use (its GET stream is open): a second one is turned away
  const late = new Client({ name: "late", version: "1.0.0" })
  return yield* Effect.promise(() =>
    late.connect(new StreamableHTTPClientTransport(new URL(url))).then(
      () => "connected",
      (error: Error) => error.message
    )
  )
}))
// => "Error POSTing to endpoint: {... \"Service Unavailable: all 1 sessions (maxSessions)
//    are in use; try again later\"}}"
// #endregion

// #region deploy
// continues the example "stdio"

const serveHttp = Effect.gen(function*() {
  const { url } = yield* McpServer.http(kit, {
    name: "text-tools",
    version: "1.0.0",
    host: "0.0.0.0",
    port: 3000,
    stateless: true,
    allowedHosts: ["tools.internal.example"]
  })
  yield* Effect.log(`serving MCP at ${url}`)
  return yield* Effect.never
})

NodeRuntime.runMain(Effect.scoped(serveHttp))
// #endregion

// #region session
const notes = new Map<string, Array<string>>()

const Note = Tool.make("note", {
  description: "Keep a note for this conversation; gives back every note kept so far",
  parameters: { text: Schema.String },
  handler: ({ text }) =>
    Effect.map(McpServer.session, (session) => {
      const key = Option.match(session, { onNone: () => "no session", onSome: ({ id }) => id })
      const kept = [...(notes.get(key) ?? []), text]
      notes.set(key, kept)
      return kept.join(", ")
    })
})
// #endregion

// #region changing
// continues the examples "stdio" and "in-memory"

const changingDemo = Effect.scoped(Effect.gen(function*() {
  const served = yield* SubscriptionRef.make<Toolkit.Toolkit<Tool.Tool<string>>>(Toolkit.make(Upper))
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  yield* McpServer.serve(served, { name: "text-tools", version: "1.0.0" }, serverSide)
  const client = yield* clientOn(clientSide)
  const changed = yield* Deferred.make<void>()
  client.setNotificationHandler("notifications/tools/list_changed", () => Deferred.unsafeDone(changed, Exit.void))

  yield* SubscriptionRef.set(served, Toolkit.make(Upper, Add)) // say, a plugin was loaded
  yield* Deferred.await(changed)
  const { tools } = yield* Effect.promise(() => client.listTools())
  return tools.map((tool) => tool.name)
}))
// => ["upper", "add"]
// #endregion

// #region eras
// continues the example "stdio"

const Ship = Tool.make("ship", {
  description: "Ship the build, after asking where",
  handler: () =>
    Effect.map(
      Tool.elicit({ message: "Where to?", schema: { target: Schema.Literal("staging", "production") } }),
      (answer) => (answer._tag === "Accept" ? `shipping to ${answer.content.target}` : "not shipped")
    )
})

const erasDemo = Effect.scoped(Effect.gen(function*() {
  const said: Array<string> = []
  for (const era of ["2025", "2026"]) {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
    yield* McpServer.serve(Toolkit.make(Ship), { name: "shipper", version: "1.0.0" }, serverSide)
    const client = new Client({ name: "desktop", version: "1.0.0" }, {
      capabilities: { elicitation: { form: {} } },
      // a v2 SDK client speaks 2025 unless told otherwise
      ...(era === "2026" ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {})
    })
    client.setRequestHandler("elicitation/create", () => ({ action: "accept", content: { target: "staging" } }))
    yield* Effect.acquireRelease(
      Effect.promise(() => client.connect(clientSide)),
      () => Effect.promise(() => client.close())
    )
    const result = yield* Effect.promise(() => client.callTool({ name: "ship" }))
    said.push(`${client.getProtocolEra()}: ${(result.content as Array<{ text: string }>)[0].text}`)
  }
  return said
}))
// => ["legacy: shipping to staging", "modern: shipping to staging"]
// #endregion

// #region replicas
// continues the example "stdio"

const replica = Effect.gen(function*() {
  const { url } = yield* McpServer.http(kit, {
    name: "text-tools",
    version: "1.0.0",
    host: "0.0.0.0",
    port: 3000,
    stateless: true,
    requestStateKey: process.env.MCP_STATE_KEY, // the same in every replica
    instance: process.env.HOSTNAME // what a load balancer routes parked calls' retries by
  })
  yield* Effect.log(`serving ${url}`)
  return yield* Effect.never
})

NodeRuntime.runMain(Effect.scoped(replica))
// #endregion

describe("docs/mcp-server.md", () => {
  it("shows each example exactly as this file runs it", () =>
    checkExamples(new URL("./mcp-server.md", import.meta.url), new URL("./mcp-server.test.ts", import.meta.url)))

  it("stdio, deploy and replicas: each hands runMain a program (kept, not run)", () => {
    expect(mains).toHaveLength(3)
    for (const main of mains) expect(Effect.isEffect(main)).toBe(true)
  })

  it.scopedLive("in memory: the tools listed, a result with structured content, an isError result, an image", () =>
    Effect.map(inMemoryDemo, (result) =>
      expect(result).toEqual({
        tools: ["upper", "add", "tiny_image"],
        sum: { content: [{ type: "text", text: "{\"sum\":5}" }], structuredContent: { sum: 5 } },
        wrong: {
          content: [{ type: "text", text: "invalid arguments: b: expected an integer, got \"3\"" }],
          isError: true
        },
        image: { content: [{ type: "image", data: PIXEL, mimeType: "image/png" }] }
      })))

  it.scopedLive("over HTTP on a free port", () =>
    Effect.map(httpDemo, ({ result, url }) => {
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/)
      expect(result).toEqual({ content: [{ type: "text", text: "OVER HTTP" }] })
    }))

  it.scopedLive("limits: with every session in use, a new client is turned away with 503", () =>
    Effect.map(limitsDemo, (message) =>
      expect(message).toBe(
        "Error POSTing to endpoint: {\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32000," +
          "\"message\":\"Service Unavailable: all 1 sessions (maxSessions) are in use; try again later\"}}"
      )))

  it.scopedLive("per-session state: each client sees its own notes", () =>
    Effect.gen(function*() {
      const note = (client: Client, text: string) =>
        Effect.map(
          Effect.promise(() => client.callTool({ name: "note", arguments: { text } })),
          (result) => (result.content as Array<{ text: string }>)[0].text
        )
      const session = () =>
        Effect.gen(function*() {
          const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
          yield* McpServer.serve(Toolkit.make(Note), { name: "notes", version: "1.0.0" }, serverSide)
          return yield* clientOn(clientSide)
        })
      const alice = yield* session()
      const bob = yield* session()
      expect(yield* note(alice, "buy milk")).toBe("buy milk")
      expect(yield* note(bob, "call mom")).toBe("call mom")
      expect(yield* note(alice, "fix bike")).toBe("buy milk, fix bike")
    }))

  it.scopedLive("two eras: the same tool asks a 2025 client in its session, a 2026 one through input_required", () =>
    Effect.map(
      erasDemo,
      (said) => expect(said).toEqual(["legacy: shipping to staging", "modern: shipping to staging"])
    ))

  it.scopedLive("a toolkit that changes: the client is told and lists the new tools", () =>
    Effect.map(changingDemo, (names) => expect(names).toEqual(["upper", "add"])))
})
