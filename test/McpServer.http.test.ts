/**
 * McpServer over Streamable HTTP, against the MCP SDK's `Client` and against raw HTTP requests on a real socket,
 * pinning the status codes served.
 */
import { describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js"
import { Deferred, Effect, Either, Exit, Option, Schema, SubscriptionRef } from "effect"
import * as Http from "node:http"
import { Tool, Toolkit } from "../src/index.js"
import * as McpServer from "../src/McpServer.js"
import { hanging } from "./fixtures/hanging.js"

// ---------------------------------------------------------------------------------------------------------------
// tools
// ---------------------------------------------------------------------------------------------------------------

const Upper = Tool.make("upper", {
  description: "Uppercase a text",
  parameters: { text: Schema.String },
  handler: ({ text }) => Effect.succeed(text.toUpperCase())
})

const Add = Tool.make("add", {
  description: "Add two integers",
  parameters: { a: Schema.Int, b: Schema.Int },
  success: Schema.Struct({ sum: Schema.Int }),
  handler: ({ a, b }) => Effect.succeed({ sum: a + b })
})

const Size = Tool.make("size", {
  description: "Measure a text",
  parameters: { text: Schema.String },
  handler: ({ text }) => Effect.succeed(String(text.length))
})

const Who = Tool.make("who", {
  description: "Who is calling",
  handler: () =>
    Effect.map(McpServer.session, (session) =>
      Option.match(session, {
        onNone: () => "no session",
        onSome: (s) => JSON.stringify({ id: s.id, client: Option.getOrNull(s.clientInfo) })
      }))
})

const Steps = Tool.make("steps", {
  description: "Two steps",
  handler: () =>
    Effect.forEach([1, 2], (i) => Tool.progress({ progress: i, total: 2, message: `step ${i}` }), { discard: true })
      .pipe(Effect.as("done"))
})

const kit = Toolkit.make(Upper, Add, Size, Who, Steps)

const info = { name: "http-test-server", version: "0.0.1" }

// ---------------------------------------------------------------------------------------------------------------
// peers
// ---------------------------------------------------------------------------------------------------------------

const serve = <T extends Tool.Any>(source: McpServer.Source<T>, options?: Partial<McpServer.HttpOptions>) =>
  McpServer.http(source, { ...info, port: 0, ...options })

/** An SDK client on Streamable HTTP, closed with the scope. */
const sdkClient = (url: string, name = "http-client") =>
  Effect.gen(function*() {
    const transport = new StreamableHTTPClientTransport(new URL(url))
    const client = new Client({ name, version: "1.0.0" })
    yield* Effect.acquireRelease(
      Effect.promise(() => client.connect(transport)),
      () => Effect.promise(() => client.close())
    )
    return { client, transport }
  })

const text = (result: unknown): string => (result as { content: Array<{ text: string }> }).content[0].text

interface Reply {
  readonly status: number
  readonly headers: Http.IncomingHttpHeaders
  readonly body: string
}

/** One raw HTTP request. `headersOnly` resolves at the response head and drops the connection (for SSE streams). */
const request = (url: string, options: {
  readonly method?: string
  readonly headers?: Record<string, string>
  readonly body?: string
  readonly headersOnly?: boolean
}) =>
  Effect.promise(() =>
    new Promise<Reply>((resolve, reject) => {
      const req = Http.request(url, { method: options.method ?? "POST", headers: options.headers }, (res) => {
        if (options.headersOnly === true) {
          resolve({ status: res.statusCode!, headers: res.headers, body: "" })
          res.destroy()
          return
        }
        let body = ""
        res.setEncoding("utf8")
        res.on("data", (chunk: string) => (body += chunk))
        res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body }))
      })
      req.on("error", reject)
      req.end(options.body)
    })
  )

const jsonHeaders = { "content-type": "application/json", accept: "application/json, text/event-stream" }

const post = (url: string, message: unknown, headers: Record<string, string> = {}) =>
  request(url, { headers: { ...jsonHeaders, ...headers }, body: JSON.stringify(message) })

