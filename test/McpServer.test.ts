/**
 * McpServer against real peers: the MCP SDK's `Client` over an in-memory transport, and raw JSON-RPC lines over
 * the stdio server's streams. HTTP is in McpServer.http.test.ts, the MCP Inspector in interop/inspector.test.ts.
 */
import { describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js"
import { Context, Deferred, Effect, Either, Exit, Fiber, Option, Schema, type Scope, SubscriptionRef } from "effect"
import { PassThrough } from "node:stream"
import { vi } from "vitest"
import { Permission, Recorder, Tool, ToolError, Toolkit, ToolResult } from "../src/index.js"
import * as Mcp from "../src/internal/mcp.js"
import * as McpServer from "../src/McpServer.js"
import { hanging } from "./fixtures/hanging.js"
import { collectingTracer } from "./helpers.js"

// ---------------------------------------------------------------------------------------------------------------
// tools
// ---------------------------------------------------------------------------------------------------------------

class NotFound extends Schema.TaggedError<NotFound>()("NotFound", { key: Schema.String }) {
  override get message() {
    return `no such key: ${this.key}`
  }
}

const Upper = Tool.make("upper", {
  description: "Uppercase a text",
  title: "Uppercase",
  parameters: { text: Schema.String.annotations({ description: "The text" }) },
  annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  handler: ({ text }) => Effect.succeed(text.toUpperCase())
})

const Add = Tool.make("add", {
  description: "Add two integers",
  strict: true,
  parameters: { a: Schema.Int, b: Schema.Int },
  success: Schema.Struct({ sum: Schema.Int }),
  annotations: { readOnly: true },
  handler: ({ a, b }) => Effect.succeed({ sum: a + b })
})

const PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="

const everyPart: ReadonlyArray<ToolResult.Content> = [
  { type: "text", text: "one" },
  { type: "image", data: PIXEL, mimeType: "image/png" },
  { type: "audio", data: "UklGRg==", mimeType: "audio/wav" },
  { type: "resource", resource: { uri: "file:///a.txt", mimeType: "text/plain", text: "a" } },
  { type: "resource_link", uri: "file:///b.bin", name: "b.bin", mimeType: "application/octet-stream" }
]

const Parts = Tool.make("parts", {
  description: "Every kind of content part",
  handler: () => Effect.succeed(ToolResult.parts(everyPart))
})

/** Answers from an effect that must run (a fiber), unlike the handlers above that answer with a value. */
const Greet = Tool.make("greet", {
  description: "Greet",
  handler: () => Effect.as(Effect.yieldNow(), "hello")
})

const Lookup = Tool.make("lookup", {
  description: "Look a key up",
  parameters: { key: Schema.String },
  failure: NotFound,
  handler: ({ key }) => Effect.fail(new NotFound({ key }))
})

const Crash = Tool.make("crash", {
  description: "Die",
  handler: () => Effect.die(new Error("boom\nat somewhere"))
})

const Slow = Tool.make("slow", {
  description: "Outrun its timeout",
  timeout: "20 millis",
  handler: () => Effect.never
})

const Guarded = Tool.make("guarded", {
  description: "Ask first",
  permission: { action: "write", describe: () => "write the thing" },
  handler: () => Effect.succeed("written")
})

const Started = Tool.make("started", {
  description: "Start something and say where its record is",
  handler: () =>
    Effect.succeed(
      ToolResult.withDetails(
        ToolResult.text("started"),
        Recorder.makeRecord("proc", Schema.Struct({ pid: Schema.Int }), { pid: 42 })
      )
    )
})

const kit = Toolkit.make(Upper, Add, Parts, Lookup, Crash, Slow, Guarded, Started)

const info: McpServer.Options = { name: "test-server", version: "0.0.1", instructions: "Be nice." }

// ---------------------------------------------------------------------------------------------------------------
// peers
// ---------------------------------------------------------------------------------------------------------------

/** Every message a transport sent and received, in order. */
interface Wire {
  readonly sent: Array<JSONRPCMessage>
  readonly received: Array<JSONRPCMessage>
}

/** Records what passes through a transport once its owner has connected (the SDK chains our `onmessage`). */
const tap = (transport: Transport): Wire => {
  const wire: Wire = { sent: [], received: [] }
  const send = transport.send.bind(transport)
  transport.send = (message, options) => {
    wire.sent.push(message)
    return send(message, options)
  }
  transport.onmessage = (message) => void wire.received.push(message)
  return wire
}

/** An SDK client connected in memory to `McpServer.serve`, both closed with the scope. */
const connected = <T extends Tool.Any>(source: McpServer.Source<T>, options: McpServer.Options = info) =>
  Effect.gen(function*() {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
    const wire = tap(clientSide)
    yield* McpServer.serve(source, options, serverSide)
    const client = new Client({ name: "test-client", version: "1.2.3" })
    yield* Effect.acquireRelease(
      Effect.promise(() => client.connect(clientSide)),
      () => Effect.promise(() => client.close())
    )
    return { client, wire }
  })

const call = (client: Client, name: string, args?: Record<string, unknown>) =>
  Effect.promise(() => client.callTool(args === undefined ? { name } : { name, arguments: args }))

const isResponseTo = (id: unknown) => (message: JSONRPCMessage) =>
  "id" in message && message.id === id && ("result" in message || "error" in message)

// ---------------------------------------------------------------------------------------------------------------
// tests
// ---------------------------------------------------------------------------------------------------------------

describe("McpServer", () => {
  describe("initialize", () => {
    it.scopedLive("serves its name, version, instructions and the tools and logging capabilities", () =>
      Effect.gen(function*() {
        const { client } = yield* connected(kit, { ...info, title: "Test server" })
        expect(client.getServerVersion()).toEqual({ name: "test-server", version: "0.0.1", title: "Test server" })
        expect(client.getInstructions()).toBe("Be nice.")
        // a fixed toolkit never changes, so it does not promise list_changed; handlers' logs reach a client that
        // sets a level (McpServer.inCall.test.ts)
        expect(client.getServerCapabilities()).toEqual({ tools: {}, logging: {} })
      }))
  })

  describe("tools/list", () => {
    it.scopedLive("lists every tool as ToolDefinition.mcp gives it, in order", () =>
      Effect.gen(function*() {
        const { client } = yield* connected(kit)
        const { tools } = yield* Effect.promise(() => client.listTools())
        expect(tools).toEqual(Toolkit.definitions(kit, "mcp"))
        expect(tools.map((tool) => tool.name)).toEqual(Toolkit.names(kit))
      }))

    it.scopedLive("title, the standard input schema, outputSchema and every stated hint", () =>
      Effect.gen(function*() {
        const { client } = yield* connected(kit)
        const { tools } = yield* Effect.promise(() => client.listTools())
        const [upper, add, parts] = tools
        expect(upper).toEqual({
          name: "upper",
          title: "Uppercase",
          description: "Uppercase a text",
          inputSchema: {
            type: "object",
            properties: { text: { type: "string", description: "The text" } },
            required: ["text"],
            additionalProperties: false
          },
          annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false }
        })
        // a strict tool still serves the standard projection over MCP; its output schema comes from `success`
        expect(add.inputSchema).toEqual(Add.inputSchema)
        expect(add.outputSchema).toEqual({
          type: "object",
          properties: { sum: { type: "integer", description: "an integer" } },
          required: ["sum"],
          additionalProperties: false
        })
        // unstated hints stay unstated, so the client applies MCP's defaults
        expect(add.annotations).toEqual({ readOnlyHint: true })
        expect(parts).not.toHaveProperty("annotations")
        expect(parts).not.toHaveProperty("outputSchema")
        expect(parts).not.toHaveProperty("title")
      }))
  })

  describe("tools/call", () => {
    it.scopedLive("a success is the ToolResult's content, one to one", () =>
      Effect.gen(function*() {
        const { client } = yield* connected(kit)
        expect(yield* call(client, "upper", { text: "hi" })).toEqual({ content: [{ type: "text", text: "HI" }] })
        expect(yield* call(client, "parts")).toEqual({ content: everyPart })
      }))

    it.scopedLive("a tool with a success schema gets structuredContent, checked by the client", () =>
      Effect.gen(function*() {
        const { client } = yield* connected(kit)
        // listing first makes the SDK client validate structuredContent against the outputSchema
        yield* Effect.promise(() => client.listTools())
        expect(yield* call(client, "add", { a: 2, b: 3 })).toEqual({
          content: [{ type: "text", text: "{\"sum\":5}" }],
          structuredContent: { sum: 5 }
        })
      }))

    it.scopedLive("toModelOutput: the model's content is the shaped text, structuredContent the encoded value", () =>
      Effect.gen(function*() {
        const Stat = Tool.make("stat", {
          description: "When a file changed",
          parameters: { path: Schema.String },
          success: Schema.Struct({ path: Schema.String, modified: Schema.Date }),
          toModelOutput: ({ modified, path }) => `${path} changed in ${modified.getUTCFullYear()}`,
          handler: ({ path }) => Effect.succeed({ path, modified: new Date("2024-03-04T00:00:00.000Z") })
        })
        const { client } = yield* connected(Toolkit.make(Stat))
        yield* Effect.promise(() => client.listTools())
        expect(yield* call(client, "stat", { path: "a.txt" })).toEqual({
          content: [{ type: "text", text: "a.txt changed in 2024" }],
          structuredContent: { path: "a.txt", modified: "2024-03-04T00:00:00.000Z" }
        })
      }))

    it.scopedLive("failures are isError results carrying the ToolError message without `Error: `", () =>
      Effect.gen(function*() {
        const { client } = yield* connected(kit, info)
        const cases: Array<[string, Record<string, unknown> | undefined, string]> = [
          ["add", { a: 2 }, "invalid arguments: b: missing required property, expected an integer"],
          [
            "add",
            { a: 2, b: 1.5, c: 1 },
            "invalid arguments: c: unexpected property; the known properties are a, b\n" +
            "b: expected an integer, got 1.5"
          ],
          ["nope", {}, `unknown tool "nope"; available tools: ${Toolkit.names(kit).join(", ")}`],
          ["lookup", { key: "k" }, "no such key: k"],
          ["crash", undefined, "tool \"crash\" panicked: boom"],
          ["slow", undefined, "tool \"slow\" timed out after 20ms"]
        ]
        for (const [name, args, message] of cases) {
          expect(yield* call(client, name, args), name).toEqual({
            content: [{ type: "text", text: message }],
            isError: true
          })
        }
      }))

    it.scopedLive("a denied call is an isError result; the requester is the one the server runs with", () =>
      Effect.gen(function*() {
        const asked: Array<string> = []
        const { client } = yield* connected(kit).pipe(
          Effect.provide(Permission.layer((request) =>
            Effect.sync(() => {
              asked.push(request.description)
              return Permission.deny("read-only session")
            })
          ))
        )
        expect(yield* call(client, "guarded")).toEqual({
          content: [{ type: "text", text: "permission denied: write the thing: read-only session" }],
          isError: true
        })
        expect(asked).toEqual(["write the thing"])
      }))

    it.scopedLive("arguments are checked before the handler runs", () =>
      Effect.gen(function*() {
        let ran = false
        const Strict = Tool.make("strict", {
          description: "Count runs",
          parameters: { n: Schema.Int },
          handler: () => Effect.sync(() => (ran = true))
        })
        const { client } = yield* connected(Toolkit.make(Strict))
        const result = yield* call(client, "strict", { n: "1" })
        expect(result.isError).toBe(true)
        expect(ran).toBe(false)
      }))

    it.scopedLive("handlers get the services the server runs with", () =>
      Effect.gen(function*() {
        class Greeting extends Context.Tag("test/Greeting")<Greeting, string>() {}
        const Greet = Tool.make("greet", {
          description: "Greet",
          handler: () => Effect.map(Greeting, (greeting) => `${greeting}, world`)
        })
        const { client } = yield* connected(Toolkit.make(Greet)).pipe(Effect.provideService(Greeting, "hello"))
        expect(yield* call(client, "greet")).toEqual({ content: [{ type: "text", text: "hello, world" }] })
      }))

    it.scopedLive("with a tracer installed every call is a McpServer.call span, calls answered at once included", () =>
      Effect.gen(function*() {
        const { spans, tracer } = yield* collectingTracer
        // a handler that answers with a value and one whose effect runs: both traced
        const { client } = yield* connected(Toolkit.make(Upper, Greet)).pipe(Effect.withTracer(tracer))
        expect(yield* call(client, "upper", { text: "a" })).toEqual({ content: [{ type: "text", text: "A" }] })
        expect(yield* call(client, "greet")).toEqual({ content: [{ type: "text", text: "hello" }] })
        const served = spans.filter((span) => span.name === "McpServer.call")
        expect(served.map((span) => span.attributes.get("tool.name"))).toEqual(["upper", "greet"])
        expect(served.every((span) => span.status._tag === "Ended")).toBe(true)
      }))

    it.scopedLive("details travel in _meta under our key, and McpClient's mapping reads back what was served", () =>
      Effect.gen(function*() {
        const { client } = yield* connected(kit)
        yield* Effect.promise(() => client.listTools())
        const served = yield* call(client, "started")
        expect(served).toEqual({
          content: [{ type: "text", text: "started" }],
          _meta: { [Mcp.RECORDS_META_KEY]: [{ namespace: "proc", data: "{\"pid\":42}" }] }
        })
        // the two edges agree: what the server serves, fromCallToolResult turns back into the local outcome
        for (
          const [name, args] of [["started", {}], ["add", { a: 1, b: 2 }], ["parts", {}], ["lookup", {
            key: "x"
          }]] as const
        ) {
          const tool: Tool.Tool<string> = Toolkit.lookup(kit, name).pipe(Option.getOrThrow)
          const local = yield* Tool.execute(tool, { id: "c", arguments: args })
          const remote = Mcp.fromCallToolResult(name, (yield* call(client, name, args)) as Mcp.CallToolResult)
          if (Either.isRight(local)) {
            const result = Either.getOrThrow(remote)
            expect({ ...result }, name).toEqual({ ...local.right })
          } else {
            expect(ToolError.toModelText(Either.flip(remote).pipe(Either.getOrThrow)), name)
              .toBe(ToolError.toModelText(local.left))
          }
        }
      }))
  })

  describe("progress", () => {
    it.scopedLive("Tool.progress becomes notifications/progress when the request has a progress token", () =>
      Effect.gen(function*() {
        const Steps = Tool.make("steps", {
          description: "Three steps",
          handler: () =>
            Effect.forEach([1, 2, 3], (i) => Tool.progress({ progress: i, total: 3, message: `step ${i}` }), {
              discard: true
            }).pipe(Effect.zipRight(Tool.progress({ message: "tidying up", partial: "3 of 3" })), Effect.as("done"))
        })
        const { client, wire } = yield* connected(Toolkit.make(Steps))
        const seen: Array<unknown> = []
        const result = yield* Effect.promise(() =>
          client.callTool({ name: "steps" }, undefined, { onprogress: (progress) => void seen.push(progress) })
        )
        expect(result).toEqual({ content: [{ type: "text", text: "done" }] })
        expect(seen).toEqual([
          { progress: 1, total: 3, message: "step 1" },
          { progress: 2, total: 3, message: "step 2" },
          { progress: 3, total: 3, message: "step 3" },
          // a report without a number counts as the next step: MCP wants progress to grow
          { progress: 4, message: "tidying up" }
        ])

        // without a token, nothing is sent
        const before = wire.received.length
        yield* call(client, "steps")
        expect(wire.received.slice(before).map((m) => "method" in m ? m.method : "response")).toEqual(["response"])
      }))
  })

  describe("cancellation", () => {
    it.scopedLive("notifications/cancelled interrupts the call: its finalizer runs and no response is sent", () =>
      Effect.gen(function*() {
        const { released, started, tool } = yield* hanging("hang")
        const { client, wire } = yield* connected(Toolkit.make(tool, Upper))
        const controller = new AbortController()
        const pending = client.callTool({ name: "hang" }, undefined, { signal: controller.signal }).then(
          () => "answered",
          (error: Error) => `rejected: ${error.name}: ${error.message}`
        )
        yield* Deferred.await(started)
        controller.abort("changed my mind")
        yield* Deferred.await(released)
        expect(yield* Effect.promise(() => pending)).toMatch(/^rejected: .*changed my mind$/)

        const request = wire.sent.find((m) => "method" in m && m.method === "tools/call")!
        const id = (request as { id: unknown }).id
        expect(wire.sent).toContainEqual({
          jsonrpc: "2.0",
          method: "notifications/cancelled",
          params: { requestId: id, reason: "changed my mind" }
        })
        // the connection carries on, and nothing ever answered the cancelled request
        expect(yield* call(client, "upper", { text: "still here" })).toEqual({
          content: [{ type: "text", text: "STILL HERE" }]
        })
        expect(wire.received.filter(isResponseTo(id))).toEqual([])
      }))

    it.scopedLive("a client that disconnects mid-call interrupts it and its finalizer runs", () =>
      Effect.gen(function*() {
        const { released, started, tool } = yield* hanging("hang")
        const { client } = yield* connected(Toolkit.make(tool))
        const pending = client.callTool({ name: "hang" }).then(() => "answered", (error: Error) => error.message)
        yield* Deferred.await(started)
        yield* Effect.promise(() => client.close())
        // the server's scope is still open: the call ended because the connection did
        yield* Deferred.await(released)
        expect(yield* Effect.promise(() => pending)).toMatch(/Connection closed/)
      }))

    it.scopedLive("closing the server's scope interrupts the calls in flight and waits for their finalizers", () =>
      Effect.gen(function*() {
        const { released, started, tool } = yield* hanging("hang")
        const scope = yield* Effect.scope
        const serving = yield* Effect.forkIn(
          Effect.scoped(Effect.gen(function*() {
            const { client } = yield* connected(Toolkit.make(tool))
            yield* Effect.fork(Effect.promise(() => client.callTool({ name: "hang" }).catch(() => undefined)))
            yield* Deferred.await(started)
          })),
          scope
        )
        yield* Fiber.join(serving)
        expect(yield* Deferred.isDone(released)).toBe(true)
      }))
  })

  describe("sessions", () => {
    it.scopedLive("McpServer.session gives the connection's id and the client's info, and none outside a call", () =>
      Effect.gen(function*() {
        const Who = Tool.make("who", {
          description: "Who is calling",
          handler: () =>
            Effect.map(McpServer.session, (session) =>
              Option.match(session, {
                onNone: () => "no session",
                onSome: (s) => JSON.stringify({ id: s.id, client: Option.getOrNull(s.clientInfo) })
              }))
        })
        const who = (client: Client) =>
          Effect.map(call(client, "who"), (result) => JSON.parse((result.content as Array<{ text: string }>)[0].text))
        const one = yield* connected(Toolkit.make(Who))
        const two = yield* connected(Toolkit.make(Who))
        const first = yield* who(one.client)
        expect(first.client).toEqual({ name: "test-client", version: "1.2.3" })
        expect(first.id).toMatch(/^[0-9a-f-]{36}$/)
        expect((yield* who(one.client)).id).toBe(first.id)
        expect((yield* who(two.client)).id).not.toBe(first.id)
        expect(yield* McpServer.session).toEqual(Option.none())
      }))
  })

  describe("a toolkit that changes", () => {
    it.scopedLive("declares listChanged, notifies on every change, serves the new tools", () =>
      Effect.gen(function*() {
        const ref = yield* SubscriptionRef.make<Toolkit.Toolkit<Tool.Tool<string>>>(Toolkit.make(Upper))
        const { client } = yield* connected(ref)
        expect(client.getServerCapabilities()?.tools).toEqual({ listChanged: true })
        let notified = yield* Deferred.make<void>()
        client.setNotificationHandler(ToolListChangedNotificationSchema, () =>
          void Deferred.unsafeDone(notified, Exit.void))
        const names = Effect.map(
          Effect.promise(() =>
            client.listTools()
          ),
          ({ tools }) => tools.map((t) => t.name)
        )
        expect(yield* names).toEqual(["upper"])

        yield* SubscriptionRef.set(ref, Toolkit.make(Upper, Add))
        yield* Deferred.await(notified)
        expect(yield* names).toEqual(["upper", "add"])
        expect((yield* call(client, "add", { a: 1, b: 1 })).structuredContent).toEqual({ sum: 2 })

        notified = yield* Deferred.make<void>()
        yield* SubscriptionRef.set(ref, Toolkit.make(Add))
        yield* Deferred.await(notified)
        expect(yield* names).toEqual(["add"])
        expect(yield* call(client, "upper", { text: "x" })).toEqual({
          content: [{ type: "text", text: "unknown tool \"upper\"; available tools: add" }],
          isError: true
        })
      }))
  })

  describe("bad input on the wire", () => {
    /** A bare JSON-RPC peer: send any message, wait for the answer to an id. */
    const bare = <T extends Tool.Tool<string>>(source: McpServer.Source<T>) =>
      Effect.gen(function*() {
        const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
        const received: Array<JSONRPCMessage> = []
        const waiting: Array<() => void> = []
        clientSide.onmessage = (message) => {
          received.push(message)
          for (const wake of waiting.splice(0)) wake()
        }
        yield* McpServer.serve(source, info, serverSide)
        yield* Effect.promise(() => clientSide.start())
        const answer = (id: number) =>
          Effect.promise(() =>
            new Promise<JSONRPCMessage>((resolve) => {
              const check = () => {
                const found = received.find(isResponseTo(id))
                if (found === undefined) waiting.push(check)
                else resolve(found)
              }
              check()
            })
          )
        const request = (id: number, method: string, params?: Record<string, unknown>) =>
          Effect.zipRight(
            Effect.promise(() => clientSide.send({ jsonrpc: "2.0", id, method, ...(params ? { params } : {}) })),
            answer(id)
          )
        return { request }
      })

    it.scopedLive("an unknown method is -32601; arguments that are not an object are an isError result", () =>
      Effect.gen(function*() {
        const peer = yield* bare(kit)
        expect(yield* peer.request(1, "tools/frobnicate")).toEqual({
          jsonrpc: "2.0",
          id: 1,
          error: { code: -32601, message: "Method not found" }
        })
        // not a protocol error the model never sees: the model wrote the arguments, so it reads what was wrong
        expect(yield* peer.request(2, "tools/call", { name: "upper", arguments: ["hi"] })).toEqual({
          jsonrpc: "2.0",
          id: 2,
          result: {
            content: [{ type: "text", text: "invalid arguments: expected a JSON object, got an array" }],
            isError: true
          }
        })
        // a request without a tool name is malformed MCP, not a call: a JSON-RPC error
        expect(yield* peer.request(4, "tools/call", { arguments: {} })).toMatchObject({ id: 4, error: {} })
        // and the server still answers
        expect(yield* peer.request(3, "tools/call", { name: "upper", arguments: { text: "ok" } })).toEqual({
          jsonrpc: "2.0",
          id: 3,
          result: { content: [{ type: "text", text: "OK" }] }
        })
      }))
  })

  describe("stdio", () => {
    /** The stdio server on in-process streams, spoken to in JSON-RPC lines. */
    const stdioPeer = <T extends Tool.Tool<string>>(
      source: McpServer.Source<T>,
      options?: Partial<McpServer.StdioOptions>
    ) =>
      Effect.gen(function*() {
        const stdin = new PassThrough()
        const stdout = new PassThrough()
        const lines: Array<string> = []
        const waiting: Array<() => void> = []
        let buffer = ""
        stdout.on("data", (chunk: Buffer) => {
          buffer += chunk.toString("utf8")
          let newline: number
          while ((newline = buffer.indexOf("\n")) >= 0) {
            lines.push(buffer.slice(0, newline))
            buffer = buffer.slice(newline + 1)
          }
          for (const wake of waiting.splice(0)) wake()
        })
        const server = yield* Effect.forkScoped(McpServer.stdio(source, { ...info, stdin, stdout, ...options }))
        const messages = () => lines.map((line) => JSON.parse(line) as JSONRPCMessage)
        const answer = (id: number) =>
          Effect.promise(() =>
            new Promise<JSONRPCMessage>((resolve) => {
              const check = () => {
                const found = messages().find(isResponseTo(id))
                if (found === undefined) waiting.push(check)
                else resolve(found)
              }
              check()
            })
          )
        const write = (line: string) => Effect.sync(() => void stdin.write(line + "\n"))
        const request = (id: number, method: string, params?: Record<string, unknown>) =>
          Effect.zipRight(
            write(JSON.stringify({ jsonrpc: "2.0", id, method, ...(params ? { params } : {}) })),
            answer(id)
          )
        yield* request(0, "initialize", {
          protocolVersion: "2025-11-25",
          capabilities: {},
          clientInfo: { name: "lines", version: "1" }
        })
        yield* write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }))
        return { stdin, lines, server, write, request, answer }
      })

    it.scopedLive("speaks JSON-RPC lines; stdout carries only the protocol, logs go to stderr", () =>
      Effect.gen(function*() {
        const stderr = vi.spyOn(process.stderr, "write").mockImplementation(() => true)
        yield* Effect.addFinalizer(() => Effect.sync(() => stderr.mockRestore()))
        const Chatty = Tool.make("chatty", {
          description: "Log, then answer",
          handler: () =>
            Effect.logInfo("a log line").pipe(
              Effect.zipRight(Effect.logWarning("a warning")),
              Effect.zipRight(Effect.log("more")),
              Effect.as("said it")
            )
        })
        const peer = yield* stdioPeer(Toolkit.make(Chatty))
        expect(yield* peer.request(1, "tools/call", { name: "chatty" })).toEqual({
          jsonrpc: "2.0",
          id: 1,
          result: { content: [{ type: "text", text: "said it" }] }
        })
        for (const line of peer.lines) expect(JSON.parse(line)).toHaveProperty("jsonrpc", "2.0")
        const written = stderr.mock.calls.map(([chunk]) => String(chunk)).join("")
        expect(written).toContain("a log line")
        expect(written).toContain("a warning")
      }))

    it.scopedLive("when stdin ends it answers what it read, finishing the calls in flight, then returns", () =>
      Effect.gen(function*() {
        const gate = yield* Deferred.make<void>()
        const entered = yield* Deferred.make<void>()
        const Wait = Tool.make("wait", {
          description: "Wait for the gate",
          handler: () =>
            Deferred.succeed(entered, undefined).pipe(Effect.zipRight(Deferred.await(gate)), Effect.as("through"))
        })
        const peer = yield* stdioPeer(Toolkit.make(Wait))
        yield* peer.write(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "wait" } }))
        yield* Deferred.await(entered)
        // a request on the very last line, read together with the end of input, is answered too
        yield* Effect.sync(() => peer.stdin.end(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }) + "\n"))
        yield* peer.answer(2)
        yield* Effect.sleep("20 millis")
        expect(Option.isNone(yield* Fiber.poll(peer.server))).toBe(true)
        yield* Deferred.succeed(gate, undefined)
        expect(yield* Fiber.join(peer.server)).toBeUndefined()
        expect(yield* peer.answer(1)).toEqual({
          jsonrpc: "2.0",
          id: 1,
          result: { content: [{ type: "text", text: "through" }] }
        })
      }))

    it.scopedLive("a line that is not JSON is -32700, a batch -32600, unknown methods -32601; the server goes on", () =>
      Effect.gen(function*() {
        const stderr = vi.spyOn(process.stderr, "write").mockImplementation(() => true)
        yield* Effect.addFinalizer(() => Effect.sync(() => stderr.mockRestore()))
        const peer = yield* stdioPeer(kit)
        yield* peer.write("{\"jsonrpc\": \"2.0\", \"id\": 7, \"method\": ")
        yield* peer.write("[1, 2, 3]")
        expect(yield* peer.request(8, "no/such/method")).toEqual({
          jsonrpc: "2.0",
          id: 8,
          error: { code: -32601, message: "Method not found" }
        })
        expect(yield* peer.request(9, "tools/call", { name: "upper", arguments: { text: "fine" } })).toMatchObject({
          result: { content: [{ type: "text", text: "FINE" }] }
        })
        // each broken line has its answer, without an id (there is none to read), in the order they came
        expect(peer.lines.slice(1, 3).map((line) => JSON.parse(line))).toEqual([
          { jsonrpc: "2.0", error: { code: -32700, message: expect.stringMatching(/^Parse error: /) } },
          {
            jsonrpc: "2.0",
            error: { code: -32600, message: "Invalid Request: JSON-RPC batches are not supported; send one message" }
          }
        ])
        expect(peer.lines.map((line) => JSON.parse(line).id)).toEqual([0, undefined, undefined, 8, 9])
        expect(stderr.mock.calls.map(([chunk]) => String(chunk)).join("")).toContain("MCP server test-server")
      }))

    it.scopedLive("a 5 MB argument is read and answered", () =>
      Effect.gen(function*() {
        const Size = Tool.make("size", {
          description: "Measure a text",
          parameters: { text: Schema.String },
          handler: ({ text }) => Effect.succeed(String(text.length))
        })
        const peer = yield* stdioPeer(Toolkit.make(Size))
        const text = "x".repeat(5_000_000)
        expect(yield* peer.request(1, "tools/call", { name: "size", arguments: { text } })).toEqual({
          jsonrpc: "2.0",
          id: 1,
          result: { content: [{ type: "text", text: "5000000" }] }
        })
      }))

    it.scopedLive("a message over maxMessageBytes ends the connection: the server stops and says why on stderr", () =>
      Effect.gen(function*() {
        const stderr = vi.spyOn(process.stderr, "write").mockImplementation(() => true)
        yield* Effect.addFinalizer(() => Effect.sync(() => stderr.mockRestore()))
        const peer = yield* stdioPeer(kit, { maxMessageBytes: 64 * 1024 })
        yield* peer.write(JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name: "upper", arguments: { text: "x".repeat(100 * 1024) } }
        }))
        expect(yield* Fiber.join(peer.server)).toBeUndefined()
        expect(stderr.mock.calls.map(([chunk]) => String(chunk)).join("")).toContain(
          "a message longer than 65536 bytes (maxMessageBytes) arrived: the connection is closed"
        )
      }))
  })

  it("serving needs only a Scope and what the toolkit's handlers need", () => {
    // a type-level pin: a toolkit whose handlers need nothing is served with nothing but a Scope
    const serve: Effect.Effect<void, McpServer.McpServerError, Scope.Scope> = McpServer.serve(
      kit,
      info,
      InMemoryTransport.createLinkedPair()[1]
    )
    expect(Effect.isEffect(serve)).toBe(true)
  })
})
