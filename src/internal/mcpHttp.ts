/**
 * `McpServer.http`: Streamable HTTP on `node:http`, our own transport ({@link Delivery}) in front of the SDK's
 * `Server`, holding everything an attacker could make grow:
 *
 * - the request: `Host`/`Origin` (DNS rebinding), path and method, then the body, read here within
 *   `maxMessageBytes`, parsed and checked message by message (`jsonRpc.check`), so the SDK only ever gets a
 *   message it can serve;
 * - the session table ({@link Sessions}): at most `maxSessions`; past that a new session takes the place of the
 *   least recently used idle one (idle: no request being answered and no stream open), and is refused with `503`
 *   only when every session is in use; a session idle for `sessionIdleTimeout` ends, and its id is then answered
 *   `404` like any unknown one, which tells a client to initialize again (MCP's rule for a session the server has
 *   ended);
 * - the answers ({@link Delivery}): a message for a stream whose client is not reading waits (the response's
 *   `write` asked for `drain`), and what waits for one session is bounded by `maxBufferedBytes`: past it, the
 *   stream holding the most is ended, as if its client had gone. A stream whose client goes (the socket closes
 *   before every answer was written) drops what waits for it and cancels its requests, so their calls are
 *   interrupted: without an event store nothing could ever deliver their answers (MCP 2026-07-28 makes a
 *   disconnect a cancellation outright).
 *
 * @internal
 */
