/**
 * `McpServer.http`: Streamable HTTP on `node:http`, with the SDK's transport speaking the protocol and our side
 * holding everything an attacker could make grow:
 *
 * - the request: `Host`/`Origin` (DNS rebinding), path and method, then the body, read here within
 *   `maxMessageBytes`, parsed and checked message by message (`jsonRpc.check`), so the SDK only ever gets a
 *   message it can serve (as `parsedBody`);
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
import type { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import type { Transport, TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js"
import type { JSONRPCMessage, MessageExtraInfo, RequestId } from "@modelcontextprotocol/sdk/types.js"
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
import { closeServer, connectServer, DEFAULT_MAX_MESSAGE_BYTES, makeCore, McpServerError } from "./mcpServer.js"

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

const isInitialize = (message: JSONRPCMessage): boolean => JsonRpc.isRequest(message) && message.method === "initialize"

// ---------------------------------------------------------------------------------------------------------------
// the answers: streams, back-pressure, disconnects
// ---------------------------------------------------------------------------------------------------------------

/** What the SDK's HTTP transport takes as send options (declared without `| undefined`). */
type SdkSendOptions = Parameters<StreamableHTTPServerTransport["send"]>[1]

interface Waiting {
  readonly message: JSONRPCMessage
  readonly options: TransportSendOptions | undefined
  readonly bytes: number
  readonly done: () => void
}

/** One open response the server writes messages on: a POST's answers, or a session's GET stream. */
class Stream {
  /** The POST's requests not answered yet (none for the GET stream). */
  readonly requests = new Set<RequestId>()
  private queue: Array<Waiting> = []
  private queuedBytes = 0
  closed = false

  constructor(
    readonly res: Http.ServerResponse,
    private readonly forward: (message: JSONRPCMessage, options: TransportSendOptions | undefined) => Promise<void>,
    onclose: (stream: Stream) => void
  ) {
    res.on("drain", this.pump)
    res.once("close", () => {
      if (!this.closed) onclose(this)
    })
  }

  /** What is held for this client: waiting here, and written but not yet taken by the socket. */
  get buffered(): number {
    return this.queuedBytes + this.res.writableLength
  }

  private get congested(): boolean {
    return this.queue.length > 0 || this.res.writableNeedDrain
  }

  /** Hands a message on at once, or once the client has read what it was sent before. */
  deliver(message: JSONRPCMessage, options: TransportSendOptions | undefined): Promise<void> {
    if (!this.congested) return this.forward(message, options)
    return new Promise((resolve) => {
      // the size only of what waits: a message handed on at once is never serialized twice
      const bytes = JSON.stringify(message).length
      this.queue.push({ message, options, bytes, done: resolve })
      this.queuedBytes += bytes
    })
  }

