/**
 * `McpClient` answering a server's questions: with an `Elicitor` in the context of `connect` it declares the
 * elicitation capability and answers `elicitation/create` by asking it, filling in the form's defaults for the
 * fields an accepted answer leaves out (SEP-1034); without one it declares nothing. Against the MCP SDK's own low-level
 * `Server` (in memory), and against our own `McpServer` (`Tool.elicit` on one side, the `Elicitor` on the other). And
 * a server's log messages, with `logLevel`, reaching Effect's loggers.
 */
import { describe, expect, it } from "@effect/vitest"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import type { ElicitRequest } from "@modelcontextprotocol/sdk/types.js"
import { CallToolRequestSchema, ElicitResultSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import type { Layer } from "effect"
import { Effect, Either, HashMap, Logger, LogLevel, Option, Schema } from "effect"
import { Elicitation, Executor, McpClient, McpServer, Tool, ToolError, Toolkit, ToolResult } from "../src/index.js"

/** SEP-1034's form: a default for every kind of field, none of them required. */
const withDefaults: Extract<ElicitRequest["params"], { requestedSchema: unknown }>["requestedSchema"] = {
  type: "object",
  properties: {
    name: { type: "string", description: "User name", default: "John Doe" },
    age: { type: "integer", description: "User age", default: 30 },
    score: { type: "number", description: "User score", default: 95.5 },
    status: { type: "string", description: "User status", enum: ["active", "inactive", "pending"], default: "active" },
    verified: { type: "boolean", description: "Verification status", default: true }
  },
  required: []
}

/**
 * The SDK's low-level server with one tool, `ask`, that sends `params` as `elicitation/create` and answers with the
 * client's `ElicitResult` as JSON (or the error it got); also gives the capabilities the client declared.
 */
const askingServer = (params: ElicitRequest["params"]) =>
  Effect.gen(function*() {
    const server = new Server({ name: "asker", version: "1.0.0" }, { capabilities: { tools: {} } })
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: [{ name: "ask", description: "Ask the user", inputSchema: { type: "object", properties: {} } }]
    }))
    server.setRequestHandler(CallToolRequestSchema, async (_request, extra) => {
      try {
        const result = await extra.sendRequest({ method: "elicitation/create", params }, ElicitResultSchema)
        return { content: [{ type: "text", text: JSON.stringify(result) }] }
      } catch (error) {
        return { content: [{ type: "text", text: `failed: ${(error as Error).message}` }], isError: true }
      }
    })
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
    yield* Effect.acquireRelease(Effect.promise(() => server.connect(serverSide)), () =>
      Effect.promise(() => server.close()))
    return { clientSide, server }
  })

/** Connects a client with the given Elicitor (or none) and calls `ask`; gives the result's text. */
const askThrough = (
  params: ElicitRequest["params"],
  elicitor: Layer.Layer<Elicitation.Elicitor> | undefined
) =>
  Effect.gen(function*() {
    const { clientSide, server } = yield* askingServer(params)
    const connect = McpClient.connect(clientSide)
    const client = yield* (elicitor === undefined ? connect : Effect.provide(connect, elicitor))
    const [outcome] = yield* Executor.run(yield* client.toolkit, [{ id: "1", name: "ask", arguments: {} }])
    const text = Either.match(outcome, { onLeft: ToolError.toModelText, onRight: ToolResult.toText })
    return { capabilities: server.getClientCapabilities(), text }
  })

/** An Elicitor that records the requests and gives one answer. */
const answering = (answer: Elicitation.Result<Elicitation.Content>) => {
  const asked: Array<Elicitation.Request> = []
  return {
    asked,
    layer: Elicitation.layer((request) =>
      Effect.sync(() => {
        asked.push(request)
        return answer
      })
    )
  }
}

const form = (requestedSchema: typeof withDefaults): ElicitRequest["params"] => ({
  mode: "form",
  message: "Please review",
  requestedSchema
})

