/**
 * Hostile input on the MCP server's wire, at the level a client meets it: raw JSON-RPC lines written to a real
 * `McpServer.stdio` child process (examples/mcp-stdio-server.ts), the same messages POSTed raw over HTTP, and the
 * model's own input (a tool name, arguments) through the SDK's `Client`. Every request gets an answer, each in one
 * line; what is echoed back is bounded.
 */
import { describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Effect, Schema } from "effect"
import * as ChildProcess from "node:child_process"
import * as Readline from "node:readline"
import { Tool, Toolkit } from "../src/index.js"
import * as McpServer from "../src/McpServer.js"
import { example } from "./fixtures/compiled.js"

const EXAMPLE = example("mcp-stdio-server")

/** Each hostile request, and the error it is answered with (`id` absent where it could not be read). */
const hostile: ReadonlyArray<{ readonly what: string; readonly line: string; readonly answer: unknown }> = [
  {
    what: "params that are an array",
    line: `{"jsonrpc":"2.0","id":10,"method":"tools/list","params":[]}`,
    answer: { id: 10, error: { code: -32602, message: "Invalid params: params must be an object, got an array" } }
  },
  {
    what: "params that are a string",
    line: `{"jsonrpc":"2.0","id":11,"method":"tools/list","params":"x"}`,
    answer: { id: 11, error: { code: -32602, message: "Invalid params: params must be an object, got \"x\"" } }
  },
  {
    what: "_meta that is a string",
    line: `{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"upper","_meta":"x"}}`,
    answer: { id: 12, error: { code: -32602, message: "Invalid params: params._meta must be an object, got \"x\"" } }
  },
  {
    what: "a progress token that is an object",
    line: `{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"upper","_meta":{"progressToken":{}}}}`,
    answer: {
      id: 13,
      error: {
        code: -32602,
        message: "Invalid params: params._meta.progressToken must be a string or an integer, got {}"
      }
    }
  },
  {
    what: "a tool name that is a number",
    line: `{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":123}}`,
    answer: { id: 14, error: { code: -32602, message: "Invalid params: params.name must be a string, got 123" } }
  },
  {
    what: "a batch",
    line: `[{"jsonrpc":"2.0","id":15,"method":"ping"},{"jsonrpc":"2.0","id":16,"method":"ping"}]`,
    answer: {
      error: { code: -32600, message: "Invalid Request: JSON-RPC batches are not supported; send one message" }
    }
  },
  {
    what: "an id that is not an integer",
    line: `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`,
    answer: { error: { code: -32600, message: "Invalid Request: \"id\" must be a string or an integer, got 1.5" } }
  },
  {
    what: "a member JSON-RPC does not define",
    line: `{"jsonrpc":"2.0","id":17,"method":"ping","extra":true}`,
    answer: { id: 17, error: { code: -32600, message: "Invalid Request: unknown member \"extra\"" } }
  },
  {
    what: "a level logging/setLevel does not know",
    line: `{"jsonrpc":"2.0","id":18,"method":"logging/setLevel","params":{"level":"loud"}}`,
    answer: {
      id: 18,
      error: {
        code: -32602,
        message: "Invalid params: params.level must be one of \"debug\", \"info\", \"notice\", \"warning\", " +
          "\"error\", \"critical\", \"alert\", \"emergency\", got \"loud\""
      }
    }
  },
  {
    what: "a line that is not JSON",
    line: `{"jsonrpc":"2.0","id":19,"method":`,
    answer: { error: { code: -32700, message: expect.stringMatching(/^Parse error: /) } }
  }
]

const initialize = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } }
}

/** The example server in a child process, spoken to in raw lines; every line it writes is kept. */
const stdioChild = Effect.gen(function*() {
  const child = yield* Effect.acquireRelease(
    Effect.sync(() => ChildProcess.spawn(process.execPath, [EXAMPLE], { stdio: ["pipe", "pipe", "pipe"] })),
    (child) => Effect.sync(() => child.kill())
  )
  const lines: Array<Record<string, unknown>> = []
  const waiting: Array<() => void> = []
  Readline.createInterface({ input: child.stdout }).on("line", (line) => {
    lines.push(JSON.parse(line))
    for (const wake of waiting.splice(0)) wake()
  })
  const write = (line: string) => Effect.sync(() => void child.stdin.write(line + "\n"))
  /** Resolves once `count` lines have been written by the server. */
  const linesUpTo = (count: number) =>
    Effect.promise(() =>
      new Promise<Array<Record<string, unknown>>>((resolve) => {
        const check = () => (lines.length >= count ? resolve(lines.slice(0, count)) : waiting.push(check))
        check()
      })
    )
  return { write, linesUpTo, child }
})

