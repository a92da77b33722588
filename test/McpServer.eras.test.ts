/**
 * Both protocol eras from one toolkit, against the MCP SDK's v2 client: a 2025-era client (`initialize`, a
 * session, requests of the server's own) and a 2026-07-28 one (stateless, `input_required`), over stdio (a server
 * process of its own, test/fixtures/mcp-eras.ts) and over HTTP.
 */
import { describe, expect, it } from "@effect/vitest"
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client"
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio"
import { Deferred, Effect, Exit, Schema, SubscriptionRef } from "effect"
import * as ChildProcess from "node:child_process"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { McpServer, Tool, Toolkit } from "../src/index.js"
import { fixture } from "./fixtures/compiled.js"

const MODERN = "2026-07-28"

type Era = "2025" | "2026"

/** A v2 SDK client of an era, answering every question with a name of its own (`answer1`, `answer2`, ...). */
const clientOf = (era: Era, transport: StdioClientTransport | StreamableHTTPClientTransport) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new Client(
        { name: `client-${era}`, version: "1.0.0" },
        {
          capabilities: { elicitation: { form: {} }, sampling: {}, roots: {} },
          ...(era === "2026" ? { versionNegotiation: { mode: { pin: MODERN } } } : {})
        }
      )
      let asked = 0
      client.setRequestHandler(
        "elicitation/create",
        () => ({ action: "accept", content: { name: `answer${++asked}` } })
      )
      client.setRequestHandler("sampling/createMessage", () => ({
        role: "assistant",
        content: { type: "text", text: "a model's words" },
        model: "test-model"
      }))
      client.setRequestHandler("roots/list", () => ({ roots: [{ uri: "file:///work", name: "work" }] }))
      await client.connect(transport)
      return client
    }),
    (client) => Effect.promise(() => client.close().catch(() => undefined))
  )

const text = (result: { readonly content?: unknown }): string =>
  ((result.content ?? []) as Array<{ readonly text?: string }>).map((part) => part.text ?? "").join("\n")

const call = (client: Client, name: string, args: Record<string, unknown> = {}) =>
  Effect.promise(() => client.callTool({ name, arguments: args }))

// ---------------------------------------------------------------------------------------------------------------
// a server in a process of its own
// ---------------------------------------------------------------------------------------------------------------

/** `node mcp-eras.js http <instance>`, closed with the scope; gives its URL. */
const httpProcess = (instance: string, key: string) =>
  Effect.acquireRelease(
    Effect.async<{ readonly url: string; readonly child: ChildProcess.ChildProcess }>((resume) => {
      const child = ChildProcess.spawn(process.execPath, [fixture("mcp-eras"), "http", instance], {
        env: { ...process.env, STATE_KEY: key },
        stdio: ["ignore", "pipe", "inherit"]
      })
      let out = ""
      child.stdout.on("data", (chunk: Buffer) => {
        out += chunk.toString()
        const line = /^(\{.*\})$/m.exec(out)?.[1]
        if (line !== undefined) resume(Effect.succeed({ url: (JSON.parse(line) as { url: string }).url, child }))
      })
    }),
    ({ child }) => Effect.sync(() => child.kill("SIGKILL"))
  )

const stdioTransport = () =>
  new StdioClientTransport({ command: process.execPath, args: [fixture("mcp-eras"), "stdio"], stderr: "ignore" })

// ---------------------------------------------------------------------------------------------------------------
// raw HTTP
// ---------------------------------------------------------------------------------------------------------------

interface Answer {
  readonly status: number
  readonly type: string | null
  /** The response, or the last message of its SSE stream. */
  readonly body: Record<string, any>
  /** Every message of the answer, in order. */
  readonly messages: ReadonlyArray<Record<string, any>>
}

/** One POST of a 2026 request: `_meta` carries the revision and capabilities; `Mcp-Method`/`Mcp-Name` set. */
const post2026 = (
  url: string,
  id: number,
  method: string,
  params: Record<string, unknown> = {},
  options: { readonly headers?: Record<string, string>; readonly meta?: Record<string, unknown> } = {}
): Effect.Effect<Answer> =>
  Effect.promise(async () => {
    const response = await fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": MODERN,
        "mcp-method": method,
        ...(typeof params.name === "string" ? { "mcp-name": params.name } : {}),
        ...options.headers
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id,
        method,
        params: {
          ...params,
          _meta: {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": { elicitation: { form: {} } },
            ...options.meta
          }
        }
      })
    })
    const raw = await response.text()
    const messages = raw.startsWith("{")
      ? [JSON.parse(raw)]
      : raw.split("\n").filter((line) => line.startsWith("data: ")).map((line) => JSON.parse(line.slice(6)))
    return {
      status: response.status,
      type: response.headers.get("content-type"),
      body: messages.at(-1) ?? {},
      messages
    }
  })