import type {
  JSONRPCMessage,
  MessageExtraInfo,
  RequestId,
  Server,
  Transport,
  TransportSendOptions
} from "@modelcontextprotocol/server"
import type { McpHttpHandler } from "@modelcontextprotocol/server"
import { classifyInboundRequest, createMcpHandler, SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/server"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import { randomUUID } from "node:crypto"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import type * as Tool from "../Tool.js"
import * as JsonRpc from "./jsonRpc.js"
import type { Options, Source } from "./mcpServer.js"
import {
  closeServer,
  connectServer,
  DEFAULT_MAX_MESSAGE_BYTES,
  makeCore,
  makeServer,
  McpServerError
} from "./mcpServer.js"

// ---------------------------------------------------------------------------------------------------------------
// models
// ---------------------------------------------------------------------------------------------------------------

export interface HttpOptions extends Options {
  readonly port: number
  readonly host?: string | undefined
  readonly path?: string | undefined
  readonly stateless?: boolean | undefined
  readonly allowedHosts?: ReadonlyArray<string> | undefined
  readonly allowedOrigins?: ReadonlyArray<string> | undefined
  readonly maxMessageBytes?: number | undefined
  readonly maxSessions?: number | undefined
  readonly sessionIdleTimeout?: Duration.DurationInput | undefined
  readonly maxBufferedBytes?: number | undefined
}

export interface HttpServer {
  readonly url: string
}

export const DEFAULT_HOST = "127.0.0.1"
export const DEFAULT_PATH = "/mcp"
export const DEFAULT_MAX_SESSIONS = 1000
export const DEFAULT_SESSION_IDLE_TIMEOUT: Duration.Duration = Duration.minutes(30)
export const DEFAULT_MAX_BUFFERED_BYTES = 16 * 1024 * 1024

/** The options checked, with their defaults. */
interface Settings {
  readonly port: number
  readonly host: string
  readonly path: string
  readonly stateless: boolean
  readonly maxMessageBytes: number
  readonly maxSessions: number
  /** Undefined for sessions that never expire (an infinite timeout). */
  readonly idleMillis: number | undefined
  readonly maxBufferedBytes: number
}

const optionsError = (message: string) => new McpServerError({ reason: "Options", message })

const isCount = (n: unknown): n is number => typeof n === "number" && Number.isSafeInteger(n) && n > 0

/** The options as numbers the server can run on, or the one that is wrong. */
const settingsOf = (options: HttpOptions): Effect.Effect<Settings, McpServerError> => {
  const { port } = options
  if (typeof port !== "number" || !Number.isInteger(port) || port < 0 || port > 65535) {
    return Effect.fail(optionsError(`invalid port ${String(port)}: a port is an integer from 0 to 65535`))
  }
  for (const name of ["maxMessageBytes", "maxSessions", "maxBufferedBytes"] as const) {
    const value = options[name]
    if (value !== undefined && !isCount(value)) {
      return Effect.fail(optionsError(`invalid ${name} ${String(value)}: it is a whole number above 0`))
    }
  }
  const idle = options.sessionIdleTimeout === undefined
    ? Option.some(DEFAULT_SESSION_IDLE_TIMEOUT)
    : Duration.decodeUnknown(options.sessionIdleTimeout)
  if (Option.isNone(idle) || Duration.isZero(idle.value)) {
    return Effect.fail(
      optionsError(`invalid sessionIdleTimeout ${String(options.sessionIdleTimeout)}: it is a duration above 0`)
    )
  }
  return Effect.succeed({
    port,
    host: options.host ?? DEFAULT_HOST,
    path: options.path ?? DEFAULT_PATH,
    stateless: options.stateless === true,
    maxMessageBytes: options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
    maxSessions: options.maxSessions ?? DEFAULT_MAX_SESSIONS,
    idleMillis: Duration.isFinite(idle.value) ? Duration.toMillis(idle.value) : undefined,
    maxBufferedBytes: options.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES
  })
}

// ---------------------------------------------------------------------------------------------------------------
// the request: DNS rebinding protection
// ---------------------------------------------------------------------------------------------------------------

const LOOPBACK_HOSTS: ReadonlyArray<string> = ["localhost", "127.0.0.1", "::1"]

const bare = (hostname: string): string => hostname.toLowerCase().replace(/^\[(.*)\]$/, "$1")

const isLoopback = (host: string): boolean => {
  const h = bare(host)
  return h === "localhost" || h === "::1" || h.startsWith("127.")
}

const isWildcard = (host: string): boolean => host === "" || host === "0.0.0.0" || bare(host) === "::"

/** `Host: name[:port]` as a bare hostname, or undefined when it does not parse. */
const hostnameOf = (header: string): string | undefined => {
  try {
    return bare(new URL(`http://${header}`).hostname)
  } catch {
    return undefined
  }
}

/**
 * DNS rebinding protection (MCP's transport security rules): a `Host` naming something other than this server, or
 * an `Origin` (sent by browsers) not allowed, is refused before anything else is read.
 */
const requestGuard = (options: HttpOptions, host: string): (req: Http.IncomingMessage) => string | undefined => {
  const hosts = options.allowedHosts !== undefined
    ? new Set(options.allowedHosts.map(bare))
    : isLoopback(host)
    ? new Set([...LOOPBACK_HOSTS, bare(host)])
    : isWildcard(host)
    ? undefined
    : new Set([bare(host)])
  const origins = options.allowedOrigins === undefined
    ? undefined
    : new Set(options.allowedOrigins.map((origin) => origin.toLowerCase()))
  return (req) => {
    if (hosts !== undefined) {
      const header = req.headers.host
      const hostname = header === undefined ? undefined : hostnameOf(header)
      if (hostname === undefined || !hosts.has(hostname)) {
        return `Forbidden: Host ${JSON.stringify(header ?? "")} is not allowed`
      }
    }
    const origin = req.headers.origin
    if (origin !== undefined) {
      const allowed = origins !== undefined
        ? origins.has(origin.toLowerCase())
        : hosts !== undefined && hostsOfOrigin(origin, hosts)
      if (!allowed) return `Forbidden: Origin ${JSON.stringify(origin)} is not allowed`
    }
    return undefined
  }
}

const hostsOfOrigin = (origin: string, hosts: ReadonlySet<string>): boolean => {
  try {
    const url = new URL(origin)
    return (url.protocol === "http:" || url.protocol === "https:") && hosts.has(bare(url.hostname))
  } catch {
    return false
  }
}

// ---------------------------------------------------------------------------------------------------------------
// the request: its body, read and checked here
// ---------------------------------------------------------------------------------------------------------------

/** An answer that is a JSON-RPC error; `id` only where the request had one that could be read. */
const sendJsonError = (
  res: Http.ServerResponse,
  status: number,
  code: number,
  message: string,
  headers?: Record<string, string>,
  id?: RequestId | null | undefined
): void => {
  if (res.headersSent || res.destroyed) return
  res.writeHead(status, { "content-type": "application/json", ...headers })
  res.end(JSON.stringify(JsonRpc.errorResponse({ id, code, message })))
}

const isJsonContentType = (header: string | undefined): boolean =>
  header !== undefined && header.split(";", 1)[0].trim().toLowerCase() === "application/json"

const tooLarge = (res: Http.ServerResponse, maxBytes: number): undefined => {
  // the rest of the body is not read: the connection cannot carry another request after this answer
  sendJsonError(res, 413, -32000, `Payload Too Large: Request body must not exceed ${maxBytes} bytes`, {
    connection: "close"
  })
  return undefined
}

/** A request's body as text, or what stopped it: more than `maxBytes`, or a client that left before its end. */
const readBody = (req: Http.IncomingMessage, maxBytes: number): Promise<string | "too large" | "gone"> =>
  new Promise((resolve) => {
    const chunks: Array<Buffer> = []
    let received = 0
    const finish = (outcome: string | "too large" | "gone") => {
      req.off("data", ondata)
      req.off("end", onend)
      req.off("close", onclose)
      resolve(outcome)
    }
    const ondata = (chunk: Buffer) => {
      received += chunk.length
      if (received > maxBytes) finish("too large")
      else chunks.push(chunk)
    }
    const onend = () => finish(Buffer.concat(chunks, received).toString("utf8"))
    const onclose = () => finish("gone")
    req.on("data", ondata)
    req.once("end", onend)
    req.once("close", onclose)
  })

/**
 * A POST's one message, read within `maxBytes` and checked, or undefined once the request has been answered with
 * the status that says what is wrong (`406`, `415`, `413`, `400`). The headers are checked first, as the SDK
 * checks them, so a wrong request costs no body read.
 */
const readMessage = async (
  req: Http.IncomingMessage,
  res: Http.ServerResponse,
  maxBytes: number
): Promise<JSONRPCMessage | undefined> => {
  const accept = req.headers.accept ?? ""
  if (!accept.includes("application/json") || !accept.includes("text/event-stream")) {
    sendJsonError(res, 406, -32000, "Not Acceptable: Client must accept both application/json and text/event-stream")
    return undefined
  }
  if (!isJsonContentType(req.headers["content-type"])) {
    sendJsonError(res, 415, -32000, "Unsupported Media Type: Content-Type must be application/json")
    return undefined
  }
  if (Number(req.headers["content-length"]) > maxBytes) return tooLarge(res, maxBytes)
  const body = await readBody(req, maxBytes)
  if (body === "too large") return tooLarge(res, maxBytes)
  if (body === "gone") return undefined
  let value: unknown
  try {
    value = JSON.parse(body)
  } catch {
    sendJsonError(res, 400, JsonRpc.PARSE_ERROR, "Parse error: Invalid JSON")
    return undefined
  }
  const checked = JsonRpc.check(value)
  if (checked._tag === "Message") return checked.message
  const { code, id, message } = checked.refusal
  sendJsonError(res, 400, code, message, undefined, id)
  return undefined
}

const isInitialize = (message: JSONRPCMessage): message is JSONRPCMessage & { readonly id: RequestId } =>
  JsonRpc.isRequest(message) && message.method === "initialize"

/**
 * What is wrong with a session request's `MCP-Protocol-Version` header, if anything: a client names the revision
 * the session negotiated, one of MCP's 2025-era revisions; without the header, the server assumes 2025-03-26.
 */
const unsupportedVersion = (req: Http.IncomingMessage): string | undefined => {
  const version = req.headers["mcp-protocol-version"]
  if (version === undefined || (typeof version === "string" && SUPPORTED_PROTOCOL_VERSIONS.includes(version))) {
    return undefined
  }
  return `Bad Request: Unsupported protocol version: ${String(version)} (supported versions: ${
    SUPPORTED_PROTOCOL_VERSIONS.join(", ")
  })`
}

// ---------------------------------------------------------------------------------------------------------------
// the answers: streams, back-pressure, disconnects
// ---------------------------------------------------------------------------------------------------------------

const SSE_HEADERS: Readonly<Record<string, string>> = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache, no-transform",
  connection: "keep-alive",
  "x-accel-buffering": "no"
}