describe("McpClient answering elicitation", () => {
  it.scopedLive("with an Elicitor it declares forms and pages, and an accepted form gets its defaults", () =>
    Effect.gen(function*() {
      const { asked, layer } = answering(Elicitation.accept({}))
      const { capabilities, text } = yield* askThrough(form(withDefaults), layer)
      expect(capabilities).toEqual({ elicitation: { form: {}, url: {} } })
      expect(JSON.parse(text)).toEqual({
        action: "accept",
        content: { name: "John Doe", age: 30, score: 95.5, status: "active", verified: true }
      })
      // the Elicitor sees the form as the server sent it, defaults and all, to show them prefilled
      expect(asked).toEqual([{ message: "Please review", mode: "form", requestedSchema: withDefaults }])
    }))

  it.scopedLive("what the answer gives is kept; only what it leaves out takes the default", () =>
    Effect.gen(function*() {
      const { layer } = answering(Elicitation.accept({ name: "Jane", verified: false }))
      const { text } = yield* askThrough(form(withDefaults), layer)
      expect(JSON.parse(text).content).toEqual({
        name: "Jane",
        age: 30,
        score: 95.5,
        status: "active",
        verified: false
      })
    }))

  it.scopedLive("decline and cancel are sent as such, without content", () =>
    Effect.gen(function*() {
      expect(JSON.parse((yield* askThrough(form(withDefaults), answering(Elicitation.decline).layer)).text)).toEqual({
        action: "decline"
      })
      expect(JSON.parse((yield* askThrough(form(withDefaults), answering(Elicitation.cancel).layer)).text)).toEqual({
        action: "cancel"
      })
    }))

  it.scopedLive("a page: the Elicitor gets the URL", () =>
    Effect.gen(function*() {
      const { asked, layer } = answering(Elicitation.accept({}))
      const page: ElicitRequest["params"] = {
        mode: "url",
        message: "Sign in",
        url: "https://example.com/login",
        elicitationId: "e-1"
      }
      const { text } = yield* askThrough(page, layer)
      expect(JSON.parse(text)).toEqual({ action: "accept", content: {} })
      expect(asked).toEqual([{ message: "Sign in", mode: "url", url: "https://example.com/login" }])
    }))

  it.scopedLive("an Elicitor that fails: the server gets an error with its message", () =>
    Effect.gen(function*() {
      const broken = Elicitation.layer(() =>
        Effect.fail(new Elicitation.ElicitationError({ message: "no screen to show it on" }))
      )
      const { text } = yield* askThrough(form(withDefaults), broken)
      expect(text).toBe("Error: failed: MCP error -32603: no screen to show it on")
    }))

  it.scopedLive("without an Elicitor it declares nothing and answers no question", () =>
    Effect.gen(function*() {
      const { capabilities, text } = yield* askThrough(form(withDefaults), undefined)
      expect(capabilities).toEqual({})
      expect(text).toBe("Error: failed: MCP error -32601: Method not found")
    }))

  it.scopedLive("our client and our server: Tool.elicit on one side, the Elicitor on the other", () =>
    Effect.gen(function*() {
      const Register = Tool.make("register", {
        description: "Register the user",
        handler: () =>
          Effect.map(
            Tool.elicit({
              message: "Your details",
              schema: {
                name: Schema.String,
                plan: Schema.optionalWith(Schema.Literal("free", "pro"), { default: () => "free" as const })
              }
            }),
            (answer) => answer._tag === "Accept" ? `${answer.content.name} on ${answer.content.plan}` : answer._tag
          )
      })
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
      yield* McpServer.serve(Toolkit.make(Register), { name: "ours", version: "1.0.0" }, serverSide)
      const { asked, layer } = answering(Elicitation.accept({ name: "Ada" }))
      const client = yield* Effect.provide(McpClient.connect(clientSide), layer)
      const [outcome] = yield* Executor.run(yield* client.toolkit, [{ id: "1", name: "register", arguments: {} }])
      expect(Either.map(outcome, ToolResult.toText)).toEqual(Either.right("Ada on free"))
      expect(asked[0].requestedSchema).toEqual({
        type: "object",
        properties: { name: { type: "string" }, plan: { type: "string", enum: ["free", "pro"], default: "free" } },
        required: ["name"]
      })
    }))
})

describe("McpClient and a server's log messages", () => {
  const Chatty = Tool.make("chatty", {
    description: "Log at three levels",
    handler: () =>
      Effect.gen(function*() {
        yield* Effect.logDebug("details")
        yield* Effect.logInfo("working")
        yield* Effect.logError("trouble")
        return "done"
      })
  })

  /**
   * Our client on our server, with `logLevel`; gives what reached the client side's logger (running at that
   * minimum level: a message below the minimum is dropped by Effect, as any log is).
   */
  const logsAt = (logLevel: LogLevel.LogLevel | undefined) =>
    Effect.gen(function*() {
      const lines: Array<string> = []
      const capture = Logger.make(({ annotations, logLevel, message }) => {
        const server = Option.getOrUndefined(HashMap.get(annotations, "mcp.server"))
        const logger = Option.getOrUndefined(HashMap.get(annotations, "mcp.logger"))
        const text = Array.isArray(message) ? message.join(" ") : String(message)
        lines.push(`${logLevel.label} ${text} (${String(server)}, ${String(logger)})`)
      })
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
      yield* McpServer.serve(Toolkit.make(Chatty), { name: "chatty-server", version: "1.0.0" }, serverSide).pipe(
        Effect.provide(Logger.replace(Logger.defaultLogger, Logger.none))
      )
      const client = yield* McpClient.connect(clientSide, logLevel === undefined ? {} : { logLevel }).pipe(
        Effect.provide(Logger.replace(Logger.defaultLogger, capture)),
        Logger.withMinimumLogLevel(logLevel ?? LogLevel.Info)
      )
      yield* Executor.run(yield* client.toolkit, [{ id: "1", name: "chatty", arguments: {} }])
      yield* Effect.sleep("20 millis")
      return lines
    })

  it.scopedLive("with logLevel, the server is asked for that level and its messages are logged at Effect's", () =>
    Effect.gen(function*() {
      expect(yield* logsAt(LogLevel.Info)).toEqual([
        "INFO working (MCP server \"chatty-server\", chatty)",
        "ERROR trouble (MCP server \"chatty-server\", chatty)"
      ])
    }))

  it.scopedLive("Debug asks for debug messages; without logLevel nothing is asked or read", () =>
    Effect.gen(function*() {
      expect((yield* logsAt(LogLevel.Debug)).map((line) => line.split(" (")[0])).toEqual([
        "DEBUG details",
        "INFO working",
        "ERROR trouble"
      ])
      expect(yield* logsAt(undefined)).toEqual([])
    }))
})