const Ask = Tool.make("ask", {
  description: "Ask a name; the call waits for it",
  handler: () =>
    Effect.map(
      Tool.elicit({ message: "Your name?", schema: { name: Schema.String } }),
      (answer) => (answer._tag === "Accept" ? `hello ${answer.content.name}` : answer._tag)
    )
})

const AskSafe = Tool.make("ask_safe", {
  description: "Ask a name; safe to run again",
  replay: "safe",
  handler: () =>
    Effect.map(
      Tool.elicit({ key: "who", message: "Your name?", schema: { name: Schema.String } }),
      (answer) => (answer._tag === "Accept" ? `hello ${answer.content.name}` : answer._tag)
    )
})

const serveHttp = (options: Partial<McpServer.HttpOptions> = {}) =>
  McpServer.http(Toolkit.make(Ask, AskSafe), { name: "eras", version: "1.0.0", port: 0, ...options })

const accept = (name: string) => ({ action: "accept", content: { name } })

describe("McpServer, both protocol eras", () => {
  describe("a v2 SDK client of each era, over stdio and over HTTP", () => {
    for (const era of ["2025", "2026"] as const) {
      for (const wire of ["stdio", "http"] as const) {
        it.scopedLive(
          `${era} over ${wire}: tools listed and called; calls that ask the user (parked, replayed), the model and the roots`,
          () =>
            Effect.gen(function*() {
              const transport = wire === "stdio"
                ? stdioTransport()
                : new StreamableHTTPClientTransport(new URL((yield* httpProcess("one", "k".repeat(32))).url))
              const client = yield* clientOf(era, transport)
              expect(client.getProtocolEra()).toBe(era === "2026" ? "modern" : "legacy")
              const listed = yield* Effect.promise(() => client.listTools())
              expect(listed.tools.map((tool) => tool.name)).toEqual([
                "echo",
                "ask",
                "ask_twice",
                "whoami",
                "muse",
                "hold",
                "counts"
              ])
              expect(text(yield* call(client, "echo", { text: "hi" }))).toBe("hi")
              const instance = wire === "stdio" ? "solo" : "one"
              expect(text(yield* call(client, "ask"))).toBe(`hello answer1 from ${instance}`)
              expect(text(yield* call(client, "ask_twice"))).toBe(`answer2 and answer3, finished on ${instance}`)
              expect(text(yield* call(client, "muse"))).toBe("a model's words in file:///work")
            }),
          30_000
        )
      }
    }
  })

  it.scopedLive(
    "2026 over stdio: notifications/cancelled interrupts the call, its finalizers run",
    () =>
      Effect.gen(function*() {
        const client = yield* clientOf("2026", stdioTransport())
        const abort = new AbortController()
        const held = Effect.runFork(
          Effect.promise(() =>
            client.callTool({ name: "hold", arguments: {} }, { signal: abort.signal }).catch(() => "aborted")
          )
        )
        const running = () => Effect.map(call(client, "counts"), (result) => JSON.parse(text(result)))
        while ((yield* running()).running === 0) yield* Effect.sleep("20 millis")
        abort.abort()
        yield* Effect.promise(() => Effect.runPromise(held.await))
        while ((yield* running()).interrupted === 0) yield* Effect.sleep("20 millis")
        expect(yield* running()).toEqual({ running: 0, interrupted: 1 })
      }),
    30_000
  )

  describe("2026-07-28 over HTTP, raw", () => {
    it.scopedLive("progress and logs go on the request's own stream, logs at the level its _meta names", () =>
      Effect.gen(function*() {
        const Work = Tool.make("work", {
          description: "Report progress and log",
          handler: () =>
            Effect.gen(function*() {
              yield* Tool.progress({ progress: 1, total: 2, message: "half" })
              yield* Effect.logDebug("too fine")
              yield* Effect.logInfo("working")
              return "done"
            })
        })
        const { url } = yield* McpServer.http(Toolkit.make(Work), { name: "eras", version: "1.0.0", port: 0 })
        const response = yield* post2026(url, 7, "tools/call", { name: "work", arguments: {} }, {
          meta: { progressToken: "p1", "io.modelcontextprotocol/logLevel": "info" }
        })
        expect(response.type).toBe("text/event-stream")
        const events = response.messages
        expect(events.map((event) => event.method ?? `result ${event.id}`)).toEqual([
          "notifications/progress",
          "notifications/message",
          "result 7"
        ])
        expect(events[0].params).toMatchObject({ progressToken: "p1", progress: 1, total: 2, message: "half" })
        expect(events[1].params).toMatchObject({ level: "info", logger: "work", data: "working" })
      }))

    it.scopedLive("server/discover names the revision and the server; every result carries serverInfo", () =>
      Effect.gen(function*() {
        const { url } = yield* serveHttp()
        const discovered = yield* post2026(url, 1, "server/discover")
        expect(discovered.status).toBe(200)
        expect(discovered.body.result.supportedVersions).toEqual([MODERN])
        expect(discovered.body.result.capabilities.tools).toEqual({})
        expect(discovered.body.result._meta["io.modelcontextprotocol/serverInfo"]).toEqual({
          name: "eras",
          version: "1.0.0"
        })
        const listed = yield* post2026(url, 2, "tools/list")
        expect(listed.body.result._meta["io.modelcontextprotocol/serverInfo"]).toEqual({
          name: "eras",
          version: "1.0.0"
        })
        // a fixed toolkit: its list may be kept, by anyone, for five minutes; in the toolkit's order, every time
        expect(listed.body.result.ttlMs).toBe(300_000)
        expect(listed.body.result.cacheScope).toBe("public")
        expect(listed.body.result.tools.map((tool: { name: string }) => tool.name)).toEqual(["ask", "ask_safe"])
      }))

    it.scopedLive("an unknown revision is UnsupportedProtocolVersionError; headers that disagree with the body are refused", () =>
      Effect.gen(function*() {
        const { url } = yield* serveHttp()
        const old = yield* post2026(url, 1, "tools/list", {}, {
          meta: { "io.modelcontextprotocol/protocolVersion": "2099-01-01" },
          headers: { "mcp-protocol-version": "2099-01-01" }
        })
        expect(old.status).toBe(400)
        expect(old.body.error.code).toBe(-32022)
        expect(old.body.error.data.supported).toContain(MODERN)
        const lying = yield* post2026(url, 2, "tools/call", { name: "ask", arguments: {} }, {
          headers: { "mcp-name": "something_else" }
        })
        expect(lying.status).toBe(400)
        expect(lying.body.error.code).toBe(-32020)
        // DNS rebinding: a Host that is not this server is refused before anything is read
        const rebinding = yield* Effect.async<number>((resume) => {
          const request = Http.request(url, { method: "POST", headers: { host: "evil.example.com" } }, (res) => {
            res.resume()
            resume(Effect.succeed(res.statusCode ?? 0))
          })
          request.end("{}")
        })
        expect(rebinding).toBe(403)
      }))

    it.scopedLive("a parked call resumes with its answer; a question left unanswered reads Cancel", () =>
      Effect.gen(function*() {
        const { url } = yield* serveHttp()
        const first = yield* post2026(url, 1, "tools/call", { name: "ask", arguments: {} })
        expect(first.body.result.resultType).toBe("input_required")
        const [key] = Object.keys(first.body.result.inputRequests)
        expect(first.body.result.inputRequests[key].method).toBe("elicitation/create")
        expect(first.body.result.requestState).toMatch(/^p\.[0-9a-f-]+\.v1\./)
        const done = yield* post2026(url, 2, "tools/call", {
          name: "ask",
          arguments: {},
          inputResponses: { [key]: accept("Ada") },
          requestState: first.body.result.requestState
        })
        expect(done.body.result.resultType).toBe("complete")
        expect(done.body.result.content).toEqual([{ type: "text", text: "hello Ada" }])
        const again = yield* post2026(url, 3, "tools/call", { name: "ask", arguments: {} })
        const left = yield* post2026(url, 4, "tools/call", {
          name: "ask",
          arguments: {},
          inputResponses: {},
          requestState: again.body.result.requestState
        })
        expect(left.body.result.content).toEqual([{ type: "text", text: "Cancel" }])
      }))

    it.scopedLive("a client may answer ahead; an answer not of its question's shape is asked again", () =>
      Effect.gen(function*() {
        const { url } = yield* serveHttp()
        const ahead = yield* post2026(url, 1, "tools/call", {
          name: "ask_safe",
          arguments: {},
          inputResponses: { who: accept("Ada"), nobody_asked: accept("Bob") }
        })
        expect(ahead.body.result.content).toEqual([{ type: "text", text: "hello Ada" }])
        const first = yield* post2026(url, 2, "tools/call", { name: "ask", arguments: {} })
        const [key] = Object.keys(first.body.result.inputRequests)
        const wrong = yield* post2026(url, 3, "tools/call", {
          name: "ask",
          arguments: {},
          inputResponses: { [key]: 12345 },
          requestState: first.body.result.requestState
        })
        expect(wrong.body.result.resultType).toBe("input_required")
        expect(Object.keys(wrong.body.result.inputRequests)).toEqual([key])
        const right = yield* post2026(url, 4, "tools/call", {
          name: "ask",
          arguments: {},
          inputResponses: { [key]: accept("Ada") },
          requestState: wrong.body.result.requestState
        })
        expect(right.body.result.content).toEqual([{ type: "text", text: "hello Ada" }])
      }))

    it.scopedLive(
      "requestState is refused when tampered with, replayed, bound to other arguments or expired",
      () =>
        Effect.gen(function*() {
          const { url } = yield* serveHttp({ requestStateTtl: "1 second" })
          const refused = (answer: Answer) => {
            expect(answer.body.error).toMatchObject({
              code: -32602,
              message: "Invalid or expired requestState",
              data: { reason: "invalid_request_state" }
            })
          }
          const first = yield* post2026(url, 1, "tools/call", { name: "ask_safe", arguments: {} })
          const state: string = first.body.result.requestState
          const retry = (id: number, requestState: string, args: Record<string, unknown> = {}) =>
            post2026(url, id, "tools/call", {
              name: "ask_safe",
              arguments: args,
              inputResponses: { who: accept("Ada") },
              requestState
            })
          const flipped = state.slice(0, -2) + (state.endsWith("A") ? "B" : "A") + state.slice(-1)
          refused(yield* retry(2, flipped))
          refused(yield* retry(3, state, { more: true }))
          // bound to the principal: the same state from another bearer
          refused(
            yield* post2026(url, 8, "tools/call", {
              name: "ask_safe",
              arguments: {},
              inputResponses: { who: accept("Ada") },
              requestState: state
            }, { headers: { authorization: "Bearer someone-else" } })
          )
          expect((yield* retry(4, state)).body.result.content).toEqual([{ type: "text", text: "hello Ada" }])
          refused(yield* retry(5, state))
          const late = yield* post2026(url, 6, "tools/call", { name: "ask_safe", arguments: {} })
          yield* Effect.sleep("2100 millis")
          refused(yield* retry(7, late.body.result.requestState))
        }),
      20_000
    )

    it.scopedLive("a client that leaves mid-call interrupts it: its finalizers run", () =>
      Effect.gen(function*() {
        const released = yield* Deferred.make<void>()
        const started = yield* Deferred.make<void>()
        const Hold = Tool.make("hold", {
          description: "Wait until interrupted",
          handler: () =>
            Effect.acquireUseRelease(
              Deferred.succeed(started, undefined),
              () => Effect.never,
              () => Deferred.succeed(released, undefined)
            )
        })
        const { url } = yield* McpServer.http(Toolkit.make(Hold), { name: "eras", version: "1.0.0", port: 0 })
        const request = Http.request(url, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            "mcp-protocol-version": MODERN,
            "mcp-method": "tools/call",
            "mcp-name": "hold"
          }
        })
        request.on("error", () => undefined)
        request.end(JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: {
            name: "hold",
            arguments: {},
            _meta: {
              "io.modelcontextprotocol/protocolVersion": MODERN,
              "io.modelcontextprotocol/clientCapabilities": {}
            }
          }
        }))
        yield* Deferred.await(started)
        request.destroy()
        yield* Deferred.await(released).pipe(Effect.timeout("5 seconds"))
      }))

    it.scopedLive("subscriptions/listen hears tools/list_changed when the toolkit changes", () =>
      Effect.gen(function*() {
        const served = yield* SubscriptionRef.make<Toolkit.Toolkit<typeof Ask | typeof AskSafe>>(Toolkit.make(Ask))
        const { url } = yield* McpServer.http(served, { name: "eras", version: "1.0.0", port: 0 })
        const client = yield* clientOf("2026", new StreamableHTTPClientTransport(new URL(url)))
        const changed = yield* Deferred.make<void>()
        client.setNotificationHandler("notifications/tools/list_changed", () => Deferred.unsafeDone(changed, Exit.void))
        const subscription = yield* Effect.promise(() => client.listen({ toolsListChanged: true }))
        yield* SubscriptionRef.set(served, Toolkit.make(Ask, AskSafe))
        yield* Deferred.await(changed).pipe(Effect.timeout("5 seconds"))
        yield* Effect.promise(() => subscription.close())
        const listed = yield* Effect.promise(() => client.listTools())
        expect(listed.tools.map((tool) => tool.name)).toEqual(["ask", "ask_safe"])
      }))
  })

  describe("two McpServer.http processes behind a round-robin proxy", () => {
    /**
     * A proxy on loopback that sends each POST to the next backend in turn; with `affinity`, a POST whose
     * `requestState` names a parked call's instance (`p.<instance>.`) goes to that instance instead, the one thing a
     * load balancer must do for calls that park.
     */
    const proxy = (backends: ReadonlyArray<{ readonly instance: string; readonly url: string }>, affinity: boolean) =>
      Effect.acquireRelease(
        Effect.async<{ readonly url: string; readonly server: Http.Server }>((resume) => {
          let next = 0
          const server = Http.createServer((req, res) => {
            const chunks: Array<Buffer> = []
            req.on("data", (chunk: Buffer) => chunks.push(chunk))
            req.on("end", () => {
              const body = Buffer.concat(chunks)
              const state = /"requestState":"p\.([^.]+)\./.exec(body.toString())?.[1]
              const pinned = affinity && state !== undefined ? backends.find((b) => b.instance === state) : undefined
              const target = new URL(pinned?.url ?? backends[next++ % backends.length].url)
              const upstream = Http.request(target, {
                method: req.method,
                headers: { ...req.headers, host: target.host }
              }, (reply) => {
                res.writeHead(reply.statusCode ?? 502, reply.headers)
                reply.pipe(res)
              })
              upstream.on("error", () => res.destroy())
              upstream.end(body)
            })
          })
          server.listen(
            0,
            "127.0.0.1",
            () =>
              resume(Effect.succeed({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, server }))
          )
        }),
        ({ server }) => Effect.sync(() => server.closeAllConnections())
      )

    it.scopedLive(
      "one client's calls alternate between them; a replay-safe call resumes anywhere, a parked one where it waits",
      () =>
        Effect.gen(function*() {
          const key = "a shared key of at least 32 bytes!"
          const a = yield* httpProcess("a", key)
          const b = yield* httpProcess("b", key)
          const roundRobin = yield* proxy([{ instance: "a", ...a }, { instance: "b", ...b }], false)
          const client = yield* clientOf("2026", new StreamableHTTPClientTransport(new URL(roundRobin.url)))
          const answered: Array<string> = []
          for (let i = 0; i < 4; i++) answered.push(text(yield* call(client, "whoami")))
          expect(new Set(answered)).toEqual(new Set(["a", "b"]))
          // replay-safe: three rounds over round robin, each on the next process, the state carrying the answers
          expect(text(yield* call(client, "ask_twice"))).toMatch(/^answer1 and answer2, finished on [ab]$/)
          // parked: a retry that lands on the other process is refused...
          const refused = yield* Effect.exit(call(client, "ask"))
          expect(Exit.isFailure(refused)).toBe(true)
          // ...and routed by the state's instance it resumes where the call waits
          const affine = yield* proxy([{ instance: "a", ...a }, { instance: "b", ...b }], true)
          const pinned = yield* clientOf("2026", new StreamableHTTPClientTransport(new URL(affine.url)))
          expect(text(yield* call(pinned, "ask"))).toMatch(/^hello answer1 from [ab]$/)
        }),
      30_000
    )
  })
})