interface Waiting {
  readonly message: JSONRPCMessage
  readonly last: boolean
  readonly bytes: number
  readonly done: () => void
}

/**
 * One open response the server writes messages on: a POST's answers, or a session's GET stream. Its head is
 * written at once as an SSE stream ({@link openEvents}: what 2025-era clients have always been answered), or, for
 * `"auto"` answers, when the first message goes out: one JSON body when the response is the first thing to go out
 * (the common case: no progress, no log, no question), an SSE stream as soon as anything goes out before it. Both
 * are Streamable HTTP, and every client takes both.
 */
class Stream {
  /** The POST's requests not answered yet (none for the GET stream). */
  readonly requests = new Set<RequestId>()
  private queue: Array<Waiting> = []
  private queuedBytes = 0
  private mode: "pending" | "json" | "sse" = "pending"
  closed = false

  constructor(
    readonly res: Http.ServerResponse,
    private readonly headers: Readonly<Record<string, string>>,
    /** Told once the response has closed: its last answer taken by the socket, or its client gone first. */
    private readonly onended: (stream: Stream, premature: boolean) => void
  ) {
    res.on("drain", this.pump)
    res.once("close", () => this.onended(this, !res.writableFinished))
  }

  /** What is held for this client: waiting here, and written but not yet taken by the socket. */
  get buffered(): number {
    return this.queuedBytes + this.res.writableLength
  }

