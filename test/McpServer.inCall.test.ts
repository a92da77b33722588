/**
 * What a handler served over MCP reaches its client with, against the MCP SDK's own `Client` (in memory, and over
 * Streamable HTTP where the stream a message goes on matters): `Effect.log*` as `notifications/message` (levels,
 * filtering, per session), `Tool.elicit` as `elicitation/create` (forms, pages, every answer, nobody to ask), and
 * `McpServer.sample` as `sampling/createMessage` (and its typed error anywhere else).
 */
import { describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import type {
  ClientCapabilities,
  CreateMessageRequest,
  CreateMessageResult,
  ElicitRequest,
  ElicitResult,
  LoggingMessageNotification
} from "@modelcontextprotocol/sdk/types.js"
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ErrorCode,
  LoggingMessageNotificationSchema,
  McpError
} from "@modelcontextprotocol/sdk/types.js"
import { Cause, Deferred, Effect, Exit, Fiber, type Layer, Logger, Schema } from "effect"
import { PassThrough } from "node:stream"
import { setImmediate } from "node:timers"
import { Elicitation, Tool, Toolkit } from "../src/index.js"
import * as McpServer from "../src/McpServer.js"

// ---------------------------------------------------------------------------------------------------------------
// tools
// ---------------------------------------------------------------------------------------------------------------

const Chatty = Tool.make("chatty", {
  description: "Log once at every level",
  handler: () =>
    Effect.gen(function*() {
      yield* Effect.logTrace("trace")
      yield* Effect.logDebug("debug")
      yield* Effect.logInfo("info")
      yield* Effect.logWarning("warning")
      yield* Effect.logError("error")
      yield* Effect.logFatal("fatal")
      return "logged"
    })
})

const Failing = Tool.make("failing", {
  description: "Log a failure with its cause",
  handler: () => Effect.as(Effect.logError("lost the file", Cause.fail("ENOENT")), "logged")
})

/** Says how an answer came back: its tag and its decoded content. */
const said = (result: Elicitation.Result<unknown>): string =>
  result._tag === "Accept" ? `Accept ${JSON.stringify(result.content)}` : result._tag

const AskName = Tool.make("ask_name", {
  description: "Ask for a name and an age",
  handler: () =>
    Effect.map(
      Tool.elicit({
        message: "Who are you?",
        schema: {
          name: Schema.String.annotations({ title: "Name", description: "Your full name" }),
          age: Schema.optionalWith(Schema.Int, { default: () => 30 })
        }
      }),
      said
    )
})

const OpenPage = Tool.make("open_page", {
  description: "Ask the user to open a page",
  handler: () => Effect.map(Tool.elicit({ message: "Sign in, please", url: "https://example.com/login" }), said)
})

const Confirm = Tool.make("confirm", {
  description: "Ask for a confirmation",
  handler: () => Effect.map(Tool.elicit({ message: "Go ahead?" }), said)
})

const Summarize = Tool.make("summarize", {
  description: "Ask the client's model for a summary",
  parameters: { text: Schema.String },
  handler: ({ text }) =>
    Effect.map(
      McpServer.sample({
        messages: [{ role: "user", content: { type: "text", text } }],
        maxTokens: 50,
        systemPrompt: "One line."
      }),
      (result) =>
        `${result.model} (${result.stopReason ?? "?"}): ${result.content.type === "text" ? result.content.text : ""}`
    )
})

const kit = Toolkit.make(Chatty, Failing, AskName, OpenPage, Confirm, Summarize)

const info: McpServer.Options = { name: "in-call", version: "0.0.1" }

// ---------------------------------------------------------------------------------------------------------------
// peers
// ---------------------------------------------------------------------------------------------------------------

interface Peer {
  readonly client: Client
  readonly logs: Array<LoggingMessageNotification["params"]>
  readonly elicitations: Array<ElicitRequest["params"]>
  readonly samplings: Array<CreateMessageRequest["params"]>
}