const jsonHeaders = { "content-type": "application/json", accept: "application/json, text/event-stream" }

const postRaw = (url: string, body: string, headers: Record<string, string> = {}) =>
  Effect.promise(async () => {
    const response = await fetch(url, { method: "POST", headers: { ...jsonHeaders, ...headers }, body })
    return { status: response.status, headers: response.headers, body: await response.text() }
  })

/** The JSON-RPC messages of an SSE body. */
const events = (body: string): Array<Record<string, unknown>> =>
  body.split("\n").filter((line) => line.startsWith("data: ")).map((line) => JSON.parse(line.slice(6)))

const Upper = Tool.make("upper", {
  description: "Uppercase a text",
  parameters: { text: Schema.String },
  handler: ({ text }) => Effect.succeed(text.toUpperCase())
})

const Add = Tool.make("add", {
  description: "Add two numbers",
  parameters: { a: Schema.Number, b: Schema.Number },
  handler: ({ a, b }) => Effect.succeed(String(a + b))
})

/** What a naive deep merge does with the arguments: the path a `constructor.prototype` key would pollute. */
const naiveMerge = (target: Record<string, any>, source: Record<string, any>): Record<string, any> => {
  for (const key of Object.keys(source)) {
    const value = source[key]
    if (typeof value === "object" && value !== null) {
      if (typeof target[key] !== "object" && typeof target[key] !== "function") target[key] = {}
      naiveMerge(target[key], value)
    } else target[key] = value
  }
  return target
}

const Merge = Tool.make("merge", {
  description: "Merge options into the defaults",
  parameters: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  handler: (options) => Effect.succeed(JSON.stringify(naiveMerge({}, options)))
})

const many = Array.from(
  { length: 60 },
  (_, i) => Tool.make(`tool_${i}`, { description: `Tool ${i}`, handler: () => Effect.succeed("ok") })
)

const kit = Toolkit.make(Upper, Add, Merge, ...many)

const sdkClient = (url: string) =>
  Effect.gen(function*() {
    const client = new Client({ name: "wire-test", version: "1.0.0" })
    yield* Effect.acquireRelease(
      Effect.promise(() => client.connect(new StreamableHTTPClientTransport(new URL(url)))),
      () => Effect.promise(() => client.close())
    )
    return client
  })

const textOf = (result: unknown): string => (result as { content: Array<{ text: string }> }).content[0].text