  private get congested(): boolean {
    return this.queue.length > 0 || this.res.writableNeedDrain
  }

  /** The SSE stream's head, at once. */
  openEvents(): void {
    this.mode = "sse"
    this.res.writeHead(200, { ...SSE_HEADERS, ...this.headers })
    this.res.flushHeaders()
  }

  /**
   * Writes a message at once, or once the client has read what it was sent before. `last`: nothing more goes out
   * on this stream after it (the response to its last request).
   */
  deliver(message: JSONRPCMessage, last: boolean): Promise<void> {
    if (!this.congested) {
      this.write(message, last)
      return Promise.resolve()
    }
    return new Promise((resolve) => {
      // the size only of what waits: a message written at once is never serialized twice
      const bytes = JSON.stringify(message).length
      this.queue.push({ message, last, bytes, done: resolve })
      this.queuedBytes += bytes
    })
  }

  private write(message: JSONRPCMessage, last: boolean): void {
    if (this.closed || this.res.destroyed) return
    const json = JSON.stringify(message)
    if (this.mode === "pending" && last) {
      this.mode = "json"
      this.res.writeHead(200, { "content-type": "application/json", ...this.headers })
      this.res.end(json)
      return
    }
    if (this.mode === "pending") {
      this.mode = "sse"
      this.res.writeHead(200, { ...SSE_HEADERS, ...this.headers })
    }
    this.res.write(`event: message\ndata: ${json}\n\n`)
    // the stream stays counted (what its socket has not taken) until the response has closed
    if (last) this.res.end()
  }

  private readonly pump = (): void => {
    while (!this.closed && this.queue.length > 0 && !this.res.writableNeedDrain) {
      const next = this.queue.shift()!
      this.queuedBytes -= next.bytes
      this.write(next.message, next.last)
      next.done()
    }
  }

  /** Ends the stream on our side: what waits is dropped. */
  close(): void {
    this.closed = true
    this.res.off("drain", this.pump)
    const dropped = this.queue
    this.queue = []
    this.queuedBytes = 0
    for (const waiting of dropped) waiting.done()
  }
}

/**
 * One connection's transport (a session, or one stateless request), speaking Streamable HTTP on `node:http`: every
 * message goes out through the stream it belongs to (a response and what is sent for its request on the POST's,
 * the rest on the session's GET stream), under that stream's back-pressure and the connection's bound.
 *
 * Ours, not the SDK's: the v2 SDK's server transport is built on the web's `Request`/`Response` (its `node:http`
 * glue, `@modelcontextprotocol/node`, converts every request through `@hono/node-server`), and every bound this
 * server keeps (what one session may hold unread, a client gone mid-answer) is about the socket itself.
 */
class Delivery implements Transport {
  onclose?: (() => void) | undefined
  onerror?: ((error: Error) => void) | undefined
  onmessage?: (<T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void) | undefined
  sessionId: string | undefined = undefined
  private readonly byRequest = new Map<RequestId, Stream>()
  private readonly streams = new Set<Stream>()
  private standalone: Stream | undefined
  /** Requests being handled and streams open: while above zero the connection is in use. */
  private active = 0
  private closed = false

  constructor(
    private readonly maxBufferedBytes: number,
    /** Told when the connection goes from in use to idle, and back. */
    private readonly onactivity: (idle: boolean) => void,
    /** How a POST is answered: an SSE stream opened at once, or as its first message decides (see {@link Stream}). */
    private readonly answers: "sse" | "auto" = "sse"
  ) {}