/** An SDK client with the given capabilities, answering elicitation and sampling as told; closed with the scope. */
const clientOn = (
  transport: Transport,
  options: {
    readonly capabilities?: ClientCapabilities
    readonly elicit?: (params: ElicitRequest["params"]) => ElicitResult | Promise<ElicitResult>
    readonly sample?: (params: CreateMessageRequest["params"]) => CreateMessageResult | Promise<CreateMessageResult>
  } = {}
) =>
  Effect.gen(function*() {
    const client = new Client({ name: "test-client", version: "1.0.0" }, {
      capabilities: options.capabilities ?? {}
    })
    const peer: Peer = { client, logs: [], elicitations: [], samplings: [] }
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void peer.logs.push(n.params))
    if (options.capabilities?.elicitation !== undefined) {
      client.setRequestHandler(ElicitRequestSchema, (request) => {
        peer.elicitations.push(request.params)
        return options.elicit?.(request.params) ?? { action: "cancel" }
      })
    }
    if (options.capabilities?.sampling !== undefined) {
      client.setRequestHandler(CreateMessageRequestSchema, (request) => {
        peer.samplings.push(request.params)
        return options.sample?.(request.params) ??
          { role: "assistant", content: { type: "text", text: "" }, model: "none" }
      })
    }
    yield* Effect.acquireRelease(
      Effect.promise(() => client.connect(transport)),
      () => Effect.promise(() => client.close())
    )
    return peer
  })

/** What the host's own logger wrote, as `level message` lines. */
const hostLogs = () => {
  const lines: Array<string> = []
  const logger = Logger.make(({ logLevel, message }) => {
    lines.push(`${logLevel.label} ${Array.isArray(message) ? message.join(" ") : String(message)}`)
  })
  return { lines, layer: Logger.replace(Logger.defaultLogger, logger) }
}

/** The host's loggers, silenced. */
const quiet = Logger.replace(Logger.defaultLogger, Logger.none)

/** A server on an in-memory pair (its host logging with `host`) and a client on the other end. */
const inMemory = (options: Parameters<typeof clientOn>[1] = {}, host: Layer.Layer<never> = quiet) =>
  Effect.gen(function*() {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
    yield* Effect.provide(McpServer.serve(kit, info, serverSide), host)
    return yield* clientOn(clientSide, options)
  })

const call = (peer: Peer, name: string, args: Record<string, unknown> = {}) =>
  Effect.promise(() => peer.client.callTool({ name, arguments: args }))

/** The one text part of a result. */
const text = (result: unknown): string =>
  (result as { readonly content: ReadonlyArray<{ readonly text: string }> }).content[0].text

/** Lets notifications that arrived with a response be handled (the SDK hands them over a microtask later). */
const settle = Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))

// ---------------------------------------------------------------------------------------------------------------
// tests
// ---------------------------------------------------------------------------------------------------------------

