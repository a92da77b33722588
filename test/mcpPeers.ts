/**
 * HTTP peers for the MCP client's tests: a `node:http` server in front of a web-style handler (what the v2 SDK's
 * server transports are), and two MCP servers on the SDK's v2 `McpServer`: one with 2025 sessions
 * (`WebStandardStreamableHTTPServerTransport`), one that speaks 2026-07-28 (`createMcpHandler`) and answers
 * 2025 clients statelessly. Every request the server got is logged, so a test can see what the client sent.
 */
// For its effect: the npm `undici` it loads becomes `fetch`'s dispatcher (see `forward`), so the peers run under
// the stricter dispatcher whichever test files a worker ran before (vitest runs them in one process).
import "@effect/platform-node/NodeHttpClient"
import type { McpServer, ServerNotifier } from "@modelcontextprotocol/server"
import { createMcpHandler, WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/server"
import { Effect } from "effect"
import type { Scope } from "effect"
import { randomUUID } from "node:crypto"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"

/** One request as the server got it. */
export interface Logged {
  readonly method: string
  readonly path: string
  readonly headers: Http.IncomingHttpHeaders
  readonly body: string
}

export interface WebServer {
  readonly url: string
  readonly origin: string
  readonly requests: Array<Logged>
}

const readBody = (request: Http.IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    let body = ""
    request.setEncoding("utf8")
    request.on("data", (chunk: string) => (body += chunk))
    request.on("end", () => resolve(body))
    request.on("error", reject)
  })

/**
 * A `node:http` server on a free port of 127.0.0.1 in front of `handler`, closed with the scope; `url` is
 * `origin + path`. A response body is streamed as it comes (SSE), and a client that goes aborts the request;
 * `Response.error()` cuts the connection without an answer.
 */
export const webServer = (
  handler: (request: Request, logged: Logged) => Promise<Response>,
  path = "/mcp"
): Effect.Effect<WebServer, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.async<{ readonly server: Http.Server; readonly web: WebServer }>((resume) => {
      const requests: Array<Logged> = []
      const server = Http.createServer((incoming, outgoing) => {
        void (async () => {
          const body = await readBody(incoming)
          const logged: Logged = {
            method: incoming.method ?? "GET",
            path: incoming.url ?? "/",
            headers: incoming.headers,
            body
          }
          requests.push(logged)
          const aborted = new AbortController()
          outgoing.on("close", () => aborted.abort())
          const headers = new Headers()
          for (const [name, value] of Object.entries(incoming.headers)) {
            if (typeof value === "string") headers.set(name, value)
            else if (Array.isArray(value)) { for (const each of value) headers.append(name, each) }
          }
          const method = logged.method
          const request = new Request(new URL(logged.path, `http://${incoming.headers.host}`), {
            method,
            headers,
            signal: aborted.signal,
            ...(method === "GET" || method === "HEAD" || method === "DELETE" ? {} : { body })
          })
          const response = await handler(request, logged)
          // a network error (`Response.error()`): the connection is cut, no answer
          if (response.type === "error") return void outgoing.socket?.destroy()
          outgoing.writeHead(response.status, Object.fromEntries(response.headers.entries()))
          if (response.body === null) return void outgoing.end()
          const reader = response.body.getReader()
          try {
            for (;;) {
              const { done, value } = await reader.read()
              if (done) break
              outgoing.write(value)
            }
          } catch {
            // the stream was cancelled: the client went
          }
          outgoing.end()
        })().catch((error: unknown) => {
          if (!outgoing.headersSent) outgoing.writeHead(500)
          outgoing.end(String(error))
        })
      })
      server.listen(0, "127.0.0.1", () => {
        const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
        resume(Effect.succeed({ server, web: { url: `${origin}${path}`, origin, requests } }))
      })
    }),
    ({ server }) =>
      Effect.async<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  ).pipe(Effect.map(({ web }) => web))

/**
 * `request`, with `body`, sent on to `url` by `fetch`. The headers that describe the hop it came on (`host`,
 * `content-length`, `connection`, `transfer-encoding`) are left for `fetch` to write: undici's own `Agent`, which
 * becomes `fetch`'s dispatcher in a process that has imported the npm `undici` (`@effect/platform-node` does),
 * refuses a request whose `content-length` it did not write.
 */
export const forward = (url: string, request: Request, body: string): Promise<Response> => {
  const headers = new Headers(request.headers)
  for (const name of ["host", "content-length", "connection", "transfer-encoding"]) headers.delete(name)
  return fetch(url, { method: request.method, headers, ...(body === "" ? {} : { body }) })
}

/** A 2025-era MCP server with sessions: one `McpServer` (from `make`) per session; `closed` lists ended sessions. */
export const sessionServer = (
  make: () => McpServer
): Effect.Effect<WebServer & { readonly closed: Array<string> }, never, Scope.Scope> => {
  const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>()
  const closed: Array<string> = []
  return Effect.map(
    webServer(async (request) => {
      const id = request.headers.get("mcp-session-id")
      const known = id === null ? undefined : sessions.get(id)
      if (known !== undefined) return known.handleRequest(request)
      if (id !== null) return new Response("unknown session", { status: 404 })
      const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        onsessioninitialized: (session) => void sessions.set(session, transport),
        onsessionclosed: (session) => {
          sessions.delete(session)
          closed.push(session)
        }
      })
      await make().connect(transport)
      return transport.handleRequest(request)
    }),
    (web) => ({ ...web, closed })
  )
}

/**
 * An MCP server that speaks 2026-07-28 (and 2025 statelessly): one `McpServer` (from `make`) per request; `notify`
 * tells listening clients of a change.
 */
export const modernServer = (
  make: () => McpServer,
  options?: { readonly legacy?: "stateless" | "reject" }
): Effect.Effect<WebServer & { readonly notify: ServerNotifier }, never, Scope.Scope> =>
  Effect.flatMap(
    Effect.acquireRelease(
      Effect.sync(() => createMcpHandler(() => make(), { legacy: options?.legacy ?? "stateless" })),
      (handler) => Effect.promise(() => handler.close())
    ),
    (handler) =>
      Effect.map(webServer((request) => handler.fetch(request)), (web) => ({ ...web, notify: handler.notify }))
  )

/**
 * A 2026-07-28 server (from `make`) whose connection breaks under the first call of each tool, after the tool ran:
 * an answer that would have come whole is cut off (`Response.error()`), one that began as a stream ends after its
 * first event. `ran` lists every call the server ran, by tool name.
 */
export const breakingServer = (
  make: () => McpServer
): Effect.Effect<{ readonly url: string; readonly ran: Array<string> }, never, Scope.Scope> =>
  Effect.gen(function*() {
    const ran: Array<string> = []
    const broken = new Set<string>()
    const modern = yield* modernServer(make)
    const server = yield* webServer(async (request, logged) => {
      const message = JSON.parse(logged.body || "{}") as { method?: string; params?: { name?: string } }
      const forwarded = await forward(modern.url, request, logged.body)
      const name = message.params?.name
      if (message.method !== "tools/call" || name === undefined) return forwarded
      ran.push(name)
      if (broken.has(name)) return forwarded
      broken.add(name)
      if (forwarded.headers.get("content-type")?.startsWith("text/event-stream") === true) {
        const reader = forwarded.body!.getReader()
        const first = await reader.read()
        void reader.cancel()
        return new Response(first.value, { headers: forwarded.headers })
      }
      await forwarded.text()
      return Response.error()
    })
    return { url: server.url, ran }
  })