  get idle(): boolean {
    return this.active === 0
  }

  get hasStandalone(): boolean {
    return this.standalone !== undefined
  }

  private get headers(): Readonly<Record<string, string>> {
    return this.sessionId === undefined ? {} : { "mcp-session-id": this.sessionId }
  }

  start(): Promise<void> {
    return Promise.resolve()
  }

  close(): Promise<void> {
    if (this.closed) return Promise.resolve()
    this.closed = true
    for (const stream of [...this.streams]) {
      this.closeStream(stream, false)
      if (!stream.res.writableEnded) stream.res.end()
    }
    this.onclose?.()
    return Promise.resolve()
  }

  /** A request of this connection is being handled: not idle until {@link end}. */
  begin(): void {
    if (this.active++ === 0) this.onactivity(false)
  }

  end(): void {
    if (--this.active === 0) this.onactivity(true)
  }

  /**
   * A POST's one message: a request is answered on `res`; a notification or a response is taken (`202`) and handed
   * on.
   */
  post(res: Http.ServerResponse, message: JSONRPCMessage): void {
    if (JsonRpc.isRequest(message)) {
      const stream = this.open(res)
      stream.requests.add(message.id)
      this.byRequest.set(message.id, stream)
      if (this.answers === "sse") stream.openEvents()
    } else {
      res.writeHead(202, this.headers)
      res.end()
    }
    this.onmessage?.(message)
  }

  /** The session's GET stream, on `res`. */
  openStandalone(res: Http.ServerResponse): void {
    this.standalone = this.open(res)
    this.standalone.openEvents()
  }

  private open(res: Http.ServerResponse): Stream {
    const stream = new Stream(res, this.headers, (ended, premature) => this.closeStream(ended, premature))
    this.streams.add(stream)
    this.begin()
    return stream
  }

  /**
   * A stream is over: answered, ended by us, or left by its client. What waits for it is dropped; when its client
   * left before its answers, its requests are cancelled as `notifications/cancelled` would cancel them.
   */
  private closeStream(stream: Stream, premature: boolean): void {
    if (stream.closed) return
    stream.close()
    this.streams.delete(stream)
    if (this.standalone === stream) this.standalone = undefined
    for (const id of stream.requests) {
      this.byRequest.delete(id)
      if (premature) {
        this.onmessage?.({
          jsonrpc: "2.0",
          method: "notifications/cancelled",
          params: { requestId: id, reason: "the client closed the connection before the answer came" }
        })
      }
    }
    stream.requests.clear()
    this.end()
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const answered = JsonRpc.answeredId(message)
    const related = answered ?? options?.relatedRequestId
    // a message for a request whose stream is gone (its client left), or with no GET stream open: nobody can take it
    const stream = related === undefined ? this.standalone : this.byRequest.get(related)
    if (stream === undefined || stream.closed) return Promise.resolve()
    let last = false
    if (answered !== undefined) {
      stream.requests.delete(answered)
      this.byRequest.delete(answered)
      last = stream.requests.size === 0
    }
    this.bound(stream)
    if (stream.closed) return Promise.resolve()
    return stream.deliver(message, last)
  }

  /**
   * Before a message goes out: when what this connection holds for clients that have not read it (waiting here,
   * or written and not yet taken by the socket) is over its bound, the stream holding the most is ended (the one
   * this message is for, it may be), as if its client had left. A message is never refused for its own size: the
   * bound is on what has piled up before it.
   */
  private bound(target: Stream): void {
    let total = 0
    let largest = target
    for (const stream of this.streams) {
      total += stream.buffered
      if (stream.buffered > largest.buffered) largest = stream
    }
    if (total < this.maxBufferedBytes) return
    this.onerror?.(
      new Error(
        `a client read none of the last ${total} bytes sent (maxBufferedBytes ${this.maxBufferedBytes}): ` +
          "its stream was ended"
      )
    )
    this.closeStream(largest, true)
    largest.res.destroy()
  }
}

// ---------------------------------------------------------------------------------------------------------------
// the session table
// ---------------------------------------------------------------------------------------------------------------

/** One connection: a session (once initialized), or one stateless request. */
class Connection {
  server: Server | undefined = undefined
  closed = false
  /** Counted in the table's reservations until the session is initialized (or given up). */
  reserved = false
  idleTimer: ReturnType<typeof setTimeout> | undefined = undefined
  readonly delivery: Delivery