  private readonly pump = (): void => {
    if (this.closed || this.queue.length === 0 || this.res.writableNeedDrain) return
    const next = this.queue.shift()!
    this.queuedBytes -= next.bytes
    this.forward(next.message, next.options).then(next.done, next.done)
    // the SDK writes it on a later turn: look again once it has
    if (this.queue.length > 0) setImmediate(this.pump)
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
 * One connection's transport (a session, or one stateless request): the SDK's, with our streams in front of it.
 * It knows which stream each request came on, so every message goes out through the stream it belongs to (a
 * response and what is sent for its request on the POST's, the rest on the session's GET stream), under that
 * stream's back-pressure and the connection's bound.
 */
class Delivery implements Transport {
  onclose?: (() => void) | undefined
  onerror?: ((error: Error) => void) | undefined
  onmessage?: (<T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void) | undefined
  private readonly byRequest = new Map<RequestId, Stream>()
  private readonly streams = new Set<Stream>()
  private standalone: Stream | undefined
  /** Requests being handled and streams open: while above zero the connection is in use. */
  private active = 0

  constructor(
    readonly inner: StreamableHTTPServerTransport,
    private readonly maxBufferedBytes: number,
    /** Told when the connection goes from in use to idle, and back. */
    private readonly onactivity: (idle: boolean) => void
  ) {}

  get sessionId(): string | undefined {
    return this.inner.sessionId
  }

  get idle(): boolean {
    return this.active === 0
  }

  get hasStandalone(): boolean {
    return this.standalone !== undefined
  }

  start(): Promise<void> {
    this.inner.onmessage = (message, extra) => this.onmessage?.(message, extra)
    this.inner.onclose = () => this.onclose?.()
    this.inner.onerror = (error) => this.onerror?.(error)
    return this.inner.start()
  }

  close(): Promise<void> {
    for (const stream of [...this.streams]) this.closeStream(stream, false)
    return this.inner.close()
  }

  /** A request of this connection is being handled: not idle until {@link end}. */
  begin(): void {
    if (this.active++ === 0) this.onactivity(false)
  }

  end(): void {
    if (--this.active === 0) this.onactivity(true)
  }

  /** A POST whose requests are answered on `res`. */
  openPost(res: Http.ServerResponse, message: JSONRPCMessage): void {
    if (!JsonRpc.isRequest(message)) return
    const stream = this.open(res)
    stream.requests.add(message.id)
    this.byRequest.set(message.id, stream)
  }

  /** The session's GET stream, on `res`. */
  openStandalone(res: Http.ServerResponse): void {
    this.standalone = this.open(res)
  }

  private open(res: Http.ServerResponse): Stream {
    const stream = new Stream(
      res,
      (message, options) => this.inner.send(message, options as SdkSendOptions).catch(() => undefined),
      (closed) => this.closeStream(closed, !res.writableFinished)
    )
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
    const stream = related === undefined ? this.standalone : this.byRequest.get(related)
    if (stream === undefined) {
      // a message for a request whose stream is gone (its client left): nobody can take it
      if (related !== undefined) return Promise.resolve()
      // no GET stream open: the SDK's transport drops it
      return this.inner.send(message, options as SdkSendOptions).catch(() => undefined)
    }
    if (answered !== undefined) {
      stream.requests.delete(answered)
      this.byRequest.delete(answered)
    }
    this.bound(stream)
    return stream.closed ? Promise.resolve() : stream.deliver(message, options)
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

  constructor(transport: StreamableHTTPServerTransport, maxBufferedBytes: number, onactivity: (idle: boolean) => void) {
    this.delivery = new Delivery(transport, maxBufferedBytes, onactivity)
  }

  get transport(): StreamableHTTPServerTransport {
    return this.delivery.inner
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
    const id = connection.transport.sessionId
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
    const id = connection.transport.sessionId
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

    /** A connection; a session's tells the table when it goes idle and back in use. */
    const connection = (transport: StreamableHTTPServerTransport): Connection => {
      const made: Connection = new Connection(
        transport,
        settings.maxBufferedBytes,
        stateless ? () => undefined : (idle) => sessions.activity(made, idle)
      )
      return made
    }

    const serve = async (
      connection: Connection,
      req: Http.IncomingMessage,
      res: Http.ServerResponse,
      message: JSONRPCMessage
    ) => {
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
      connection.delivery.openPost(res, message)
      await connection.transport.handleRequest(req, res, message)
    }

    /** A request in a session, the session marked in use while it is handled. */
    const inSession = async (connection: Connection, req: Http.IncomingMessage, res: Http.ServerResponse) => {
      const delivery = connection.delivery
      delivery.begin()
      try {
        if (req.method === "POST") {
          const message = await readMessage(req, res, maxMessageBytes)
          if (message === undefined || connection.closed) {
            return connection.closed ? sendJsonError(res, 404, -32001, "Session not found") : undefined
          }
          delivery.openPost(res, message)
          return await connection.transport.handleRequest(req, res, message)
        }
        if (req.method === "GET") {
          if (delivery.hasStandalone) {
            return sendJsonError(res, 409, -32000, "Conflict: Only one SSE stream is allowed per session")
          }
          delivery.openStandalone(res)
        }
        return await connection.transport.handleRequest(req, res)
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
      if (stateless) {
        const message = await readMessage(req, res, maxMessageBytes)
        if (message === undefined) return
        // a transport and a server per request; the request ending (answered or dropped) ends its calls
        const request = connection(new StreamableHTTPServerTransport({ maxRequestBodySize: maxMessageBytes }))
        res.on("close", () => void close(request))
        return serve(request, req, res, message)
      }
      const sessionId = req.headers["mcp-session-id"]
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
      if (!isInitialize(message)) return sendJsonError(res, 400, -32000, "Bad Request: Server not initialized")
      // a new session
      const session: Connection = connection(
        new StreamableHTTPServerTransport({
          sessionIdGenerator: randomUUID,
          maxRequestBodySize: maxMessageBytes,
          onsessioninitialized: (id) => sessions.added(id, session)
        })
      )
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
        await serve(session, req, res, message)
      } finally {
        sessions.release(session)
        session.delivery.end()
      }
      if (session.transport.sessionId === undefined) await close(session)
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
