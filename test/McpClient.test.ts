/**
 * The MCP client against a peer we control: the SDK's low-level `Server` in memory for the mapping, progress,
 * cancellation and `tools/list_changed` rules, and a misbehaving stdio server (test/fixtures/mcp-fault-server.mjs)
 * for deaths, silence, garbage and oversize answers. Peers run on real time, so these tests are `live`.
 */
import { describe, expect, it } from "@effect/vitest"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import type { CallToolRequest, CallToolResult, Tool as McpTool } from "@modelcontextprotocol/sdk/types.js"
import { CallToolRequestSchema, ListToolsRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js"
import { Chunk, Effect, Either, Exit, Fiber, Logger, Option, Scope, Stream } from "effect"
import * as ChildProcess from "node:child_process"
import * as fs from "node:fs"
import * as Http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as Executor from "../src/Executor.js"
import { RECORDS_META_KEY, toCallToolResult } from "../src/internal/mcp.js"
import { exceedsBytes, responseIdOf } from "../src/internal/mcpClient.js"
import * as McpClient from "../src/McpClient.js"
import * as Permission from "../src/Permission.js"
import * as Recorder from "../src/Recorder.js"
import * as Tool from "../src/Tool.js"
import * as ToolError from "../src/ToolError.js"
import * as Toolkit from "../src/Toolkit.js"
import * as ToolResult from "../src/ToolResult.js"
import { modelText } from "./helpers.js"

// ---------------------------------------------------------------------------------------------------------------
// an in-memory peer
// ---------------------------------------------------------------------------------------------------------------

type Extra = Parameters<Parameters<Server["setRequestHandler"]>[1]>[1]
type Handler = (args: Record<string, unknown>, extra: Extra, peer: Peer) => Promise<CallToolResult>

interface Peer {
  readonly server: Server
  readonly transport: InMemoryTransport
  tools: Array<McpTool>
  /** Every `tools/call` the server received, with its `_meta`. */
  readonly calls: Array<CallToolRequest["params"]>
  lists: number
  listing: number
  maxListing: number
  listDelayMillis: number
  failLists: boolean
  readonly notify: () => Promise<void>
}

const schema = (properties: Record<string, object> = {}, required: Array<string> = []) => ({
  type: "object" as const,
  properties,
  required
})

const sleep = (millis: number) => new Promise<void>((resolve) => setTimeout(resolve, millis))

/** An SDK server in memory whose tools answer through `handlers`; closed with the scope. */
const makePeer = (options: {
  readonly tools: Array<McpTool>
  readonly handlers: Record<string, Handler>
  readonly listChanged?: boolean
  readonly instructions?: string
}): Effect.Effect<Peer, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
      const server = new Server({ name: "peer", version: "1.2.3", title: "A peer" }, {
        capabilities: { tools: options.listChanged === false ? {} : { listChanged: true } },
        ...(options.instructions === undefined ? {} : { instructions: options.instructions })
      })
      const peer: Peer = {
        server,
        transport: clientSide,
        tools: options.tools,
        calls: [],
        lists: 0,
        listing: 0,
        maxListing: 0,
        listDelayMillis: 0,
        failLists: false,
        notify: () => server.sendToolListChanged()
      }
      server.setRequestHandler(ListToolsRequestSchema, async () => {
        peer.lists++
        peer.listing++
        peer.maxListing = Math.max(peer.maxListing, peer.listing)
        try {
          if (peer.listDelayMillis > 0) await sleep(peer.listDelayMillis)
          if (peer.failLists) throw new McpError(-32603, "the tool registry is down")
          return { tools: peer.tools }
        } finally {
          peer.listing--
        }
      })
      server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
        peer.calls.push(request.params)
        const handler = options.handlers[request.params.name]
        if (handler === undefined) throw new McpError(-32602, `Tool ${request.params.name} not found`)
        return handler(request.params.arguments ?? {}, extra, peer)
      })
      await server.connect(serverSide)
      return peer
    }),
    (peer) => Effect.promise(() => peer.server.close())
  )

const text = (value: string): CallToolResult => ({ content: [{ type: "text", text: value }] })

const echoTool: McpTool = {
  name: "echo",
  description: "Echo a message",
  inputSchema: schema({ message: { type: "string" } }, ["message"])
}

const echo: Handler = async (args) => text(String(args.message))

const run = (kit: Toolkit.Toolkit<Tool.Tool<string>>, name: string, args: Record<string, unknown> = {}) =>
  Effect.map(Executor.run(kit, [{ id: "call_1", name, arguments: args }]), (outcomes) => outcomes[0])

/** Captures the log lines of an effect (and of the fibers it forks). */
const withLogs = <A, E, R>(f: (logs: Array<string>) => Effect.Effect<A, E, R>) => {
  const logs: Array<string> = []
  const logger = Logger.make(({ message }) =>
    void logs.push(Array.isArray(message) ? message.join(" ") : String(message))
  )
  return Effect.provide(f(logs), Logger.replace(Logger.defaultLogger, logger))
}

const eventually = (condition: () => boolean, millis = 2_000) =>
  Effect.promise(async () => {
    const deadline = Date.now() + millis
    while (!condition() && Date.now() < deadline) await sleep(5)
    return condition()
  })

// ---------------------------------------------------------------------------------------------------------------
// a process-watching kit for the stdio tests
// ---------------------------------------------------------------------------------------------------------------

const faultServer = fileURLToPath(new URL("./fixtures/mcp-fault-server.mjs", import.meta.url))

const fault = (mode: string, pidFile?: string) =>
  McpClient.stdio({
    command: process.execPath,
    args: [faultServer, mode],
    killGrace: "300 millis",
    env: { FAULT_PID_FILE: pidFile }
  })

/** A file for a fault server's pid, and a check that the server it names (if it got to start) is gone. */
const pidFile = () => {
  const file = path.join(os.tmpdir(), `mcp-fault-${process.pid}-${Math.random().toString(36).slice(2)}.pid`)
  return {
    file,
    gone: (): boolean => {
      if (!fs.existsSync(file)) return true
      const pid = Number(fs.readFileSync(file, "utf8"))
      fs.rmSync(file, { force: true })
      return !alive(pid) && groupMembers(pid).length === 0
    }
  }
}