  constructor(maxBufferedBytes: number, onactivity: (idle: boolean) => void) {
    this.delivery = new Delivery(maxBufferedBytes, onactivity)
  }
}

/**
 * The sessions by id, least recently used first (a `Map` keeps insertion order, and a use moves a session to the
 * end), with the rules on their number and their idle time.
 */
class Sessions {
  private readonly byId = new Map<string, Connection>()
  /** Sessions being initialized: they count towards the cap before they have an id. */
  private initializing = 0

  constructor(
    private readonly max: number,
    private readonly idleMillis: number | undefined,
    private readonly end: (connection: Connection) => void
  ) {}

  /** A session by id, marked as just used. */
  use(id: string): Connection | undefined {
    const connection = this.byId.get(id)
    if (connection !== undefined) {
      this.byId.delete(id)
      this.byId.set(id, connection)
    }
    return connection
  }

  /**
   * Room for one more session: when the table is full, the least recently used idle session ends to make it.
   * False when every session is in use.
   */
  reserve(connection: Connection): boolean {
    if (this.byId.size + this.initializing >= this.max) {
      let evicted = false
      for (const [id, candidate] of this.byId) {
        if (!candidate.delivery.idle) continue
        this.byId.delete(id)
        this.end(candidate)
        evicted = true
        break
      }
      if (!evicted) return false
    }
    this.initializing++
    connection.reserved = true
    return true
  }

  /** A reserved session now has its id. */
  added(id: string, connection: Connection): void {
    this.release(connection)
    this.byId.set(id, connection)
  }

  release(connection: Connection): void {
    if (!connection.reserved) return
    connection.reserved = false
    this.initializing--
  }

  removed(connection: Connection): void {
    this.release(connection)
    this.clearTimer(connection)
    const id = connection.delivery.sessionId
    if (id !== undefined && this.byId.get(id) === connection) this.byId.delete(id)
  }

  /** The session went idle (its timer starts) or back in use (it stops). */
  activity(connection: Connection, idle: boolean): void {
    this.clearTimer(connection)
    if (!idle || this.idleMillis === undefined || connection.closed) return
    const timer = setTimeout(() => this.expire(connection), this.idleMillis)
    timer.unref()
    connection.idleTimer = timer
  }

  private expire(connection: Connection): void {
    connection.idleTimer = undefined
    const id = connection.delivery.sessionId
    if (id !== undefined && this.byId.get(id) === connection) this.byId.delete(id)
    this.end(connection)
  }

  private clearTimer(connection: Connection): void {
    if (connection.idleTimer === undefined) return
    clearTimeout(connection.idleTimer)
    connection.idleTimer = undefined
  }
}

// ---------------------------------------------------------------------------------------------------------------
// 2026 clients
// ---------------------------------------------------------------------------------------------------------------

const header = (req: Http.IncomingMessage, name: string): string | undefined => {
  const value = req.headers[name]
  return typeof value === "string" ? value : undefined
}

/**
 * Whether a POST is for the 2026-07-28 revision's serving (the SDK's own rule, `classifyInboundRequest`: a request
 * that claims the per-request `_meta` envelope, or whose headers say it should): its own answers, rejections
 * included. Anything else is 2025-era traffic, served here in sessions (or statelessly).
 */
const isModern = (req: Http.IncomingMessage, message: JSONRPCMessage): boolean =>
  classifyInboundRequest({
    httpMethod: "POST",
    ...optional("protocolVersionHeader", header(req, "mcp-protocol-version")),
    ...optional("mcpMethodHeader", header(req, "mcp-method")),
    ...optional("mcpNameHeader", header(req, "mcp-name")),
    body: message
  }).kind !== "legacy"

const optional = <K extends string>(key: K, value: string | undefined): { [P in K]?: string } =>
  (value === undefined ? {} : { [key]: value }) as { [P in K]?: string }

/**
 * A 2026 request, answered by the SDK's `createMcpHandler` with a server of ours made for it: the SDK checks the
 * revision (`UnsupportedProtocolVersionError`), the `Mcp-Method`/`Mcp-Name` headers against the body, the client
 * capabilities a method needs, answers `server/discover` and `subscriptions/listen`, and streams what goes out
 * before the response (progress, logs) as SSE. The body was read and checked here; the SDK takes it parsed. A
 * client that leaves before its answer aborts the request, which interrupts its call.
 */