describe("McpServer, in a call", () => {
  describe("logging", () => {
    it.scopedLive("no log reaches a client that set no level; the host's logger logs as before", () =>
      Effect.gen(function*() {
        const host = hostLogs()
        const peer = yield* inMemory({}, host.layer)
        expect(text(yield* call(peer, "chatty"))).toBe("logged")
        yield* settle
        expect(peer.logs).toEqual([])
        expect(host.lines).toEqual(["INFO info", "WARN warning", "ERROR error", "FATAL fatal"])
      }))

    it.scopedLive("at `warning`, warnings and worse arrive, Fatal as critical, named after the tool", () =>
      Effect.gen(function*() {
        const peer = yield* inMemory()
        yield* Effect.promise(() => peer.client.setLoggingLevel("warning"))
        yield* call(peer, "chatty")
        yield* settle
        expect(peer.logs).toEqual([
          { level: "warning", logger: "chatty", data: "warning" },
          { level: "error", logger: "chatty", data: "error" },
          { level: "critical", logger: "chatty", data: "fatal" }
        ])
      }))

    it.scopedLive("at `debug`, Trace and Debug arrive as debug; the host's logger still logs from Info up", () =>
      Effect.gen(function*() {
        const host = hostLogs()
        const peer = yield* inMemory({}, host.layer)
        yield* Effect.promise(() => peer.client.setLoggingLevel("debug"))
        yield* call(peer, "chatty")
        yield* settle
        expect(peer.logs.map((log) => `${log.level} ${String(log.data)}`)).toEqual([
          "debug trace",
          "debug debug",
          "info info",
          "warning warning",
          "error error",
          "critical fatal"
        ])
        expect(host.lines).toEqual(["INFO info", "WARN warning", "ERROR error", "FATAL fatal"])
      }))

    it.scopedLive("`notice` lets warnings and worse through (no Effect level is a notice)", () =>
      Effect.gen(function*() {
        const peer = yield* inMemory()
        yield* Effect.promise(() => peer.client.setLoggingLevel("notice"))
        yield* call(peer, "chatty")
        yield* settle
        expect(peer.logs.map((log) => log.level)).toEqual(["warning", "error", "critical"])
      }))

    it.scopedLive("a log with a cause carries it below the message", () =>
      Effect.gen(function*() {
        const peer = yield* inMemory()
        yield* Effect.promise(() => peer.client.setLoggingLevel("info"))
        yield* call(peer, "failing")
        yield* settle
        expect(peer.logs).toEqual([
          { level: "error", logger: "failing", data: `lost the file\n${Cause.pretty(Cause.fail("ENOENT"))}` }
        ])
      }))

    it.scopedLive("the level is per session: over HTTP, only the session that set one gets logs", () =>
      Effect.gen(function*() {
        const { url } = yield* Effect.provide(McpServer.http(kit, { ...info, port: 0 }), quiet)
        const listening = yield* clientOn(new StreamableHTTPClientTransport(new URL(url)))
        const silent = yield* clientOn(new StreamableHTTPClientTransport(new URL(url)))
        yield* Effect.promise(() => listening.client.setLoggingLevel("error"))
        yield* call(silent, "chatty")
        yield* call(listening, "chatty")
        yield* settle
        expect(listening.logs.map((log) => log.data)).toEqual(["error", "fatal"])
        expect(silent.logs).toEqual([])
      }))
  })

  describe("elicitation", () => {
    const form = { elicitation: { form: {} } }

    it.scopedLive("a form: the client gets the schema's form and the handler the decoded answer", () =>
      Effect.gen(function*() {
        const peer = yield* inMemory({
          capabilities: form,
          elicit: () => ({ action: "accept", content: { name: "Ada" } })
        })
        expect(text(yield* call(peer, "ask_name"))).toBe(`Accept {"name":"Ada","age":30}`)
        expect(peer.elicitations).toEqual([{
          mode: "form",
          message: "Who are you?",
          requestedSchema: {
            type: "object",
            properties: {
              name: { type: "string", title: "Name", description: "Your full name" },
              age: { type: "integer", description: "an integer", default: 30 }
            },
            required: ["name"]
          }
        }])
      }))

    it.scopedLive("decline and cancel come back as they were given", () =>
      Effect.gen(function*() {
        const declining = yield* inMemory({ capabilities: form, elicit: () => ({ action: "decline" }) })
        expect(text(yield* call(declining, "ask_name"))).toBe("Decline")
        const cancelling = yield* inMemory({ capabilities: form, elicit: () => ({ action: "cancel" }) })
        expect(text(yield* call(cancelling, "ask_name"))).toBe("Cancel")
      }))

    it.scopedLive("an answer that does not match the form fails the call, saying what is wrong", () =>
      Effect.gen(function*() {
        const peer = yield* inMemory({
          capabilities: form,
          elicit: () => ({ action: "accept", content: { name: "Ada", age: "old" } })
        })
        const result = yield* call(peer, "ask_name")
        expect(result.isError).toBe(true)
        expect(text(result)).toBe("the answer does not match the form: age: expected an integer, got \"old\"")
      }))

    it.scopedLive("a page: URL mode with a fresh elicitation id, for a client that declared it", () =>
      Effect.gen(function*() {
        const peer = yield* inMemory({
          capabilities: { elicitation: { form: {}, url: {} } },
          elicit: () => ({ action: "accept" })
        })
        expect(text(yield* call(peer, "open_page"))).toBe("Accept undefined")
        expect(peer.elicitations).toEqual([{
          mode: "url",
          message: "Sign in, please",
          url: "https://example.com/login",
          elicitationId: expect.stringMatching(/^[0-9a-f-]{36}$/)
        }])
      }))

    it.scopedLive("a confirmation is a form of no fields", () =>
      Effect.gen(function*() {
        const peer = yield* inMemory({ capabilities: form, elicit: () => ({ action: "accept", content: {} }) })
        expect(text(yield* call(peer, "confirm"))).toBe("Accept undefined")
        expect(peer.elicitations[0]).toEqual({
          mode: "form",
          message: "Go ahead?",
          requestedSchema: { type: "object", properties: {}, required: [] }
        })
      }))

    it.scopedLive("with nobody to ask the answer is Cancel, never Decline, and nothing is sent", () =>
      Effect.gen(function*() {
        const none = yield* inMemory()
        expect(text(yield* call(none, "ask_name"))).toBe("Cancel")
        // a form-only client is not asked to open a page
        const formOnly = yield* inMemory({ capabilities: form, elicit: () => ({ action: "accept" }) })
        expect(text(yield* call(formOnly, "open_page"))).toBe("Cancel")
        expect(formOnly.elicitations).toEqual([])
      }))

    it.scopedLive("a client that cannot answer leaves the question to the host's own Elicitor", () =>
      Effect.gen(function*() {
        const asked: Array<Elicitation.Request> = []
        const host = Elicitation.layer((request) =>
          Effect.sync(() => {
            asked.push(request)
            return Elicitation.accept({ name: "Host" })
          })
        )
        const peer = yield* Effect.provide(inMemory(), host)
        expect(text(yield* call(peer, "ask_name"))).toBe(`Accept {"name":"Host","age":30}`)
        expect(asked.map((request) => request.message)).toEqual(["Who are you?"])
        // one that can is asked instead of the host
        const able = yield* Effect.provide(
          inMemory({ capabilities: form, elicit: () => ({ action: "decline" }) }),
          host
        )
        expect(text(yield* call(able, "ask_name"))).toBe("Decline")
        expect(asked).toHaveLength(1)
      }))

    it.scopedLive("over stdio, when input ends, a question waiting for its answer fails and the server returns", () =>
      Effect.gen(function*() {
        const stdin = new PassThrough()
        const stdout = new PassThrough()
        let written = ""
        const asked = yield* Deferred.make<void>()
        stdout.on("data", (chunk: Buffer) => {
          written += chunk.toString("utf8")
          if (written.includes("\"elicitation/create\"")) Deferred.unsafeDone(asked, Exit.void)
        })
        const server = yield* Effect.forkScoped(McpServer.stdio(kit, { ...info, stdin, stdout }))
        const line = (message: object) => stdin.write(JSON.stringify({ jsonrpc: "2.0", ...message }) + "\n")
        line({
          id: 0,
          method: "initialize",
          params: {
            protocolVersion: "2025-11-25",
            capabilities: { elicitation: {} },
            clientInfo: { name: "l", version: "1" }
          }
        })
        line({ method: "notifications/initialized" })
        line({ id: 1, method: "tools/call", params: { name: "ask_name" } })
        yield* Deferred.await(asked)
        stdin.end()
        yield* Fiber.join(server)
        const answer = written.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l)).find((m) => m.id === 1)
        expect(answer).toEqual({
          jsonrpc: "2.0",
          id: 1,
          result: {
            content: [{
              type: "text",
              text: "the MCP client could not be asked: the client closed its input before answering"
            }],
            isError: true
          }
        })
      }))

    it.scopedLive("over HTTP the question goes on the call's own stream; a stateless request asks nobody", () =>
      Effect.gen(function*() {
        const answer = { capabilities: form, elicit: () => ({ action: "accept", content: { name: "Web" } }) as const }
        const { url } = yield* McpServer.http(kit, { ...info, port: 0 })
        const peer = yield* clientOn(new StreamableHTTPClientTransport(new URL(url)), answer)
        expect(text(yield* call(peer, "ask_name"))).toBe(`Accept {"name":"Web","age":30}`)
        const stateless = yield* McpServer.http(kit, { ...info, port: 0, stateless: true })
        const lone = yield* clientOn(new StreamableHTTPClientTransport(new URL(stateless.url)), answer)
        expect(text(yield* call(lone, "ask_name"))).toBe("Cancel")
        expect(lone.elicitations).toEqual([])
      }))
  })

  describe("sampling", () => {
    it.scopedLive("McpServer.sample asks the client's model and gives its answer", () =>
      Effect.gen(function*() {
        const peer = yield* inMemory({
          capabilities: { sampling: {} },
          sample: () => ({
            role: "assistant",
            content: { type: "text", text: "short" },
            model: "tiny-1",
            stopReason: "endTurn"
          })
        })
        expect(text(yield* call(peer, "summarize", { text: "a long text" }))).toBe("tiny-1 (endTurn): short")
        expect(peer.samplings).toEqual([{
          messages: [{ role: "user", content: { type: "text", text: "a long text" } }],
          maxTokens: 50,
          systemPrompt: "One line."
        }])
      }))

    it.scopedLive("a client without the capability: SamplingError Unsupported, as the call's error", () =>
      Effect.gen(function*() {
        const peer = yield* inMemory()
        const result = yield* call(peer, "summarize", { text: "x" })
        expect(result.isError).toBe(true)
        expect(text(result)).toBe("the MCP client \"test-client\" does not offer sampling")
      }))

    it.scopedLive("a client that refuses: SamplingError Failed, with its words", () =>
      Effect.gen(function*() {
        const peer = yield* inMemory({
          capabilities: { sampling: {} },
          sample: () => {
            throw new McpError(ErrorCode.InvalidRequest, "User rejected sampling request")
          }
        })
        const result = yield* call(peer, "summarize", { text: "x" })
        // its words once, without the code the SDK adds each time an error crosses the wire
        expect(text(result)).toBe("sampling failed: User rejected sampling request")
      }))

    it.effect("outside a call served over MCP: SamplingError Unavailable", () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(
          McpServer.sample({ messages: [{ role: "user", content: { type: "text", text: "hi" } }], maxTokens: 5 })
        )
        expect(error._tag).toBe("SamplingError")
        expect(error.reason).toBe("Unavailable")
        expect(error.message).toBe(
          "sampling needs an MCP client to ask: McpServer.sample works only in a call served over MCP"
        )
      }))

    it.scopedLive("cancelling the call cancels its sampling request (notifications/cancelled)", () =>
      Effect.gen(function*() {
        const asked = yield* Deferred.make<string | number>()
        const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
        yield* McpServer.serve(kit, info, serverSide)
        const client = new Client({ name: "test-client", version: "1.0.0" }, { capabilities: { sampling: {} } })
        client.setRequestHandler(CreateMessageRequestSchema, (_request, extra) => {
          Deferred.unsafeDone(asked, Exit.succeed(extra.requestId))
          return new Promise<never>(() => {})
        })
        yield* Effect.acquireRelease(
          Effect.promise(() => client.connect(clientSide)),
          () => Effect.promise(() => client.close())
        )
        // what the client receives (the SDK ignores a cancellation of request id 0, so the test reads the wire)
        const cancelled = yield* Deferred.make<unknown>()
        const onmessage = clientSide.onmessage!
        clientSide.onmessage = (message, extra) => {
          if ("method" in message && message.method === "notifications/cancelled") {
            Deferred.unsafeDone(cancelled, Exit.succeed(message.params?.requestId))
          }
          onmessage(message, extra)
        }
        const controller = new AbortController()
        const pending = client.callTool({ name: "summarize", arguments: { text: "x" } }, undefined, {
          signal: controller.signal
        }).catch(() => "cancelled")
        const id = yield* Deferred.await(asked)
        controller.abort()
        expect(yield* Effect.promise(() => pending)).toBe("cancelled")
        expect(yield* Deferred.await(cancelled)).toBe(id)
      }))
  })
})