describe("McpServer, hostile input on the wire", () => {
  it.scopedLive(
    "stdio: every hostile request to the example server is answered, one line each, and it goes on",
    () =>
      Effect.gen(function*() {
        const server = yield* stdioChild
        yield* server.write(JSON.stringify(initialize))
        const [initialized] = yield* server.linesUpTo(1)
        expect(initialized).toMatchObject({ id: 1, result: { serverInfo: { name: "text-tools" } } })
        yield* server.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }))
        // a malformed notification is never answered (JSON-RPC answers no notification)
        yield* server.write(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":"x"}`)
        for (const { line } of hostile) yield* server.write(line)
        yield* server.write(
          JSON.stringify({
            jsonrpc: "2.0",
            id: 99,
            method: "tools/call",
            params: { name: "upper", arguments: { text: "ok" } }
          })
        )
        const lines = yield* server.linesUpTo(hostile.length + 2)
        expect(lines.slice(1, -1)).toEqual(hostile.map(({ answer }) => ({ jsonrpc: "2.0", ...(answer as object) })))
        expect(lines.at(-1)).toEqual({ jsonrpc: "2.0", id: 99, result: { content: [{ type: "text", text: "OK" }] } })
      }),
    { timeout: 30_000 }
  )

  it.scopedLive("HTTP: every hostile request is a 400 carrying the same error, and the session goes on", () =>
    Effect.gen(function*() {
      const { url } = yield* McpServer.http(kit, { name: "wire", version: "1.0.0", port: 0 })
      const init = yield* postRaw(url, JSON.stringify(initialize))
      const session = { "mcp-session-id": init.headers.get("mcp-session-id")!, "mcp-protocol-version": "2025-11-25" }
      for (const { answer, line, what } of hostile) {
        const reply = yield* postRaw(url, line, session)
        const expected = what === "a line that is not JSON"
          ? { error: { code: -32700, message: "Parse error: Invalid JSON" } }
          : answer
        expect({ what, status: reply.status, body: JSON.parse(reply.body) }).toEqual({
          what,
          status: 400,
          body: { jsonrpc: "2.0", ...(expected as object) }
        })
      }
      const ok = yield* postRaw(
        url,
        JSON.stringify({
          jsonrpc: "2.0",
          id: 99,
          method: "tools/call",
          params: { name: "upper", arguments: { text: "ok" } }
        }),
        session
      )
      expect(events(ok.body)).toEqual([{ jsonrpc: "2.0", id: 99, result: { content: [{ type: "text", text: "OK" }] } }])
    }))

  it.scopedLive("an unknown tool name of 100,000 characters: the answer quotes 64 and lists 50 tools", () =>
    Effect.gen(function*() {
      const { url } = yield* McpServer.http(kit, { name: "wire", version: "1.0.0", port: 0 })
      const client = yield* sdkClient(url)
      const result = yield* Effect.promise(() => client.callTool({ name: "x".repeat(100_000) }))
      const text = textOf(result)
      expect(result.isError).toBe(true)
      expect(text).toBe(
        `unknown tool "${"x".repeat(64)}…" (100000 characters); available tools: upper, add, merge, ` +
          `${many.slice(0, 47).map((tool) => tool.name).join(", ")}, and 13 more`
      )
      expect(text.length).toBeLessThan(1000)
    }))

  it.scopedLive("a property name of 100,000 characters: each problem line is at most 500 characters", () =>
    Effect.gen(function*() {
      const { url } = yield* McpServer.http(kit, { name: "wire", version: "1.0.0", port: 0 })
      const client = yield* sdkClient(url)
      const result = yield* Effect.promise(() =>
        client.callTool({ name: "upper", arguments: { text: "a", ["k".repeat(100_000)]: "v".repeat(100_000) } })
      )
      const text = textOf(result)
      expect(result.isError).toBe(true)
      expect(text.startsWith(`invalid arguments: ${"k".repeat(100)}`)).toBe(true)
      expect(text.split("\n").every((line) => line.length <= 500 + "invalid arguments: ".length)).toBe(true)
      expect(text.endsWith("…")).toBe(true)
    }))

  it.scopedLive("constructor.prototype is refused like __proto__: the handler never runs, nothing is polluted", () =>
    Effect.gen(function*() {
      const { url } = yield* McpServer.http(kit, { name: "wire", version: "1.0.0", port: 0 })
      const client = yield* sdkClient(url)
      const polluting = { constructor: { prototype: { polluted: "yes" } } }
      const result = yield* Effect.promise(() => client.callTool({ name: "merge", arguments: polluting }))
      expect(result).toEqual({
        content: [{
          type: "text",
          text: "invalid arguments: \"constructor.prototype\" is not allowed as a property path"
        }],
        isError: true
      })
      expect(({} as Record<string, unknown>).polluted).toBeUndefined()
      // a property named constructor is an ordinary property
      const plain = yield* Effect.promise(() =>
        client.callTool({ name: "merge", arguments: { constructor: "Object", options: { depth: 2 } } })
      )
      expect(textOf(plain)).toBe("{\"constructor\":\"Object\",\"options\":{\"depth\":2}}")
    }))

  it.scopedLive("1e400 is not a number a tool gets: over MCP it is out of range, as text it reads as written", () =>
    Effect.gen(function*() {
      const { url } = yield* McpServer.http(kit, { name: "wire", version: "1.0.0", port: 0 })
      const init = yield* postRaw(url, JSON.stringify(initialize))
      const session = { "mcp-session-id": init.headers.get("mcp-session-id")!, "mcp-protocol-version": "2025-11-25" }
      const reply = yield* postRaw(
        url,
        `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"add","arguments":{"a":1e400,"b":1}}}`,
        session
      )
      expect(events(reply.body)).toEqual([{
        jsonrpc: "2.0",
        id: 5,
        result: {
          content: [{
            type: "text",
            text: "invalid arguments: a: expected a finite number, got a number out of range (Infinity)"
          }],
          isError: true
        }
      }])
      // a model's arguments as the JSON text it wrote (OpenAI, the stdio provider protocol)
      const outcome = yield* Tool.execute(Add, { id: "c1", arguments: "{\"a\":1e400,\"b\":-2e999}" })
      expect(outcome._tag === "Left" && outcome.left.message).toBe(
        "invalid arguments: a: expected a finite number, got 1e400\nb: expected a finite number, got -2e999"
      )
      // a large number that is a double is fine
      const fine = yield* Tool.execute(Add, { id: "c2", arguments: "{\"a\":1e300,\"b\":0}" })
      expect(fine._tag).toBe("Right")
    }))
})