const serveModern = async (
  handler: McpHttpHandler,
  req: Http.IncomingMessage,
  res: Http.ServerResponse,
  message: JSONRPCMessage,
  maxBufferedBytes: number
): Promise<void> => {
  const gone = new AbortController()
  res.once("close", () => {
    if (!res.writableFinished) gone.abort()
  })
  const headers = new Headers()
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value === "string") headers.set(name, value)
    else if (Array.isArray(value)) { for (const each of value) headers.append(name, each) }
  }
  const request = new Request(`http://mcp.invalid${req.url ?? "/"}`, { method: "POST", headers, signal: gone.signal })
  const response = await handler.fetch(request, { parsedBody: message })
  if (res.destroyed) {
    await response.body?.cancel().catch(() => undefined)
    return
  }
  const out: Record<string, string> = {}
  response.headers.forEach((value, name) => {
    out[name] = value
  })
  res.writeHead(response.status, out)
  if (response.body === null) return void res.end()
  const reader = response.body.getReader()
  const stop = () => void reader.cancel().catch(() => undefined)
  res.once("close", stop)
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      res.write(value)
      // a client that reads nothing of its stream loses it, as a 2025 session's would (`maxBufferedBytes`)
      if (res.writableLength > maxBufferedBytes) {
        res.destroy()
        break
      }
    }
  } catch {
    // the stream was cancelled: its client is gone
  } finally {
    res.off("close", stop)
    if (!res.destroyed) res.end()
  }
}

// ---------------------------------------------------------------------------------------------------------------
// the server
// ---------------------------------------------------------------------------------------------------------------

const urlHost = (host: string): string => (host.includes(":") && !host.startsWith("[") ? `[${host}]` : host)