/** The JSON-RPC messages of an SSE body. */
const events = (body: string): Array<Record<string, unknown>> =>
  body.split("\n").filter((line) => line.startsWith("data: ")).map((line) => JSON.parse(line.slice(6)))

const initialize = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } }
}

/** A raw session: initialize, then `notifications/initialized`; gives the session id. */
const rawSession = (url: string) =>
  Effect.gen(function*() {
    const init = yield* post(url, initialize)
    expect(init.status).toBe(200)
    const id = init.headers["mcp-session-id"] as string
    const initialized = yield* post(url, { jsonrpc: "2.0", method: "notifications/initialized" }, {
      "mcp-session-id": id
    })
    return { id, init, initialized }
  })

const port = (url: string) => new URL(url).port

// ---------------------------------------------------------------------------------------------------------------
// tests
// ---------------------------------------------------------------------------------------------------------------

describe("McpServer.http", () => {
  describe("with the SDK client", () => {
    it.scopedLive("serves on 127.0.0.1 at /mcp; lists, calls, structured content, invalid arguments", () =>
      Effect.gen(function*() {
        const { url } = yield* serve(kit)
        expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/)
        const { client } = yield* sdkClient(url)
        const { tools } = yield* Effect.promise(() => client.listTools())
        expect(tools).toEqual(Toolkit.definitions(kit, "mcp"))
        expect(yield* Effect.promise(() => client.callTool({ name: "upper", arguments: { text: "hi" } }))).toEqual({
          content: [{ type: "text", text: "HI" }]
        })
        expect(yield* Effect.promise(() => client.callTool({ name: "add", arguments: { a: 2, b: 3 } }))).toEqual({
          content: [{ type: "text", text: "{\"sum\":5}" }],
          structuredContent: { sum: 5 }
        })
        expect(yield* Effect.promise(() => client.callTool({ name: "add", arguments: { a: 2, b: "3" } }))).toEqual({
          content: [{ type: "text", text: "invalid arguments: b: expected an integer, got \"3\"" }],
          isError: true
        })
      }))

    it.scopedLive("progress notifications reach onprogress on the request's stream", () =>
      Effect.gen(function*() {
        const { url } = yield* serve(kit)
        const { client } = yield* sdkClient(url)
        const seen: Array<unknown> = []
        const result = yield* Effect.promise(() =>
          client.callTool({ name: "steps" }, undefined, { onprogress: (progress) => void seen.push(progress) })
        )
        expect(text(result)).toBe("done")
        expect(seen).toEqual([
          { progress: 1, total: 2, message: "step 1" },
          { progress: 2, total: 2, message: "step 2" }
        ])
      }))

    it.scopedLive("aborting a call cancels it: the handler is interrupted and its finalizer runs", () =>
      Effect.gen(function*() {
        const { released, started, tool } = yield* hanging("hang", "k")
        const { url } = yield* serve(Toolkit.make(tool, Upper))
        const { client } = yield* sdkClient(url)
        const controller = new AbortController()
        const pending = client.callTool({ name: "hang" }, undefined, { signal: controller.signal }).then(
          () => "answered",
          () => "rejected"
        )
        yield* Deferred.await(started)
        controller.abort("stop")
        yield* Deferred.await(released)
        expect(yield* Effect.promise(() => pending)).toBe("rejected")
        expect(text(yield* Effect.promise(() => client.callTool({ name: "upper", arguments: { text: "on" } }))))
          .toBe("ON")
      }))

    it.scopedLive("two clients' calls on one resource key never overlap; other keys run alongside", () =>
      Effect.gen(function*() {
        const log: Array<string> = []
        let active = 0
        let most = 0
        const peeked = yield* Deferred.make<void>()
        const Edit = Tool.make("edit", {
          description: "Edit the shared document",
          parameters: { who: Schema.String },
          resource: "doc",
          handler: ({ who }) =>
            Effect.gen(function*() {
              active++
              most = Math.max(most, active)
              log.push(`enter ${who}`)
              // the first edit holds the key until a call on no key has run: it must not wait behind the edits
              yield* Effect.timeoutOption(Deferred.await(peeked), "2 seconds")
              yield* Effect.sleep("5 millis")
              log.push(`exit ${who}`)
              active--
            })
        })
        const Peek = Tool.make("peek", {
          description: "Look without locking",
          handler: () => Effect.zipRight(Effect.sync(() => log.push("peek")), Deferred.succeed(peeked, undefined))
        })
        const { url } = yield* serve(Toolkit.make(Edit, Peek))
        const one = yield* sdkClient(url, "one")
        const two = yield* sdkClient(url, "two")
        const edit = (client: Client, who: string) => client.callTool({ name: "edit", arguments: { who } })
        yield* Effect.promise(() =>
          Promise.all([
            edit(one.client, "one-1"),
            edit(two.client, "two-1"),
            edit(one.client, "one-2"),
            edit(two.client, "two-2"),
            one.client.callTool({ name: "peek" })
          ])
        )
        expect(most).toBe(1)
        const edits = log.filter((line) => line !== "peek")
        expect(edits).toHaveLength(8)
        for (let i = 0; i < edits.length; i += 2) {
          expect(edits[i + 1]).toBe(edits[i].replace("enter", "exit"))
        }
        expect(log.indexOf("peek")).toBeLessThan(log.findIndex((line) => line.startsWith("exit")))
      }))

    it.scopedLive("McpServer.session is the Mcp-Session-Id and the client's info", () =>
      Effect.gen(function*() {
        const { url } = yield* serve(kit)
        const one = yield* sdkClient(url, "one")
        const two = yield* sdkClient(url, "two")
        const who = (client: Client) =>
          Effect.map(Effect.promise(() => client.callTool({ name: "who" })), (result) => JSON.parse(text(result)))
        expect(yield* who(one.client)).toEqual({
          id: one.transport.sessionId,
          client: { name: "one", version: "1.0.0" }
        })
        expect(yield* who(two.client)).toEqual({
          id: two.transport.sessionId,
          client: { name: "two", version: "1.0.0" }
        })
        expect(one.transport.sessionId).not.toBe(two.transport.sessionId)
      }))

    it.scopedLive("tools/list_changed reaches the client on its GET stream", () =>
      Effect.gen(function*() {
        const ref = yield* SubscriptionRef.make<Toolkit.Toolkit<Tool.Tool<string>>>(Toolkit.make(Upper))
        const { url } = yield* serve(ref)
        const { client } = yield* sdkClient(url)
        expect(client.getServerCapabilities()?.tools).toEqual({ listChanged: true })
        const notified = yield* Deferred.make<void>()
        client.setNotificationHandler(ToolListChangedNotificationSchema, () =>
          void Deferred.unsafeDone(notified, Exit.void))
        // the client opens its GET stream on its own after initializing; changes sent before it is open are lost
        // (there is no stream to carry them), so change until one is heard
        for (let i = 0; i < 50 && !(yield* Deferred.isDone(notified)); i++) {
          yield* SubscriptionRef.set(ref, Toolkit.make(Upper, Add))
          yield* Effect.sleep("20 millis")
        }
        yield* Deferred.await(notified)
        const { tools } = yield* Effect.promise(() =>
          client.listTools()
        )
        expect(tools.map((t) => t.name)).toEqual(["upper", "add"])
      }))

    it.scopedLive("a 5 MB argument is accepted", () =>
      Effect.gen(function*() {
        const { url } = yield* serve(kit)
        const { client } = yield* sdkClient(url)
        const result = yield* Effect.promise(() =>
          client.callTool({ name: "size", arguments: { text: "x".repeat(5_000_000) } })
        )
        expect(text(result)).toBe("5000000")
      }))
  })

  describe("the HTTP exchange", () => {
    it.scopedLive("sessions: initialize gives Mcp-Session-Id on an SSE answer, notifications 202, DELETE ends it", () =>
      Effect.gen(function*() {
        const { url } = yield* serve(kit)
        const { id, init, initialized } = yield* rawSession(url)
        expect(id).toMatch(/^[0-9a-f-]{36}$/)
        expect(init.headers["content-type"]).toBe("text/event-stream")
        expect(events(init.body)).toMatchObject([
          { id: 1, result: { protocolVersion: "2025-11-25", serverInfo: info, capabilities: { tools: {} } } }
        ])
        expect(initialized.status).toBe(202)
        expect(initialized.body).toBe("")

        const headers = { "mcp-session-id": id, "mcp-protocol-version": "2025-11-25" }
        const list = yield* post(url, { jsonrpc: "2.0", id: 2, method: "tools/list" }, headers)
        expect(list.status).toBe(200)
        expect(events(list.body)).toMatchObject([{ id: 2, result: { tools: Toolkit.definitions(kit, "mcp") } }])

        // a GET opens the session's stream for server notifications
        const stream = yield* request(url, {
          method: "GET",
          headers: { ...headers, accept: "text/event-stream" },
          headersOnly: true
        })
        expect(stream.status).toBe(200)
        expect(stream.headers["content-type"]).toBe("text/event-stream")

        const deleted = yield* request(url, { method: "DELETE", headers })
        expect(deleted.status).toBe(200)
        const after = yield* post(url, { jsonrpc: "2.0", id: 3, method: "tools/list" }, headers)
        expect(after.status).toBe(404)
        expect(JSON.parse(after.body)).toEqual({
          jsonrpc: "2.0",
          error: { code: -32001, message: "Session not found" }
        })
      }))

    it.scopedLive("status codes for requests outside a session or the protocol", () =>
      Effect.gen(function*() {
        const { url } = yield* serve(kit)
        const { id } = yield* rawSession(url)
        const errorOf = (reply: Reply) => ({ status: reply.status, error: JSON.parse(reply.body).error })
        const listCall = { jsonrpc: "2.0", id: 9, method: "tools/list" }

        expect(errorOf(yield* post(url, listCall, { "mcp-session-id": "no-such-session" }))).toEqual({
          status: 404,
          error: { code: -32001, message: "Session not found" }
        })
        expect(errorOf(yield* post(url, listCall))).toEqual({
          status: 400,
          error: { code: -32000, message: "Bad Request: Server not initialized" }
        })
        expect(errorOf(yield* request(url, { method: "GET", headers: { accept: "text/event-stream" } }))).toEqual({
          status: 400,
          error: { code: -32000, message: "Bad Request: Mcp-Session-Id header is required" }
        })
        const unsupported = yield* post(url, listCall, { "mcp-session-id": id, "mcp-protocol-version": "1999-01-01" })
        expect(unsupported.status).toBe(400)
        expect(JSON.parse(unsupported.body).error.message).toMatch(/^Bad Request: Unsupported protocol version: 1999/)
        const put = yield* request(url, { method: "PUT", headers: jsonHeaders, body: "{}" })
        expect(errorOf(put)).toEqual({ status: 405, error: { code: -32000, message: "Method not allowed." } })
        expect(put.headers.allow).toBe("GET, POST, DELETE")
        expect(errorOf(yield* post(url.replace(/\/mcp$/, "/other"), listCall))).toEqual({
          status: 404,
          error: { code: -32000, message: "Not Found: the MCP endpoint is /mcp" }
        })
        expect(errorOf(yield* request(url, { headers: { "content-type": "application/json" }, body: "{}" }))).toEqual({
          status: 406,
          error: {
            code: -32000,
            message: "Not Acceptable: Client must accept both application/json and text/event-stream"
          }
        })
      }))

    it.scopedLive("malformed JSON-RPC is 400 with a parse error, and the session goes on", () =>
      Effect.gen(function*() {
        const { url } = yield* serve(kit)
        const { id } = yield* rawSession(url)
        const headers = { ...jsonHeaders, "mcp-session-id": id }
        const broken = yield* request(url, { headers, body: "{\"jsonrpc\": \"2.0\", \"id\": 2, \"method\":" })
        expect(broken.status).toBe(400)
        expect(JSON.parse(broken.body).error).toEqual({ code: -32700, message: "Parse error: Invalid JSON" })
        const notRpc = yield* request(url, { headers, body: "{\"hello\": \"world\"}" })
        expect(notRpc.status).toBe(400)
        expect(JSON.parse(notRpc.body).error).toEqual({
          code: -32600,
          message: "Invalid Request: \"jsonrpc\" must be \"2.0\""
        })
        const unknown = yield* post(url, { jsonrpc: "2.0", id: 3, method: "no/such/method" }, { "mcp-session-id": id })
        expect(unknown.status).toBe(200)
        expect(events(unknown.body)).toEqual([
          { jsonrpc: "2.0", id: 3, error: { code: -32601, message: "Method not found" } }
        ])
        const ok = yield* post(url, {
          jsonrpc: "2.0",
          id: 4,
          method: "tools/call",
          params: { name: "upper", arguments: { text: "still" } }
        }, { "mcp-session-id": id })
        expect(events(ok.body)).toMatchObject([{ id: 4, result: { content: [{ type: "text", text: "STILL" }] } }])
      }))

    it.scopedLive("a body over maxMessageBytes is 413, and the session goes on", () =>
      Effect.gen(function*() {
        const { url } = yield* serve(kit, { maxMessageBytes: 1024 * 1024 })
        const { id } = yield* rawSession(url)
        const call = (id: number, text: string) => ({
          jsonrpc: "2.0",
          id,
          method: "tools/call",
          params: { name: "size", arguments: { text } }
        })
        const huge = yield* post(url, call(2, "x".repeat(5_000_000)), { "mcp-session-id": id })
        expect(huge.status).toBe(413)
        expect(JSON.parse(huge.body).error).toEqual({
          code: -32000,
          message: "Payload Too Large: Request body must not exceed 1048576 bytes"
        })
        const small = yield* post(url, call(3, "xyz"), { "mcp-session-id": id })
        expect(events(small.body)).toMatchObject([{ id: 3, result: { content: [{ type: "text", text: "3" }] } }])
      }))
  })

  describe("DNS rebinding protection", () => {
    it.scopedLive("on loopback: a foreign Host or Origin is 403; localhost names and their origins pass", () =>
      Effect.gen(function*() {
        const { url } = yield* serve(kit)
        const p = port(url)
        const refused = yield* post(url, initialize, { host: `evil.example:${p}` })
        expect(refused.status).toBe(403)
        expect(JSON.parse(refused.body).error).toEqual({
          code: -32000,
          message: `Forbidden: Host "evil.example:${p}" is not allowed`
        })
        const badOrigin = yield* post(url, initialize, { origin: "http://evil.example" })
        expect(badOrigin.status).toBe(403)
        expect(JSON.parse(badOrigin.body).error.message).toBe(
          "Forbidden: Origin \"http://evil.example\" is not allowed"
        )
        expect((yield* post(url, initialize, { host: `localhost:${p}` })).status).toBe(200)
        expect((yield* post(url, initialize, { host: `[::1]:${p}` })).status).toBe(200)
        expect((yield* post(url, initialize, { origin: "http://localhost:5173" })).status).toBe(200)
        // nothing reached a session: a refused request is refused before anything else is read
        expect((yield* request(url, { method: "PUT", headers: { host: "evil.example" } })).status).toBe(403)
      }))

    it.scopedLive("allowedHosts and allowedOrigins replace the defaults", () =>
      Effect.gen(function*() {
        const { url } = yield* serve(kit, { allowedHosts: ["mcp.internal"], allowedOrigins: ["https://app.example"] })
        const p = port(url)
        expect((yield* post(url, initialize)).status).toBe(403)
        expect((yield* post(url, initialize, { host: `mcp.internal:${p}` })).status).toBe(200)
        expect((yield* post(url, initialize, { host: "mcp.internal", origin: "https://app.example" })).status).toBe(200)
        expect((yield* post(url, initialize, { host: "mcp.internal", origin: "http://mcp.internal" })).status).toBe(403)
      }))
  })

  describe("stateless", () => {
    it.scopedLive("answers each POST on its own: no session id, no initialize needed, GET and DELETE are 405", () =>
      Effect.gen(function*() {
        const { url } = yield* serve(kit, { stateless: true })
        const reply = yield* post(url, {
          jsonrpc: "2.0",
          id: 7,
          method: "tools/call",
          params: { name: "upper", arguments: { text: "alone" } }
        })
        expect(reply.status).toBe(200)
        expect(reply.headers["mcp-session-id"]).toBeUndefined()
        expect(events(reply.body)).toEqual([
          { jsonrpc: "2.0", id: 7, result: { content: [{ type: "text", text: "ALONE" }] } }
        ])
        for (const method of ["GET", "DELETE"]) {
          const refused = yield* request(url, { method, headers: { accept: "text/event-stream" } })
          expect(refused.status).toBe(405)
          expect(refused.headers.allow).toBe("POST")
        }
        // the SDK client works too; a call belongs to no session
        const { client, transport } = yield* sdkClient(url)
        expect(transport.sessionId).toBeUndefined()
        expect(text(yield* Effect.promise(() => client.callTool({ name: "who" })))).toBe("no session")
      }))

    it.scopedLive("a dropped request interrupts its call; its finalizer runs", () =>
      Effect.gen(function*() {
        const { released, started, tool } = yield* hanging("hang", "k")
        const { url } = yield* serve(Toolkit.make(tool), { stateless: true })
        const req = Http.request(url, { method: "POST", headers: jsonHeaders })
        req.on("error", () => undefined)
        req.end(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "hang" } }))
        yield* Deferred.await(started)
        req.destroy()
        yield* Deferred.await(released)
      }))
  })

  describe("lifetime", () => {
    it.scopedLive("ending a session interrupts its calls and releases their resource keys", () =>
      Effect.gen(function*() {
        const { released, started, tool } = yield* hanging("hang", "k")
        const After = Tool.make("after", {
          description: "Same key",
          resource: "k",
          handler: () => Effect.succeed("ran")
        })
        const { url } = yield* serve(Toolkit.make(tool, After))
        const one = yield* sdkClient(url, "one")
        const two = yield* sdkClient(url, "two")
        const pending = one.client.callTool({ name: "hang" }).then(() => "answered", () => "rejected")
        yield* Deferred.await(started)
        yield* Effect.promise(() => one.transport.terminateSession())
        yield* Deferred.await(released)
        // the other session's call on the same key is not left waiting behind a call that no longer exists
        expect(text(yield* Effect.promise(() => two.client.callTool({ name: "after" })))).toBe("ran")
        yield* Effect.promise(() => one.client.close())
        expect(yield* Effect.promise(() => pending)).toBe("rejected")
      }))

    it.scopedLive("closing the scope stops listening and interrupts the calls in flight", () =>
      Effect.gen(function*() {
        const { released, started, tool } = yield* hanging("hang", "k")
        const url = yield* Effect.scoped(Effect.gen(function*() {
          const { url } = yield* serve(Toolkit.make(tool))
          const { client } = yield* sdkClient(url)
          void client.callTool({ name: "hang" }).catch(() => undefined)
          yield* Deferred.await(started)
          return url
        }))
        expect(yield* Deferred.isDone(released)).toBe(true)
        const refused = yield* Effect.either(Effect.tryPromise(() => fetch(url, { method: "POST" })))
        expect(Either.isLeft(refused)).toBe(true)
      }))

    it.scopedLive("a port in use is an McpServerError saying so", () =>
      Effect.gen(function*() {
        const { url } = yield* serve(kit)
        const error = yield* Effect.flip(serve(kit, { port: Number(port(url)) }))
        expect(error).toBeInstanceOf(McpServer.McpServerError)
        expect(error._tag).toBe("McpServerError")
        expect(error.message).toMatch(new RegExp(`^cannot listen on 127\\.0\\.0\\.1:${port(url)}: listen EADDRINUSE`))
      }))
  })
})