/** Whether a process is alive: exists and is not a zombie waiting for a parent that will never reap it. */
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z"
  } catch {
    return false
  }
}

/** Live (not zombie) members of a process group, per `ps`. */
const groupMembers = (pgid: number): Array<string> =>
  ChildProcess.execFileSync("ps", ["-eo", "pid=,pgid=,stat="], { encoding: "utf8" }).split("\n")
    .map((line) => line.trim().split(/\s+/))
    .filter(([, group, stat]) => group === String(pgid) && stat !== undefined && !stat.startsWith("Z"))
    .map(([pid]) => pid)

const failureOf = (outcome: Executor.Outcome): ToolError.ToolError => {
  if (Either.isRight(outcome)) throw new Error(`expected a failure, got ${ToolResult.toText(outcome.right)}`)
  return outcome.left
}

describe("McpClient", () => {
  describe("remote tools", () => {
    it.scopedLive("a first listing the server refuses fails connect with its words, after one request", () =>
      Effect.gen(function*() {
        const peer = yield* makePeer({ tools: [echoTool], handlers: { echo } })
        peer.failLists = true
        const error = yield* Effect.flip(McpClient.connect(peer.transport))
        expect(error.message).toBe("listing the tools failed: MCP error -32603: the tool registry is down")
        // the first page, asked for as the handshake ended, is the listing's first request: not sent again
        expect(peer.lists).toBe(1)
      }))

    it.scopedLive("a first page slower than connectTimeout fails connect in that time, after one request", () =>
      Effect.gen(function*() {
        const peer = yield* makePeer({ tools: [echoTool], handlers: { echo } })
        peer.listDelayMillis = 10_000
        const started = Date.now()
        const error = yield* Effect.flip(McpClient.connect(peer.transport, { connectTimeout: "300 millis" }))
        expect(error.message).toBe("the MCP server \"peer\" did not finish listing its tools within 300ms")
        expect(Date.now() - started).toBeLessThan(5_000)
        expect(peer.lists).toBe(1)
      }))

    it.scopedLive("lists the server's tools as tools with their schema, title, hints and output schema", () =>
      Effect.gen(function*() {
        const peer = yield* makePeer({
          tools: [
            { ...echoTool, title: "Echo" },
            {
              name: "delete_file",
              description: "Delete a file",
              inputSchema: schema({ path: { type: "string" } }, ["path"]),
              annotations: { title: "Delete", readOnlyHint: false }
            },
            {
              name: "weather",
              description: "Weather in a city",
              inputSchema: schema({ city: { type: "string" } }, ["city"]),
              outputSchema: schema({ temperature: { type: "number" } }, ["temperature"]),
              annotations: { readOnlyHint: true, openWorldHint: false }
            }
          ],
          handlers: {},
          instructions: "Use echo to test."
        })
        const client = yield* McpClient.connect(peer.transport, { clientInfo: { name: "my-host", version: "2.0.0" } })
        expect(peer.server.getClientVersion()).toEqual({ name: "my-host", version: "2.0.0" })
        expect(client.serverInfo).toEqual({ name: "peer", version: "1.2.3", title: "A peer" })
        expect(client.instructions).toBe("Use echo to test.")
        const [echoed, del, weather] = yield* client.tools
        expect(echoed.name).toBe("echo")
        expect(echoed.title).toBe("Echo")
        expect(echoed.description).toBe("Echo a message")
        expect(echoed.inputSchema).toEqual(schema({ message: { type: "string" } }, ["message"]))
        // no annotations block: nothing stated, which is not "harmless"
        expect(echoed.annotations).toEqual({})
        // a block with missing hints: MCP's defaults (destructive and open-world default true)
        expect(del.annotations).toEqual({
          title: "Delete",
          readOnly: false,
          destructive: true,
          idempotent: false,
          openWorld: true
        })
        expect(del.title).toBe("Delete")
        expect(weather.annotations).toEqual({ readOnly: true, destructive: true, idempotent: false, openWorld: false })
        expect(weather.outputSchema).toEqual(schema({ temperature: { type: "number" } }, ["temperature"]))
      }))

    it.scopedLive("prefixes names, and takes resource and sequential overrides by remote or prefixed name", () =>
      Effect.gen(function*() {
        const tool = (name: string): McpTool => ({ name, inputSchema: schema({ path: { type: "string" } }) })
        const peer = yield* makePeer({
          tools: [tool("read"), tool("write"), tool("shell"), tool("files.list")],
          handlers: {}
        })
        const client = yield* McpClient.connect(peer.transport, {
          prefix: "fs",
          resource: {
            read: ({ path }) => `file:${path}`,
            fs__write: ({ path }) => `file:${path}`,
            shell: "shell:a",
            fs__shell: "shell:b"
          },
          sequential: { "fs__files_list": true }
        })
        const kit = yield* client.toolkit
        expect(Toolkit.names(kit)).toEqual(["fs__read", "fs__write", "fs__shell", "fs__files_list"])
        const keys = (name: string, params: unknown) =>
          Option.getOrThrow(Toolkit.lookup(kit, name))[Tool.KernelId].resources(params)
        expect(keys("fs__read", { path: "a" })).toEqual(["file:a"])
        expect(keys("fs__write", { path: "b" })).toEqual(["file:b"])
        // both spellings given: the later entry wins
        expect(keys("fs__shell", {})).toEqual(["shell:b"])
        expect(Option.getOrThrow(Toolkit.lookup(kit, "fs__files_list")).sequential).toBe(true)
        expect(Option.getOrThrow(Toolkit.lookup(kit, "fs__read")).sequential).toBe(false)
      }))

    it.scopedLive("skips, with a warning, a tool whose name cannot be offered", () =>
      withLogs((logs) =>
        Effect.gen(function*() {
          const peer = yield* makePeer({
            tools: [echoTool, { name: "x".repeat(70), inputSchema: schema() }],
            handlers: {}
          })
          const client = yield* McpClient.connect(peer.transport)
          expect(Toolkit.names(yield* client.toolkit)).toEqual(["echo"])
          expect(logs.join("\n")).toContain("cannot be offered")
        })
      ))

    it.scopedLive("asks the Permission requester before each call only when given a `permission` action", () =>
      Effect.gen(function*() {
        const asked: Array<Permission.PermissionRequest> = []
        const policy = Permission.layer((request) =>
          Effect.sync(() => {
            asked.push(request)
            return Permission.deny("not today")
          })
        )
        const peer = yield* makePeer({
          tools: [{ ...echoTool, annotations: { readOnlyHint: true } }],
          handlers: { echo }
        })
        const open = yield* McpClient.connect(peer.transport, { prefix: "open" })
        const ok = yield* run(yield* open.toolkit, "open__echo", { message: "hi" }).pipe(Effect.provide(policy))
        expect(modelText(ok)).toBe("hi")
        expect(asked).toEqual([])
        const peer2 = yield* makePeer({
          tools: [{ ...echoTool, annotations: { readOnlyHint: true } }],
          handlers: { echo }
        })
        const guarded = yield* McpClient.connect(peer2.transport, { prefix: "g", permission: "mcp" })
        const denied = yield* run(yield* guarded.toolkit, "g__echo", { message: "hi" }).pipe(Effect.provide(policy))
        expect(modelText(denied)).toBe(
          "Error: permission denied: call echo on the MCP server \"peer\" with {\"message\":\"hi\"}: not today"
        )
        expect(asked).toMatchObject([{
          tool: "g__echo",
          action: "mcp",
          parameters: { message: "hi" },
          annotations: { readOnly: true, destructive: true, idempotent: false, openWorld: true }
        }])
        expect(peer2.calls).toEqual([])
      }))

    it.scopedLive("checks arguments locally: a bad call never reaches the server", () =>
      Effect.gen(function*() {
        const peer = yield* makePeer({ tools: [echoTool], handlers: { echo } })
        const client = yield* McpClient.connect(peer.transport)
        const outcome = yield* run(yield* client.toolkit, "echo", { message: 42 })
        expect(modelText(outcome)).toBe("Error: invalid arguments: message: expected a string, got 42")
        expect(peer.calls).toEqual([])
        expect(modelText(yield* run(yield* client.toolkit, "echo", { message: "hi" }))).toBe("hi")
        expect(peer.calls.map((c) => c.arguments)).toEqual([{ message: "hi" }])
      }))
  })

  describe("results", () => {
    const parts: ReadonlyArray<ToolResult.Content> = [
      { type: "text", text: "hello", annotations: { audience: ["user"], priority: 0.5 } },
      { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
      { type: "audio", data: "UklGRg==", mimeType: "audio/wav" },
      { type: "resource", resource: { uri: "file:///a.txt", mimeType: "text/plain", text: "a" } },
      { type: "resource", resource: { uri: "file:///b.bin", blob: "AAEC" } },
      { type: "resource_link", uri: "file:///c.md", name: "c.md", title: "C", mimeType: "text/markdown", size: 12 }
    ]

    it.scopedLive("maps every content type, structured content and records, as the server's mapping sent them", () =>
      Effect.gen(function*() {
        const record = new Recorder.Record({
          namespace: "bash/process",
          data: { pgid: Number.MAX_SAFE_INTEGER, z: 1, a: 2 }
        })
        const served = ToolResult.make({ content: parts, structured: { ok: true }, details: record })
        const peer = yield* makePeer({
          tools: [{ name: "all", inputSchema: schema(), outputSchema: schema({ ok: { type: "boolean" } }) }],
          handlers: { all: async () => toCallToolResult(Either.right(served), { structured: true }) as CallToolResult }
        })
        const client = yield* McpClient.connect(peer.transport)
        const outcome = yield* run(yield* client.toolkit, "all")
        expect(Either.isRight(outcome)).toBe(true)
        const result = Either.getOrThrow(outcome)
        expect(result.content).toEqual(parts)
        expect(result.structured).toEqual({ ok: true })
        expect(result.details).toBeInstanceOf(Recorder.Record)
        expect((result.details as Recorder.Record).namespace).toBe("bash/process")
        expect(JSON.stringify((result.details as Recorder.Record).data)).toBe(JSON.stringify(record.data))
      }))

    it.scopedLive("maps isError to a ToolFailure with the joined text, or `tool call failed` when there is none", () =>
      Effect.gen(function*() {
        const peer = yield* makePeer({
          tools: [{ name: "fail", inputSchema: schema() }, { name: "mute", inputSchema: schema() }],
          handlers: {
            fail: async () => ({
              content: [{ type: "text", text: "no such file" }, { type: "text", text: "try another path" }],
              isError: true
            }),
            mute: async () => ({ content: [], isError: true })
          }
        })
        const client = yield* McpClient.connect(peer.transport, { prefix: "p" })
        const failed = failureOf(yield* run(yield* client.toolkit, "p__fail"))
        expect(failed._tag).toBe("ToolFailure")
        expect(failed.tool).toBe("p__fail")
        expect(ToolError.toModelText(failed)).toBe("Error: no such file\ntry another path")
        expect(ToolError.toModelText(failureOf(yield* run(yield* client.toolkit, "p__mute")))).toBe(
          "Error: tool call failed"
        )
        // an error that crossed MCP is still prefixed once
        const served = toCallToolResult(Either.left(failed), { structured: false })
        expect(served.content).toEqual([{ type: "text", text: "no such file\ntry another path" }])
      }))

    it.scopedLive("a protocol error from the server is the call's ToolFailure", () =>
      Effect.gen(function*() {
        const peer = yield* makePeer({ tools: [echoTool, { name: "gone", inputSchema: schema() }], handlers: {} })
        const client = yield* McpClient.connect(peer.transport)
        const failed = failureOf(yield* run(yield* client.toolkit, "gone"))
        expect(failed._tag).toBe("ToolFailure")
        expect(failed.message).toContain("Tool gone not found")
        expect((failed as ToolError.ToolFailure).error).toBeInstanceOf(McpClient.McpClientError)
      }))

    it.scopedLive("a result over maxResultBytes is a failure that says so, whatever the transport", () =>
      Effect.gen(function*() {
        const peer = yield* makePeer({
          tools: [{ name: "big", inputSchema: schema() }, echoTool],
          handlers: { big: async () => text("x".repeat(5_000)), echo }
        })
        const client = yield* McpClient.connect(peer.transport, { maxResultBytes: 1_000 })
        const failed = failureOf(yield* run(yield* client.toolkit, "big"))
        expect(failed.message).toBe(
          "the MCP server's result is larger than the limit of 1000 bytes for one result; ask for less at a time"
        )
        expect(((failed as ToolError.ToolFailure).error as McpClient.McpClientError).reason).toBe("TooLarge")
        expect(modelText(yield* run(yield* client.toolkit, "echo", { message: "small" }))).toBe("small")
      }))
  })

  describe("progress, timeouts and cancellation", () => {
    it.scopedLive("always sends a progress token and turns progress notifications into Progress events", () =>
      Effect.gen(function*() {
        const peer = yield* makePeer({
          tools: [{ name: "steps", inputSchema: schema() }],
          handlers: {
            steps: async (_args, extra) => {
              for (let i = 1; i <= 3; i++) {
                await extra.sendNotification({
                  method: "notifications/progress",
                  params: { progressToken: extra._meta!.progressToken!, progress: i, total: 3, message: `step ${i}` }
                })
              }
              return text("done")
            }
          }
        })
        const client = yield* McpClient.connect(peer.transport)
        const events = yield* Stream.runCollect(
          Executor.stream(yield* client.toolkit, [{ id: "1", name: "steps", arguments: {} }])
        )
        expect(peer.calls[0]._meta?.progressToken).toBeDefined()
        expect(Chunk.toArray(events).map((e) => e._tag === "Progress" ? e.progress : e._tag)).toEqual([
          "Started",
          { progress: 1, total: 3, message: "step 1" },
          { progress: 2, total: 3, message: "step 2" },
          { progress: 3, total: 3, message: "step 3" },
          "Finished"
        ])
      }))

    it.scopedLive("a call that neither answers nor reports progress within `timeout` is a ToolTimeout", () =>
      Effect.gen(function*() {
        const peer = yield* makePeer({
          tools: [{ name: "hang", inputSchema: schema() }, { name: "chatty", inputSchema: schema() }],
          handlers: {
            hang: () => new Promise(() => {}),
            chatty: async (_args, extra) => {
              for (let i = 1; i <= 6; i++) {
                await sleep(40)
                await extra.sendNotification({
                  method: "notifications/progress",
                  params: { progressToken: extra._meta!.progressToken!, progress: i }
                })
              }
              return text("done")
            }
          }
        })
        const client = yield* McpClient.connect(peer.transport, { timeout: "150 millis" })
        const kit = yield* client.toolkit
        const failed = failureOf(yield* run(kit, "hang"))
        expect(failed._tag).toBe("ToolTimeout")
        expect(failed.message).toBe("tool \"hang\" timed out after 150ms")
        // progress every 40 ms keeps a 150 ms timeout from firing over 240 ms
        expect(modelText(yield* run(kit, "chatty"))).toBe("done")
      }))

    it.scopedLive("progress does not extend a call past maxTotalTimeout", () =>
      Effect.gen(function*() {
        const peer = yield* makePeer({
          tools: [{ name: "chatty", inputSchema: schema() }],
          handlers: {
            chatty: async (_args, extra) => {
              // progress every 30 ms against an idle timeout ten times as long: a loaded machine may stall for
              // 100 ms, which must not look like an idle server
              for (let i = 1; i <= 40; i++) {
                await sleep(30)
                await extra.sendNotification({
                  method: "notifications/progress",
                  params: { progressToken: extra._meta!.progressToken!, progress: i }
                })
              }
              return text("done")
            }
          }
        })
        const client = yield* McpClient.connect(peer.transport, {
          timeout: "300 millis",
          maxTotalTimeout: "600 millis"
        })
        const failed = failureOf(yield* run(yield* client.toolkit, "chatty"))
        expect(failed.message).toBe("tool \"chatty\" timed out after 600ms")
      }))

    it.scopedLive("interrupting a call returns at once and sends notifications/cancelled", () =>
      Effect.gen(function*() {
        const cancelled: Array<string> = []
        const peer = yield* makePeer({
          tools: [{ name: "hang", inputSchema: schema() }],
          handlers: {
            hang: (_args, extra) =>
              new Promise(() => {
                extra.signal.addEventListener("abort", () => void cancelled.push(String(extra.signal.reason)))
              })
          }
        })
        const client = yield* McpClient.connect(peer.transport)
        const batch = yield* Executor.start(yield* client.toolkit, [{ id: "c1", name: "hang", arguments: {} }])
        const collected = yield* Effect.fork(Stream.runCollect(batch.events))
        expect(yield* eventually(() => peer.calls.length === 1)).toBe(true)
        const started = Date.now()
        yield* batch.cancel("c1")
        // the server never answers: returning did not wait for it
        expect(Date.now() - started).toBeLessThan(1_000)
        const events = Chunk.toArray(yield* Fiber.join(collected))
        const finished = events.find((e) => e._tag === "Finished")!
        expect(finished._tag === "Finished" && failureOf(finished.outcome)._tag).toBe("ToolInterrupted")
        expect(yield* eventually(() => cancelled.length === 1)).toBe(true)
      }))

    it.scopedLive("calls after a cancelled one run, and the server hears of the cancelled call only", () =>
      Effect.gen(function*() {
        const cancelled: Array<unknown> = []
        const peer = yield* makePeer({
          tools: [echoTool, { name: "hang", inputSchema: schema() }],
          handlers: {
            echo,
            hang: (_args, extra) =>
              new Promise(() => {
                extra.signal.addEventListener("abort", () => void cancelled.push(extra.requestId))
              })
          }
        })
        const client = yield* McpClient.connect(peer.transport)
        const kit = yield* client.toolkit
        const tool = (name: string) => Option.getOrThrow(Toolkit.lookup(kit, name))
        const echoes = (from: number) =>
          Effect.forEach([from, from + 1, from + 2], (i) =>
            Effect.map(
              Tool.execute(tool("echo"), { id: `e${i}`, arguments: { message: `m${i}` } }),
              (outcome) => Either.map(outcome, ToolResult.toText)
            ))
        // the requests that ended leave their signals for the next ones; the cancelled one's is never used again
        expect(yield* echoes(1)).toEqual([Either.right("m1"), Either.right("m2"), Either.right("m3")])
        const hanging = yield* Effect.fork(Tool.execute(tool("hang"), { id: "h", arguments: {} }))
        expect(yield* eventually(() => peer.calls.length === 4)).toBe(true)
        expect(Exit.isInterrupted(yield* Fiber.interrupt(hanging))).toBe(true)
        expect(yield* eventually(() => cancelled.length === 1)).toBe(true)
        expect(yield* echoes(4)).toEqual([Either.right("m4"), Either.right("m5"), Either.right("m6")])
        const more = yield* Effect.fork(Tool.execute(tool("hang"), { id: "h2", arguments: {} }))
        expect(yield* eventually(() => peer.calls.length === 8)).toBe(true)
        expect(Exit.isInterrupted(yield* Fiber.interrupt(more))).toBe(true)
        expect(yield* eventually(() => cancelled.length === 2)).toBe(true)
        yield* Effect.sleep("50 millis")
        expect(cancelled).toHaveLength(2)
        expect(cancelled[0]).not.toEqual(cancelled[1])
      }))

    it.scopedLive("a call interrupted while it forwards progress still tells the server, and returns at once", () =>
      Effect.gen(function*() {
        const cancelled: Array<string> = []
        const peer = yield* makePeer({
          tools: [{ name: "report-and-hang", inputSchema: schema() }],
          handlers: {
            "report-and-hang": async (_args, extra) => {
              extra.signal.addEventListener("abort", () => void cancelled.push(String(extra.signal.reason)))
              await extra.sendNotification({
                method: "notifications/progress",
                params: { progressToken: extra._meta!.progressToken!, progress: 1 }
              })
              return new Promise(() => {})
            }
          }
        })
        const client = yield* McpClient.connect(peer.transport)
        const tool = Option.getOrThrow(Toolkit.lookup(yield* client.toolkit, "report-and-hang"))
        let forwarding = false
        // a consumer that never takes the progress: the call is stuck forwarding it, not waiting for the server
        const call = yield* Effect.fork(Tool.execute(tool, { id: "c1", arguments: {} }, {
          onProgress: () =>
            Effect.suspend(() => {
              forwarding = true
              return Effect.never
            })
        }))
        expect(yield* eventually(() => forwarding)).toBe(true)
        const started = Date.now()
        expect(Exit.isInterrupted(yield* Fiber.interrupt(call))).toBe(true)
        expect(Date.now() - started).toBeLessThan(1_000)
        expect(yield* eventually(() => cancelled.length === 1)).toBe(true)
      }))
  })

  describe("tools/list_changed", () => {
    const unlock: McpTool = { name: "unlock", inputSchema: schema() }
    const secret: McpTool = { name: "secret", inputSchema: schema() }

    it.scopedLive("a call that saw the notification returns after the refreshed list is in place", () =>
      Effect.gen(function*() {
        const peer = yield* makePeer({
          tools: [unlock],
          handlers: {
            unlock: async (_args, _extra, peer) => {
              peer.tools = [unlock, secret]
              await peer.notify()
              return text("unlocked")
            }
          }
        })
        const client = yield* McpClient.connect(peer.transport, { notificationGrace: 0 })
        peer.listDelayMillis = 50
        expect(modelText(yield* run(yield* client.toolkit, "unlock"))).toBe("unlocked")
        expect(Toolkit.names(yield* client.toolkit)).toEqual(["unlock", "secret"])
      }))

    /** A tool that unlocks `secret` and announces it late, on a timer after its result (as the Go SDK does). */
    const lateUnlock: Handler = async (_args, _extra, peer) => {
      setTimeout(() => {
        peer.tools = [unlock, secret, echoTool]
        void peer.notify()
      }, 20)
      return text("unlocked")
    }

    it.scopedLive("a server seen to announce a change late makes later calls wait up to the grace, no longer", () =>
      Effect.gen(function*() {
        const peer = yield* makePeer({ tools: [unlock, echoTool], handlers: { unlock: lateUnlock, echo } })
        const client = yield* McpClient.connect(peer.transport, { notificationGrace: "5 seconds" })
        // the first late notification is seen after its call returned: the listing follows in the background
        expect(modelText(yield* run(yield* client.toolkit, "unlock"))).toBe("unlocked")
        expect(yield* eventually(() => peer.lists === 2 && peer.listing === 0)).toBe(true)
        // from then on a call waits for it, and returns with the new list in place
        peer.tools = [unlock, echoTool]
        const started = Date.now()
        expect(modelText(yield* run(yield* client.toolkit, "unlock"))).toBe("unlocked")
        expect(Date.now() - started).toBeLessThan(2_500)
        expect(Toolkit.names(yield* client.toolkit)).toEqual(["unlock", "secret", "echo"])
      }))

    it.scopedLive("once the server is seen to announce late, the grace is the whole wait of a call that changes nothing", () =>
      Effect.gen(function*() {
        const peer = yield* makePeer({ tools: [unlock, echoTool], handlers: { unlock: lateUnlock, echo } })
        const client = yield* McpClient.connect(peer.transport, { notificationGrace: "300 millis" })
        let started = Date.now()
        yield* run(yield* client.toolkit, "echo", { message: "a" })
        expect(Date.now() - started).toBeLessThan(250)
        yield* run(yield* client.toolkit, "unlock")
        expect(yield* eventually(() => peer.lists === 2 && peer.listing === 0)).toBe(true)
        started = Date.now()
        yield* run(yield* client.toolkit, "echo", { message: "b" })
        expect(Date.now() - started).toBeGreaterThanOrEqual(290)
        expect(peer.lists).toBe(2)
      }))

    it.scopedLive("no grace for tools the server marks read-only", () =>
      Effect.gen(function*() {
        const peer = yield* makePeer({
          tools: [{ ...echoTool, name: "look", annotations: { readOnlyHint: true } }],
          handlers: { look: echo }
        })
        const client = yield* McpClient.connect(peer.transport, { notificationGrace: "5 seconds" })
        const started = Date.now()
        yield* run(yield* client.toolkit, "look", { message: "a" })
        expect(Date.now() - started).toBeLessThan(2_000)
      }))

    it.scopedLive("no grace for a server that does not advertise tools.listChanged", () =>
      Effect.gen(function*() {
        const peer = yield* makePeer({ tools: [echoTool], handlers: { echo }, listChanged: false })
        const client = yield* McpClient.connect(peer.transport, { notificationGrace: "5 seconds" })
        const started = Date.now()
        yield* run(yield* client.toolkit, "echo", { message: "a" })
        expect(Date.now() - started).toBeLessThan(2_000)
      }))

    it.scopedLive("several notifications make one listing; listings never overlap", () =>
      Effect.gen(function*() {
        const peer = yield* makePeer({ tools: [unlock], handlers: {} })
        const client = yield* McpClient.connect(peer.transport)
        expect(peer.lists).toBe(1)
        peer.listDelayMillis = 40
        peer.tools = [unlock, secret]
        yield* Effect.promise(() => Promise.all([peer.notify(), peer.notify(), peer.notify()]))
        expect(yield* eventually(() => peer.lists === 2 && peer.listing === 0)).toBe(true)
        // notifications during a listing: one more listing, after it
        yield* Effect.promise(() => sleep(10))
        expect(peer.lists).toBe(2)
        yield* Effect.promise(() => peer.notify())
        yield* Effect.promise(() => sleep(10))
        yield* Effect.promise(() => Promise.all([peer.notify(), peer.notify()]))
        const refreshed = yield* client.refresh
        expect(Toolkit.names(refreshed)).toEqual(["unlock", "secret"])
        expect(yield* eventually(() => peer.listing === 0)).toBe(true)
        yield* Effect.promise(() => sleep(100))
        expect(peer.maxListing).toBe(1)
        expect(peer.lists).toBeLessThanOrEqual(5)
      }))

    it.scopedLive("a failed refresh keeps the old tools and is logged; refresh itself fails with the reason", () =>
      withLogs((logs) =>
        Effect.gen(function*() {
          const peer = yield* makePeer({
            tools: [unlock],
            handlers: {
              unlock: async (_args, _extra, peer) => {
                peer.failLists = true
                await peer.notify()
                return text("unlocked")
              }
            }
          })
          const client = yield* McpClient.connect(peer.transport)
          expect(modelText(yield* run(yield* client.toolkit, "unlock"))).toBe("unlocked")
          expect(Toolkit.names(yield* client.toolkit)).toEqual(["unlock"])
          expect(logs.join("\n")).toContain("keeping the 1 tools listed before")
          expect(logs.join("\n")).toContain("the tool registry is down")
          const error = yield* Effect.flip(client.refresh)
          expect(error.reason).toBe("Request")
          expect(error.message).toContain("the tool registry is down")
        })
      ))

    it.scopedLive("a toolkit already handed out keeps the tools it had", () =>
      Effect.gen(function*() {
        const peer = yield* makePeer({ tools: [unlock, echoTool], handlers: { echo } })
        const client = yield* McpClient.connect(peer.transport)
        const before = yield* client.toolkit
        peer.tools = [unlock]
        yield* Effect.promise(() => peer.notify())
        expect(yield* eventually(() => peer.lists === 2 && peer.listing === 0)).toBe(true)
        yield* Effect.promise(() => sleep(20))
        expect(Toolkit.names(yield* client.toolkit)).toEqual(["unlock"])
        expect(Toolkit.names(before)).toEqual(["unlock", "echo"])
        expect(modelText(yield* run(before, "echo", { message: "still here" }))).toBe("still here")
      }))
  })

  describe("ending", () => {
    it.scopedLive("closing the scope ends calls in flight at once, and later calls fail at once", () =>
      Effect.gen(function*() {
        const peer = yield* makePeer({
          tools: [{ name: "hang", inputSchema: schema() }],
          handlers: { hang: () => new Promise(() => {}) }
        })
        const scope = yield* Scope.make()
        const client = yield* Scope.extend(McpClient.connect(peer.transport), scope)
        const kit = yield* client.toolkit
        const call = yield* Effect.fork(run(kit, "hang"))
        expect(yield* eventually(() => peer.calls.length === 1)).toBe(true)
        const started = Date.now()
        yield* Scope.close(scope, Exit.void)
        const failed = failureOf(yield* Fiber.join(call))
        expect(Date.now() - started).toBeLessThan(500)
        expect(failed.message).toBe("the MCP client of the MCP server \"peer\" was closed")
        expect(failureOf(yield* run(kit, "hang")).message).toBe(failed.message)
        expect(peer.calls.length).toBe(1)
        // a closed session lists no tools (and lets go of the ones it listed); those taken before fail as above
        expect(yield* client.tools).toEqual([])
        expect(Toolkit.names(yield* client.toolkit)).toEqual([])
        expect(Toolkit.names(kit)).toEqual(["hang"])
      }))

    it.scopedLive("a connection the server closes fails calls in flight and later calls", () =>
      Effect.gen(function*() {
        const peer = yield* makePeer({
          tools: [{ name: "hang", inputSchema: schema() }],
          handlers: { hang: () => new Promise(() => {}) }
        })
        const client = yield* McpClient.connect(peer.transport)
        const kit = yield* client.toolkit
        const call = yield* Effect.fork(run(kit, "hang"))
        expect(yield* eventually(() => peer.calls.length === 1)).toBe(true)
        yield* Effect.promise(() => peer.server.close())
        const failed = failureOf(yield* Fiber.join(call))
        expect(failed.message).toBe("the connection to the MCP server \"peer\" closed")
        expect(failureOf(yield* run(kit, "hang")).message).toBe(failed.message)
      }))

    it.scopedLive("a transport handed to connect is closed by the time closing the scope returns, however long it takes", () =>
      Effect.gen(function*() {
        // the server outlives the client's scope: only the client's close can close the transport
        const peer = yield* makePeer({ tools: [echoTool], handlers: { echo } })
        const close = peer.transport.close.bind(peer.transport)
        let closed = false
        peer.transport.close = async () => {
          await sleep(50)
          await close()
          closed = true
        }
        yield* Effect.scoped(McpClient.connect(peer.transport))
        expect(closed).toBe(true)
      }))
  })

  describe("over HTTP", () => {
    it.scopedLive("sends the given headers; a server that refuses initialize fails connect with an Initialize error", () =>
      Effect.gen(function*() {
        const seen: Array<Http.IncomingHttpHeaders> = []
        const server = yield* Effect.acquireRelease(
          Effect.async<Http.Server>((resume) => {
            const server = Http.createServer((request, response) => {
              seen.push(request.headers)
              response.writeHead(503, { "content-type": "text/plain" }).end("down for maintenance")
            })
            server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
          }),
          (server) => Effect.async<void>((resume) => void server.close(() => resume(Effect.void)))
        )
        const { port } = server.address() as { port: number }
        const url = `http://127.0.0.1:${port}/mcp`
        const error = yield* Effect.flip(
          Effect.scoped(McpClient.connect(McpClient.http(url, { headers: { Authorization: "Bearer t0ken" } })))
        )
        expect(error.reason).toBe("Initialize")
        expect(error.message).toContain(`initialize with the MCP server at http://127.0.0.1:${port}/mcp failed`)
        expect(error.message).toContain("down for maintenance")
        expect(seen[0]?.authorization).toBe("Bearer t0ken")
      }))
  })

  describe("a spawned server", () => {
    it.scopedLive("a server that crashes mid-call fails every call in flight at once, with its stderr", () =>
      Effect.gen(function*() {
        const scope = yield* Scope.make()
        const client = yield* Scope.extend(McpClient.connect(fault("serve")), scope)
        const kit = yield* client.toolkit
        const pids = JSON.parse(modelText(yield* run(kit, "spawn"))) as { server: number; grandchild: number }
        expect(alive(pids.grandchild)).toBe(true)
        expect(groupMembers(pids.server).sort()).toEqual([String(pids.server), String(pids.grandchild)].sort())
        const slow = yield* Effect.fork(run(kit, "slow"))
        const started = Date.now()
        const crashed = failureOf(yield* run(kit, "crash"))
        const expected = "the MCP server \"fault-server\" exited with code 3; its stderr ended with:\n" +
          "fault server starting in mode serve\nfatal: the disk is on fire"
        expect(crashed.message).toBe(expected)
        expect(failureOf(yield* Fiber.join(slow)).message).toBe(expected)
        // at once: not after a timeout (the server never answers `slow`)
        expect(Date.now() - started).toBeLessThan(3_000)
        // later calls fail before sending anything
        const later = Date.now()
        expect(failureOf(yield* run(kit, "echo", { text: "x" })).message).toBe(expected)
        expect(Date.now() - later).toBeLessThan(500)
        yield* Scope.close(scope, Exit.void)
        expect(alive(pids.server)).toBe(false)
        expect(alive(pids.grandchild)).toBe(false)
        expect(groupMembers(pids.server)).toEqual([])
      }))

    it.live("closing the scope ends the whole process group, helpers included", () =>
      Effect.gen(function*() {
        const pids = yield* Effect.scoped(Effect.gen(function*() {
          const client = yield* McpClient.connect(fault("serve"))
          return JSON.parse(modelText(yield* run(yield* client.toolkit, "spawn"))) as {
            server: number
            grandchild: number
          }
        }))
        expect(alive(pids.server)).toBe(false)
        expect(alive(pids.grandchild)).toBe(false)
        expect(groupMembers(pids.server)).toEqual([])
      }))

    it.live("a server that exits at start fails connect with how it ended and its stderr", () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(Effect.scoped(McpClient.connect(fault("exit"))))
        expect(error.reason).toBe("Closed")
        expect(error.message).toBe(
          "the MCP server (node mcp-fault-server.mjs) exited with code 2; its stderr ended with:\n" +
            "fault server starting in mode exit\nfatal: no configuration found"
        )
      }))

    it.live("a server that never answers initialize fails connect within connectTimeout, and is ended", () =>
      Effect.gen(function*() {
        const pid = pidFile()
        const started = Date.now()
        const error = yield* Effect.flip(
          Effect.scoped(McpClient.connect(fault("silent", pid.file), { connectTimeout: "1 second" }))
        )
        expect(Date.now() - started).toBeLessThan(3_000)
        expect(error.reason).toBe("Initialize")
        expect(error.message).toBe(
          "the MCP server (node mcp-fault-server.mjs) did not answer server/discover or initialize within 1s; " +
            "its stderr ended with:\nfault server starting in mode silent"
        )
        expect(pid.gone()).toBe(true)
      }))

    it.live("a server that writes garbage to stdout breaks the protocol: connect fails at once, saying what it wrote", () =>
      Effect.gen(function*() {
        const pid = pidFile()
        const error = yield* Effect.flip(Effect.scoped(McpClient.connect(fault("garbage", pid.file))))
        expect(error.reason).toBe("Protocol")
        expect(error.message).toBe(
          "the MCP server (node mcp-fault-server.mjs) broke the protocol: it wrote a line to stdout that is not " +
            "JSON: \"Welcome to the fault server v1!\"; its stderr ended with:\n" +
            "fault server starting in mode garbage\nabout to print a banner"
        )
        expect(pid.gone()).toBe(true)
      }))

    it.scopedLive("an answer longer than the limit is dropped as it arrives: that call fails, the session goes on", () =>
      Effect.gen(function*() {
        const client = yield* McpClient.connect(fault("serve"), { maxResultBytes: 1_000 })
        const kit = yield* client.toolkit
        const failed = failureOf(yield* run(kit, "huge", { bytes: 200_000 }))
        expect(failed.message).toMatch(
          /^the MCP server's result is \d+ bytes, over the limit of 1000 bytes for one result; ask for less at a time$/
        )
        expect(((failed as ToolError.ToolFailure).error as McpClient.McpClientError).reason).toBe("TooLarge")
        expect(modelText(yield* run(kit, "echo", { text: "still alive" }))).toBe("still alive")
        expect(modelText(yield* run(kit, "huge", { bytes: 500 }))).toBe("x".repeat(500))
      }))

    it.scopedLive("a line longer than the limit that answers no request ends the session", () =>
      Effect.gen(function*() {
        const client = yield* McpClient.connect(fault("flood"), { maxResultBytes: 1_000 })
        const kit = yield* client.toolkit
        const slow = yield* Effect.fork(run(kit, "slow"))
        const failed = failureOf(yield* Fiber.join(slow))
        expect(failed.message).toMatch(
          /^the MCP server "fault-server" broke the protocol: it wrote a message of \d+ bytes/
        )
        expect(((failed as ToolError.ToolFailure).error as McpClient.McpClientError).reason).toBe("TooLarge")
      }))

    it.scopedLive("a result that breaks MCP's schema fails its call in one line naming what is wrong; the session goes on", () =>
      Effect.gen(function*() {
        const client = yield* McpClient.connect(fault("serve"))
        const kit = yield* client.toolkit
        const failed = failureOf(yield* run(kit, "malformed"))
        expect(failed.message).toBe(
          "the MCP server \"fault-server\" sent a malformed tools/call result: content[0].text: expected string, " +
            "received number"
        )
        expect(((failed as ToolError.ToolFailure).error as McpClient.McpClientError).reason).toBe("Protocol")
        expect(modelText(yield* run(kit, "echo", { text: "still alive" }))).toBe("still alive")
      }))

    it.scopedLive("a tool named \"\" is never offered (not even as the bare prefix); it is left out with a warning", () =>
      withLogs((logs) =>
        Effect.gen(function*() {
          const client = yield* McpClient.connect(fault("badnames"), { prefix: "p" })
          const names = Toolkit.names(yield* client.toolkit)
          expect(names).not.toContain("p__")
          expect(names).toEqual([
            "p__slow",
            "p__crash",
            "p__spawn",
            "p__huge",
            "p__echo",
            "p__malformed",
            "p__steps",
            "p__has_space"
          ])
          expect(logs).toContain(
            "the MCP server \"fault-server\" lists a tool \"\" that cannot be offered: its name is empty"
          )
        })
      ))

    it.live("a tool list without end fails connect once it passes maxTools, at once", () =>
      Effect.gen(function*() {
        const pid = pidFile()
        const started = Date.now()
        const error = yield* Effect.flip(Effect.scoped(McpClient.connect(fault("endless", pid.file))))
        expect(Date.now() - started).toBeLessThan(6_000)
        expect(error.reason).toBe("TooLarge")
        expect(error.message).toBe("the MCP server \"fault-server\" lists more than 1000 tools, the limit (maxTools)")
        expect(pid.gone()).toBe(true)
      }))

    it.live("a list of pages without end is refused, never taken as the server's whole list", () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(Effect.scoped(McpClient.connect(fault("pages"))))
        expect(error.reason).toBe("TooLarge")
        expect(error.message).toBe("the MCP server \"fault-server\" did not end its tool list within 1000 pages")
      }))

    it.live("the whole first listing, every page, is under connectTimeout", () =>
      Effect.gen(function*() {
        const started = Date.now()
        const error = yield* Effect.flip(Effect.scoped(
          McpClient.connect(fault("endless"), { maxTools: 1_000_000_000, connectTimeout: "1 second" })
        ))
        expect(Date.now() - started).toBeLessThan(6_000)
        expect(error.reason).toBe("Request")
        expect(error.message).toBe(
          "the MCP server \"fault-server\" did not finish listing its tools within 1s; its stderr ended with:\n" +
            "fault server starting in mode endless"
        )
      }))

    it.live("a command that cannot be started is a Spawn error", () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(
          Effect.scoped(McpClient.connect(McpClient.stdio({ command: "/nonexistent/mcp-server" })))
        )
        expect(error.reason).toBe("Spawn")
        expect(error.message).toContain("the MCP server (mcp-server) could not be started")
      }))
  })

  describe("internals", () => {
    it("finds the id of an oversize answer at either end of the line", () => {
      const idOf = (head: string, tail: string) => responseIdOf({ bytes: head.length + tail.length, head, tail })
      expect(idOf("{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"content\":[", "")).toBe(7)
      expect(idOf("{\"result\":{\"content\":[{\"id\":3", "xx\"}]},\"jsonrpc\":\"2.0\",\"id\":12}")).toBe(12)
      expect(idOf("{\"id\":\"a\\\"b\",\"result\":", "")).toBe("a\"b")
      // an id nested in the result is not the response's
      expect(idOf("{\"result\":{\"id\":3", "\"x\",\"meta\":{\"id\":4}}}")).toBeUndefined()
    })

    it("measures a result without building its JSON", () => {
      expect(exceedsBytes({ content: [{ type: "text", text: "x".repeat(100) }] }, 200)).toBe(false)
      expect(exceedsBytes({ content: [{ type: "text", text: "x".repeat(300) }] }, 200)).toBe(true)
      expect(exceedsBytes({ content: [{ type: "text", text: "é".repeat(120) }] }, 200)).toBe(true)
    })

    it("the records key is the one the server writes", () => {
      expect(RECORDS_META_KEY).toBe("dev.effect-agent-tools/records")
    })
  })
})