export const http = <T extends Tool.Any>(
  source: Source<T>,
  options: HttpOptions
): Effect.Effect<HttpServer, McpServerError, Scope.Scope | Tool.Requirements<T>> =>
  Effect.gen(function*() {
    const settings = yield* settingsOf(options)
    const core = yield* makeCore(source, options, LogLevel.Debug)
    const { host, maxMessageBytes, path, stateless } = settings
    const guard = requestGuard(options, host)
    /** Every connection not yet closed (sessions, a session being initialized, stateless requests). */
    const open = new Set<Connection>()

    const close = async (connection: Connection): Promise<void> => {
      if (connection.closed) return
      connection.closed = true
      open.delete(connection)
      sessions.removed(connection)
      if (connection.server !== undefined) await closeServer(connection.server)
      else await connection.delivery.close().catch(() => undefined)
    }

    const sessions = new Sessions(settings.maxSessions, settings.idleMillis, (connection) => void close(connection))

    // 2026 clients: a server per request, from the SDK's own entry (see `serveModern`)
    const modern = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const handler = createMcpHandler(() => makeServer(core, { sessions: false }), {
          legacy: "reject",
          maxRequestBodySize: maxMessageBytes,
          onerror: (error) => core.transportError(error.message)
        })
        const notify = () => handler.notify.toolsChanged()
        core.onListChanged.add(notify)
        return { handler, notify }
      }),
      ({ handler, notify }) =>
        Effect.promise(() => {
          core.onListChanged.delete(notify)
          return handler.close().catch(() => undefined)
        })
    ).pipe(Effect.map(({ handler }) => handler))

    /** A connection; a session's tells the table when it goes idle and back in use. */
    const connection = (): Connection => {
      const made: Connection = new Connection(
        settings.maxBufferedBytes,
        stateless ? () => undefined : (idle) => sessions.activity(made, idle)
      )
      return made
    }

    const serve = async (connection: Connection, res: Http.ServerResponse, message: JSONRPCMessage) => {
      open.add(connection)
      connection.server = await connectServer(core, connection.delivery, {
        sessions: !stateless,
        onclose: () => {
          open.delete(connection)
          sessions.removed(connection)
        }
      })
      // closed while connecting (the client went away, or the whole server is stopping)
      if (connection.closed) return close(connection)
      connection.delivery.post(res, message)
    }

    /** A request in a session, the session marked in use while it is handled. */
    const inSession = async (connection: Connection, req: Http.IncomingMessage, res: Http.ServerResponse) => {
      const delivery = connection.delivery
      delivery.begin()
      try {
        if (req.method === "GET" && !(req.headers.accept ?? "").includes("text/event-stream")) {
          return sendJsonError(res, 406, -32000, "Not Acceptable: Client must accept text/event-stream")
        }
        const version = unsupportedVersion(req)
        if (version !== undefined) return sendJsonError(res, 400, -32000, version)
        if (req.method === "POST") {
          const message = await readMessage(req, res, maxMessageBytes)
          if (message === undefined) return
          if (connection.closed) return sendJsonError(res, 404, -32001, "Session not found")
          if (isInitialize(message)) {
            return sendJsonError(res, 400, -32600, "Invalid Request: Server already initialized", undefined, message.id)
          }
          return delivery.post(res, message)
        }
        if (req.method === "GET") {
          if (delivery.hasStandalone) {
            return sendJsonError(res, 409, -32000, "Conflict: Only one SSE stream is allowed per session")
          }
          return delivery.openStandalone(res)
        }
        // DELETE: the session ends, and its calls are interrupted
        await close(connection)
        res.writeHead(200)
        res.end()
      } finally {
        delivery.end()
      }
    }

    const handle = async (req: Http.IncomingMessage, res: Http.ServerResponse): Promise<void> => {
      const refused = guard(req)
      if (refused !== undefined) return sendJsonError(res, 403, -32000, refused)
      if (new URL(req.url ?? "/", "http://localhost").pathname !== path) {
        return sendJsonError(res, 404, -32000, `Not Found: the MCP endpoint is ${path}`)
      }
      const methods = stateless ? "POST" : "GET, POST, DELETE"
      if (!methods.split(", ").includes(req.method ?? "")) {
        return sendJsonError(res, 405, -32000, "Method not allowed.", { allow: methods })
      }
      const sessionId = stateless ? undefined : req.headers["mcp-session-id"]
      if (typeof sessionId === "string") {
        const existing = sessions.use(sessionId)
        if (existing === undefined) return sendJsonError(res, 404, -32001, "Session not found")
        return inSession(existing, req, res)
      }
      if (req.method !== "POST") {
        return sendJsonError(res, 400, -32000, "Bad Request: Mcp-Session-Id header is required")
      }
      const message = await readMessage(req, res, maxMessageBytes)
      if (message === undefined) return
      if (isModern(req, message)) return serveModern(modern, req, res, message, settings.maxBufferedBytes)
      if (stateless) {
        // a server per request; the request ending (answered or dropped) ends its calls
        const request = connection()
        res.on("close", () => void close(request))
        return serve(request, res, message)
      }
      if (!isInitialize(message)) return sendJsonError(res, 400, -32000, "Bad Request: Server not initialized")
      // a new session
      const session = connection()
      if (!sessions.reserve(session)) {
        return sendJsonError(
          res,
          503,
          -32000,
          `Service Unavailable: all ${settings.maxSessions} sessions (maxSessions) are in use; try again later`,
          { "retry-after": "5" }
        )
      }
      session.delivery.begin()
      try {
        const id = randomUUID()
        session.delivery.sessionId = id
        await serve(session, res, message)
        if (!session.closed) sessions.added(id, session)
      } finally {
        sessions.release(session)
        session.delivery.end()
      }
    }

    const server = Http.createServer((req, res) => {
      handle(req, res).catch((error: unknown) => {
        core.transportError(`${req.method} ${req.url}: ${String(error)}`)
        if (!res.headersSent) sendJsonError(res, 500, -32603, "Internal error")
        else res.destroy()
      })
    })

    const address = yield* Effect.acquireRelease(
      Effect.async<AddressInfo, McpServerError>((resume) => {
        const failed = (error: Error) =>
          resume(Effect.fail(
            new McpServerError({
              reason: "Listen",
              message: `cannot listen on ${urlHost(host)}:${settings.port}: ${error.message}`,
              cause: error
            })
          ))
        server.once("error", failed)
        server.listen(settings.port, host, () => {
          server.off("error", failed)
          server.on("error", (error) => core.transportError(`the HTTP server failed: ${error.message}`))
          resume(Effect.succeed(server.address() as AddressInfo))
        })
      }),
      () =>
        Effect.promise(async () => {
          const stopped = new Promise<void>((resolve) => server.close(() => resolve()))
          await Promise.all([...open].map(close))
          server.closeAllConnections()
          await stopped
        })
    )
    return { url: `http://${urlHost(host)}:${address.port}${path}` }
  })
