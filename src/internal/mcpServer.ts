/**
 * The MCP server's machinery, on the SDK's low-level `Server` so our own JSON Schema is what clients see.
 *
 * One `Core` per served toolkit (one `McpServer.serve`, `stdio` or `http`): the long-lived scheduler every
 * session's calls go through (so resource keys serialise calls across clients), the `FiberSet` the calls run in
 * (closing the core's scope interrupts them and waits for their finalizers), the current toolkit and the SDK
 * `Server`s attached to it (one per connection; an HTTP server has one per session, or one per request when
 * stateless), which `notifications/tools/list_changed` goes to.
 *
 * A `tools/call` runs as its own fiber, forked from the core's runtime; the SDK's `extra.signal` (aborted on
 * `notifications/cancelled` and when the connection closes) interrupts it, and the SDK sends nothing for an aborted
 * request. Inside the fiber, `currentRequest` holds the call's MCP context (session, the SDK `Server`, the SDK's
 * `extra`, the connection's log level): what `McpServer.session` reads, and where the call reaches its client from,
 * always through `extra` so that over HTTP every message goes on the stream of the request it belongs to:
 * - `Effect.log*` becomes `notifications/message` once the client set a level (`logging/setLevel`, per
 *   connection), through a logger added to the call's loggers (the host's keep logging as before);
 * - `Tool.elicit` asks the `Elicitor` provided for the call, which sends `elicitation/create` when the client
 *   declared the capability for that mode and hands the question to the host's own `Elicitor` otherwise;
 * - `McpServer.sample` sends `sampling/createMessage`.
 * A stateless HTTP request has no session a client could answer in, so it neither elicits nor samples.
 *
 * @internal
 */
import type {
  CallToolResult as SdkCallToolResult,
  JSONRPCMessage,
  JSONRPCRequest,
  MessageExtraInfo,
  RequestId,
  Result,
  ServerContext,
  StandardSchemaV1,
  Tool as SdkTool,
  Transport,
  TransportSendOptions
} from "@modelcontextprotocol/server"
import { Server } from "@modelcontextprotocol/server"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as FiberRef from "effect/FiberRef"
import * as FiberRefs from "effect/FiberRefs"
import * as FiberSet from "effect/FiberSet"
import { globalValue } from "effect/GlobalValue"
import * as HashSet from "effect/HashSet"
import * as Inspectable from "effect/Inspectable"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as SubscriptionRef from "effect/SubscriptionRef"
import { randomUUID } from "node:crypto"
import type { Readable, Writable } from "node:stream"
import * as Elicitation from "../Elicitation.js"
import type * as Tool from "../Tool.js"
import { ToolInterrupted } from "../ToolError.js"
import * as Toolkit from "../Toolkit.js"
import type * as ToolResult from "../ToolResult.js"
import type { Progress } from "./context.js"
import { currentCall } from "./context.js"
import * as Elicit from "./elicitation.js"
import * as JsonRpc from "./jsonRpc.js"
import { LineTransport } from "./lineTransport.js"
import * as Mcp from "./mcp.js"
import * as Logging from "./mcpLogging.js"
import { reasonOf } from "./reason.js"
import * as Scheduler from "./scheduler.js"
import { stderrConsole } from "./stderrConsole.js"

// ---------------------------------------------------------------------------------------------------------------
// models
// ---------------------------------------------------------------------------------------------------------------

/** A toolkit to serve: fixed, or one that changes (clients are told with `notifications/tools/list_changed`). */
export type Source<T extends Tool.Any> = Toolkit.Toolkit<T> | SubscriptionRef.SubscriptionRef<Toolkit.Toolkit<T>>

export interface Info {
  readonly name: string
  readonly version: string
  readonly title?: string | undefined
  readonly instructions?: string | undefined
}

export interface Options extends Info {
  readonly maxParallel?: number | undefined
  readonly timeout?: Duration.DurationInput | undefined
}

export interface StdioOptions extends Options {
  readonly stdin?: Readable | undefined
  readonly stdout?: Writable | undefined
  readonly maxMessageBytes?: number | undefined
}

export interface ClientInfo {
  readonly name: string
  readonly version: string
  readonly title?: string | undefined
}

export interface Session {
  readonly id: string
  readonly clientInfo: Option.Option<ClientInfo>
}

export const DEFAULT_MAX_MESSAGE_BYTES = 8 * 1024 * 1024

export class McpServerError extends Schema.TaggedError<McpServerError>("effect-agent-tools/McpServerError")(
  "McpServerError",
  {
    /** `Options`: an option is out of range; `Listen`: the HTTP server could not listen; `Transport`: it could not start. */
    reason: Schema.Literal("Options", "Listen", "Transport"),
    message: Schema.String,
    cause: Schema.optional(Schema.Defect)
  }
) {}

/** The SDK's context of one request: its id, signal, `_meta`, and the channel back to its client. */
export type Extra = ServerContext

/** What one connection (one SDK `Server`) keeps between requests. */
export interface ConnectionState {
  /** The level the client set with `logging/setLevel`; none until it does, and then no log reaches it. */
  level: Logging.McpLevel | undefined
}

/** The MCP side of the call a fiber is serving. */
export interface RequestContext {
  /** Undefined for a stateless HTTP request, which belongs to no session. */
  readonly session: Session | undefined
  readonly server: Server
  readonly extra: Extra
  readonly connection: ConnectionState
}

export const currentRequest: FiberRef.FiberRef<RequestContext | undefined> = globalValue(
  Symbol.for("effect-agent-tools/McpServer/currentRequest"),
  () => FiberRef.unsafeMake<RequestContext | undefined>(undefined)
)

export const session: Effect.Effect<Option.Option<Session>> = Effect.map(
  FiberRef.get(currentRequest),
  (request) => Option.fromNullable(request?.session)
)

/**
 * How long a request to the client (a question for a person, a model's answer) may take, as far as the SDK is
 * concerned: the longest delay a timer takes. The call's own timeout and its cancellation bound the wait; the
 * SDK's default (a minute) would cut a person off mid-thought.
 */
const NO_TIMEOUT_MILLIS = 2_147_483_647

/** The JSON-RPC error code of the answer made up for a request of ours the client can no longer answer. */
const CONNECTION_CLOSED = -32000

// ---------------------------------------------------------------------------------------------------------------
// in a call: logging
// ---------------------------------------------------------------------------------------------------------------

/** A log's message as one text: strings as they are, anything else as Effect renders it; a cause below. */
const logText = (message: unknown, cause: Cause.Cause<unknown>): string => {
  const parts = Array.isArray(message) ? message : [message]
  const text = parts.map((part) => (typeof part === "string" ? part : Inspectable.toStringUnknown(part))).join(" ")
  return Cause.isEmpty(cause) ? text : `${text}\n${Cause.pretty(cause)}`
}

/**
 * Sends a call's logs to its client as `notifications/message` (`logger` is the tool's name), at or above the
 * level the client set; nothing before it sets one.
 */
const clientLogger = Logger.make<unknown, void>(({ cause, context, logLevel, message }) => {
  const request = FiberRefs.getOrDefault(context, currentRequest)
  const threshold = request?.connection.level
  if (request === undefined || threshold === undefined || !Logging.passes(logLevel, threshold)) return
  const call = FiberRefs.getOrDefault(context, currentCall)
  request.extra.mcpReq.notify({
    method: "notifications/message",
    params: {
      level: Logging.toMcp(logLevel),
      ...(call === undefined ? {} : { logger: call.name }),
      data: logText(message, cause)
    }
  }).catch(() => undefined) // the client is gone: its logs go with it
})

/**
 * Adds the client logger to a call. When the client asked for more detail than the host logs (`debug` under
 * Effect's default `Info`), the call runs at the lower minimum and the host's loggers keep their own.
 */
const withClientLogging = <A, E, R>(self: Effect.Effect<A, E, R>, connection: ConnectionState) =>
  Effect.flatMap(FiberRef.get(FiberRef.currentMinimumLogLevel), (minimum) => {
    const threshold = connection.level
    const wanted = threshold === undefined ? undefined : Logging.lowestWanted(threshold)
    if (wanted === undefined || LogLevel.greaterThanEqual(wanted, minimum)) {
      return Effect.locallyWith(self, FiberRef.currentLoggers, HashSet.add(clientLogger))
    }
    const hostLevel = (level: LogLevel.LogLevel) => LogLevel.greaterThanEqual(level, minimum)
    return self.pipe(
      Effect.locallyWith(
        FiberRef.currentLoggers,
        (loggers) => HashSet.add(HashSet.map(loggers, Logger.filterLogLevel(hostLevel)), clientLogger)
      ),
      Effect.locally(FiberRef.currentMinimumLogLevel, wanted)
    )
  })

// ---------------------------------------------------------------------------------------------------------------
// in a call: elicitation
// ---------------------------------------------------------------------------------------------------------------

/** An error's reason without the `MCP error <code>: ` the SDK puts before it each time it crosses a wire. */
const unprefixed = (error: unknown): string => reasonOf(error).replace(/^(?:MCP error -?\d+: )+/, "")

/**
 * The `Elicitor` of a call: the calling client when it declared the capability for the question's mode (`{}` is
 * a form-only client, as MCP says), else whoever the host provided, else nobody (`Cancel`).
 */
const clientElicitor = (
  server: Server,
  extra: Extra,
  host: Option.Option<Elicitation.Elicitor["Type"]>
): Elicitation.Elicitor["Type"] => ({
  elicit: (request) => {
    const capability = server.getClientCapabilities()?.elicitation
    const able = request.mode === "url" ? capability?.url !== undefined : capability?.form !== undefined
    if (!able) return Option.isSome(host) ? host.value.elicit(request) : Effect.succeed(Elicitation.cancel)
    return Effect.tryPromise({
      try: (signal) =>
        extra.mcpReq.send(
          { method: "elicitation/create", params: Elicit.toParams(request, randomUUID) },
          { signal, timeout: NO_TIMEOUT_MILLIS }
        ),
      catch: (cause) =>
        new Elicitation.ElicitationError({
          message: `the MCP client could not be asked: ${unprefixed(cause)}`,
          cause
        })
    }).pipe(Effect.map(Elicit.fromElicitResult))
  }
})

// ---------------------------------------------------------------------------------------------------------------
// in a call: sampling
// ---------------------------------------------------------------------------------------------------------------

/** What a model may be shown and may answer: text, an image, audio. */
export type SamplingContent =
  | typeof ToolResult.TextContent.Type
  | typeof ToolResult.ImageContent.Type
  | typeof ToolResult.AudioContent.Type

export interface SamplingMessage {
  readonly role: "user" | "assistant"
  readonly content: SamplingContent
}

export interface ModelPreferences {
  readonly hints?: ReadonlyArray<{ readonly name?: string | undefined }> | undefined
  readonly costPriority?: number | undefined
  readonly speedPriority?: number | undefined
  readonly intelligencePriority?: number | undefined
}

export interface SamplingRequest {
  readonly messages: ReadonlyArray<SamplingMessage>
  readonly maxTokens: number
  readonly systemPrompt?: string | undefined
  readonly temperature?: number | undefined
  readonly stopSequences?: ReadonlyArray<string> | undefined
  readonly modelPreferences?: ModelPreferences | undefined
  readonly includeContext?: "none" | "thisServer" | "allServers" | undefined
  readonly metadata?: { readonly [key: string]: unknown } | undefined
}

export interface SamplingResult {
  readonly role: "user" | "assistant"
  readonly content: SamplingContent
  readonly model: string
  readonly stopReason?: string | undefined
}

export class SamplingError extends Schema.TaggedError<SamplingError>("effect-agent-tools/SamplingError")(
  "SamplingError",
  {
    reason: Schema.Literal("Unavailable", "Unsupported", "Failed"),
    message: Schema.String,
    cause: Schema.optional(Schema.Defect)
  }
) {}

const definedOnly = (fields: Record<string, unknown>): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) out[key] = value
  return out
}

export const sample = (request: SamplingRequest): Effect.Effect<SamplingResult, SamplingError> =>
  Effect.flatMap(FiberRef.get(currentRequest), (context) => {
    if (context === undefined || context.session === undefined) {
      return Effect.fail(
        new SamplingError({
          reason: "Unavailable",
          message: context === undefined
            ? "sampling needs an MCP client to ask: McpServer.sample works only in a call served over MCP"
            : "sampling needs a session: a stateless HTTP request has no client to answer it"
        })
      )
    }
    const server = context.server
    if (server.getClientCapabilities()?.sampling === undefined) {
      const client = server.getClientVersion()?.name
      return Effect.fail(
        new SamplingError({
          reason: "Unsupported",
          message: `the MCP client${client === undefined ? "" : ` ${JSON.stringify(client)}`} does not offer sampling`
        })
      )
    }
    const params = definedOnly({
      messages: request.messages,
      maxTokens: request.maxTokens,
      systemPrompt: request.systemPrompt,
      temperature: request.temperature,
      stopSequences: request.stopSequences,
      modelPreferences: request.modelPreferences,
      includeContext: request.includeContext,
      metadata: request.metadata
    })
    return Effect.tryPromise({
      try: (signal) =>
        context.extra.mcpReq.send(
          { method: "sampling/createMessage", params: params as never },
          { signal, timeout: NO_TIMEOUT_MILLIS }
        ),
      catch: (cause) => new SamplingError({ reason: "Failed", message: `sampling failed: ${unprefixed(cause)}`, cause })
    }).pipe(
      Effect.map((result): SamplingResult => ({
        role: result.role,
        content: result.content as SamplingContent,
        model: result.model,
        ...(result.stopReason === undefined ? {} : { stopReason: result.stopReason })
      }))
    )
  })

// ---------------------------------------------------------------------------------------------------------------
// the core: scheduler, calls, toolkit, attached servers
// ---------------------------------------------------------------------------------------------------------------

export interface Core {
  readonly options: Options
  readonly listChanged: boolean
  readonly toolkit: () => Toolkit.Toolkit<Tool.Any>
  /** The SDK servers currently attached, told when the toolkit changes. */
  readonly servers: Set<Server>
  readonly scheduler: Scheduler.Scheduler
  readonly runCall: (effect: Effect.Effect<SdkCallToolResult>) => Fiber.RuntimeFiber<SdkCallToolResult>
  /** What the SDK reports going wrong on a connection (bad input, a response with no one to take it). */
  readonly transportError: (message: string) => void
}

export const makeCore = <T extends Tool.Any>(
  source: Source<T>,
  options: Options,
  /** Debug over HTTP, where any client on the network can send junk; a warning where the peer is the host's own. */
  transportErrors: LogLevel.LogLevel
): Effect.Effect<Core, never, Scope.Scope | Tool.Requirements<T>> =>
  Effect.gen(function*() {
    // made first, so closed last: by then every server is closed and every call aborted
    const calls = yield* FiberSet.make<SdkCallToolResult>()
    const runCall = yield* FiberSet.runtime(calls)<Tool.Requirements<T>>()
    const runtime = yield* Effect.runtime<never>()
    const scheduler = yield* Scheduler.make({ maxParallel: options.maxParallel, timeout: options.timeout })
    const servers = new Set<Server>()
    const current: { kit: Toolkit.Toolkit<Tool.Any> | undefined } = { kit: undefined }
    const listChanged = !Toolkit.isToolkit(source)
    if (Toolkit.isToolkit(source)) {
      current.kit = source
    } else {
      // `changes` starts with the current value; the core is ready once we have it, so no later change is missed
      const ready = yield* Deferred.make<void>()
      yield* source.changes.pipe(
        Stream.runForEach((kit) =>
          Effect.suspend(() => {
            const previous = current.kit
            current.kit = kit
            if (previous !== undefined && previous !== kit) {
              for (const server of servers) {
                server.sendToolListChanged().catch(() => undefined)
              }
            }
            return Deferred.succeed(ready, undefined)
          })
        ),
        Effect.forkScoped
      )
      yield* Deferred.await(ready)
    }
    return {
      options,
      listChanged,
      toolkit: () => current.kit!,
      servers,
      scheduler,
      runCall: runCall as unknown as Core["runCall"],
      transportError: (message) =>
        Runtime.runSync(runtime, Effect.logWithLevel(transportErrors, `MCP server ${options.name}: ${message}`))
    }
  })

// ---------------------------------------------------------------------------------------------------------------
// one connection: an SDK Server with our two handlers
// ---------------------------------------------------------------------------------------------------------------

const clientInfoOf = (server: Server): Option.Option<ClientInfo> => {
  const info = server.getClientVersion()
  if (info === undefined) return Option.none()
  return Option.some(
    info.title === undefined
      ? { name: info.name, version: info.version }
      : { name: info.name, version: info.version, title: info.title }
  )
}

/**
 * `notifications/progress` for a request that carries a progress token. MCP wants `progress` to grow with each
 * notification; a report without a number counts as the next step.
 */
const progressReporter = (extra: Extra): ((progress: Progress) => Effect.Effect<void>) | undefined => {
  const token = extra.mcpReq._meta?.progressToken
  if (token === undefined) return undefined
  let last = 0
  return (progress) =>
    Effect.promise(() => {
      last = progress.progress ?? last + 1
      return extra.mcpReq.notify({
        method: "notifications/progress",
        params: {
          progressToken: token,
          progress: last,
          ...(progress.total === undefined ? {} : { total: progress.total }),
          ...(progress.message === undefined ? {} : { message: progress.message })
        }
      }).catch(() => undefined) // the client is gone: the call goes on until it is cancelled
    })
}

/** The call's own elicitor (none for a stateless request) and logger, around the call. */
const inCall = <A, E, R>(self: Effect.Effect<A, E, R>, context: RequestContext): Effect.Effect<A, E, R> => {
  const logged = withClientLogging(self, context.connection)
  if (context.session === undefined) return logged
  return Effect.flatMap(
    Effect.serviceOption(Elicitation.Elicitor),
    (host) => Effect.provideService(logged, Elicitation.Elicitor, clientElicitor(context.server, context.extra, host))
  )
}

const serveCall = (
  core: Core,
  server: Server,
  connection: ConnectionState,
  session: Session | undefined,
  params: { readonly name: string; readonly arguments?: unknown },
  extra: Extra
): Promise<SdkCallToolResult> => {
  const name = params.name
  const callId = `${session?.id ?? randomUUID()}/${String(extra.mcpReq.id)}`
  const signal = extra.mcpReq.signal
  if (signal.aborted) return Promise.resolve(interrupted(name))
  const toolkit = core.toolkit()
  const structured = toolkit.byName.get(name)?.outputSchema !== undefined
  const call = { id: callId, name, arguments: params.arguments }
  const onProgress = progressReporter(extra)
  // A call that can start at once is started here; one whose handler answers with a value (or that is refused) is
  // answered with no fiber at all. Such a handler runs no effect, so it needs none of the call's MCP context.
  const now = core.scheduler.tryNow(toolkit, call, { onProgress })
  if (now !== undefined && Either.isEither(now)) {
    return Promise.resolve(Mcp.toCallToolResult(now, { structured }) as SdkCallToolResult)
  }
  const context: RequestContext = { session, server, extra, connection }
  let program = inCall(
    Effect.map(
      now ?? core.scheduler.run(toolkit, call, { onProgress }),
      (outcome) => Mcp.toCallToolResult(outcome, { structured }) as SdkCallToolResult
    ),
    context
  )
  if (core.scheduler.traced) {
    program = Effect.withSpan(program, "McpServer.call", {
      kind: "server",
      attributes: {
        "tool.name": name,
        "tool.call_id": callId,
        ...(session === undefined ? {} : { "mcp.session_id": session.id })
      }
    })
  }
  program = Effect.locally(program, currentRequest, context)
  return new Promise((resolve, reject) => {
    // started at once (`runFork` is immediate): the slot `tryNow` took is given back by `program`'s own finalizer
    const fiber = core.runCall(program as Effect.Effect<SdkCallToolResult>)
    const abort = () => fiber.unsafeInterruptAsFork(FiberId.none)
    signal.addEventListener("abort", abort, { once: true })
    fiber.addObserver((exit) => {
      signal.removeEventListener("abort", abort)
      if (Exit.isSuccess(exit)) return resolve(exit.value)
      // Cancelled by the client: the SDK sends nothing. Interrupted because the server is stopping while the
      // connection is still up: the client reads that the call was cancelled.
      if (Cause.isInterruptedOnly(exit.cause)) return resolve(interrupted(name))
      reject(Cause.squash(exit.cause))
    })
  })
}

const interrupted = (tool: string): SdkCallToolResult =>
  Mcp.toCallToolResult(Either.left(new ToolInterrupted({ tool })), { structured: false }) as SdkCallToolResult

/**
 * `tools/call` params as the handler takes them: any JSON in `arguments`. The SDK checks a `tools/call` against its
 * strict schema, which refuses `arguments` that are not an object as a protocol error (a JSON-RPC error the model
 * never sees); taking any value lets our argument check answer it as `invalid arguments: expected a JSON object,
 * got an array`, an `isError` result the model can act on (SEP-1303). The rest of the params (`name` a string,
 * `_meta`) were checked on the wire (`jsonRpc.check`).
 */
const AnyCallToolParams: StandardSchemaV1<CallToolParams, CallToolParams> = {
  "~standard": {
    version: 1,
    vendor: "effect-agent-tools",
    validate: (value) => ({ value: value as CallToolParams })
  }
}

interface CallToolParams {
  readonly name: string
  readonly arguments?: unknown
}

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * The SDK's `Server`, with one change: a `tools/call` whose `arguments` are not an object skips the SDK's strict
 * check of the request (see {@link AnyCallToolParams}); every other request goes through the SDK's own wrapping.
 */
class ToolServer extends Server {
  protected override _wrapHandler(
    method: string,
    handler: (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result>
  ): (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result> {
    const wrapped = super._wrapHandler(method, handler)
    if (method !== "tools/call") return wrapped
    return (request, ctx) => {
      const args = (request.params as { arguments?: unknown } | undefined)?.arguments
      return args === undefined || isObject(args) ? wrapped(request, ctx) : handler(request, ctx)
    }
  }
}

/** A new SDK server for one connection; `sessions: false` for a stateless request, which has no session. */
const makeServer = (core: Core, options: { readonly sessions: boolean }): Server => {
  const { instructions, name, title, version } = core.options
  const server = new ToolServer(
    { name, version, ...(title === undefined ? {} : { title }) },
    {
      capabilities: { tools: core.listChanged ? { listChanged: true } : {}, logging: {} },
      ...(instructions === undefined ? {} : { instructions })
    }
  )
  // a transport without session ids (stdio, in-memory) is one session
  const connectionId = randomUUID()
  const connection: ConnectionState = { level: undefined }
  // ours, not the SDK's (which keeps levels by session id in a private map): the calls read it through `context`
  server.setRequestHandler("logging/setLevel", (request) => {
    connection.level = request.params.level
    return {}
  })
  server.setRequestHandler("tools/list", () => ({
    tools: Toolkit.definitions(core.toolkit(), "mcp") as unknown as Array<SdkTool>
  }))
  server.setRequestHandler("tools/call", { params: AnyCallToolParams }, (params, ctx) =>
    serveCall(
      core,
      server,
      connection,
      options.sessions ? { id: ctx.sessionId ?? connectionId, clientInfo: clientInfoOf(server) } : undefined,
      params,
      ctx
    ))
  server.onerror = (error) => core.transportError(error.message)
  return server
}

/** Connects a new server to a transport; the server is told about toolkit changes until it closes. */
export const connectServer = async (core: Core, transport: Transport, options: {
  readonly sessions: boolean
  readonly onclose?: (() => void) | undefined
}): Promise<Server> => {
  const server = makeServer(core, options)
  server.onclose = () => {
    core.servers.delete(server)
    options.onclose?.()
  }
  await server.connect(transport)
  core.servers.add(server)
  return server
}

export const closeServer = (server: Server): Promise<void> => server.close().catch(() => undefined)

const attach = (
  core: Core,
  transport: Transport,
  onclose?: () => void
): Effect.Effect<Server, McpServerError, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: () => connectServer(core, transport, { sessions: true, onclose }),
      catch: (cause) =>
        new McpServerError({
          reason: "Transport",
          message: `cannot start the MCP transport: ${reasonOf(cause)}`,
          cause
        })
    }),
    (server) => Effect.promise(() => closeServer(server))
  )

// ---------------------------------------------------------------------------------------------------------------
// any transport
// ---------------------------------------------------------------------------------------------------------------

export const serve = <T extends Tool.Any>(
  source: Source<T>,
  options: Options,
  transport: Transport
): Effect.Effect<void, McpServerError, Scope.Scope | Tool.Requirements<T>> =>
  Effect.flatMap(makeCore(source, options, LogLevel.Warning), (core) =>
    Effect.asVoid(
      attach(core, new Wire(transport, (reason) => core.transportError(`refused a message: ${reason}`)))
    ))

// ---------------------------------------------------------------------------------------------------------------
// stdio
// ---------------------------------------------------------------------------------------------------------------

/**
 * Our side of a connection's wire, around any transport: every message a client sends is checked first
 * (`jsonRpc.check`), and one that is refused is answered there with a JSON-RPC error (a request) or logged (a
 * notification or a response), so the SDK only ever sees messages it can serve.
 *
 * It also knows which requests it has not answered yet, so a server whose input ended can answer every request it
 * read (tools/list as much as tools/call) before it stops. A cancelled request needs no answer. And it knows which
 * of its own requests (a question for the user, a sampling request) the client has not answered: once input has
 * ended no answer can come, so each fails at once (and any sent later), and the call waiting on it can end and be
 * answered.
 */
class Wire implements Transport {
  onclose?: (() => void) | undefined
  onerror?: ((error: Error) => void) | undefined
  onmessage?: (<T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void) | undefined
  private readonly pending = new Set<RequestId>()
  /** Refusals being written: answers too, for `allAnswered`. */
  private refusing = 0
  private waiting: Array<() => void> = []
  /** Our requests to the client not answered yet. */
  private readonly asked = new Set<RequestId>()
  private inputEnded = false

  constructor(private readonly inner: Transport, private readonly refused: (reason: string) => void) {}

  get sessionId(): string | undefined {
    return this.inner.sessionId
  }

  start(): Promise<void> {
    this.inner.onmessage = (raw, extra) => {
      const checked = JsonRpc.check(raw)
      if (checked._tag === "Refused") return this.refuse(checked.refusal)
      const message = checked.message
      if (JsonRpc.isRequest(message)) this.pending.add(message.id)
      else if (JsonRpc.isNotification(message)) {
        if (message.method === "notifications/cancelled") {
          const id = (message.params as { requestId?: RequestId } | undefined)?.requestId
          if (id !== undefined) this.answered(id)
        }
      } else {
        const id = JsonRpc.answeredId(message)
        if (id !== undefined) this.asked.delete(id)
      }
      this.onmessage?.(message, extra)
    }
    this.inner.onclose = () => this.onclose?.()
    this.inner.onerror = (error) => this.onerror?.(error)
    return this.inner.start()
  }

  private refuse(refusal: JsonRpc.Refusal): void {
    this.refused(refusal.message)
    if (refusal.id === undefined) return
    this.refusing++
    this.inner.send(JsonRpc.errorResponse(refusal)).catch(() => undefined).finally(() => {
      this.refusing--
      this.wake()
    })
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if (JsonRpc.isRequest(message)) {
      if (this.inputEnded) {
        this.unanswerable(message.id)
        return Promise.resolve()
      }
      this.asked.add(message.id)
    }
    const sent = this.inner.send(message, options)
    const id = JsonRpc.answeredId(message)
    return id === undefined ? sent : sent.then(() => this.answered(id))
  }

  /** No more input: the client can answer none of our requests, sent or still to be sent. */
  endOfInput(): void {
    this.inputEnded = true
    for (const id of [...this.asked]) this.unanswerable(id)
  }

  private unanswerable(id: RequestId): void {
    this.asked.delete(id)
    // a message of its own turn, as an answer read from the client would be
    queueMicrotask(() =>
      this.onmessage?.({
        jsonrpc: "2.0",
        id,
        error: { code: CONNECTION_CLOSED, message: "the client closed its input before answering" }
      })
    )
  }

  close(): Promise<void> {
    return this.inner.close()
  }

  /** Resolves once every request read so far has been answered. */
  allAnswered(): Promise<void> {
    if (this.pending.size === 0 && this.refusing === 0) return Promise.resolve()
    return new Promise((resolve) => this.waiting.push(resolve))
  }

  private answered(id: RequestId): void {
    if (this.pending.delete(id)) this.wake()
  }

  private wake(): void {
    if (this.pending.size > 0 || this.refusing > 0) return
    const waiting = this.waiting
    this.waiting = []
    for (const resolve of waiting) resolve()
  }
}

export const stdio = <T extends Tool.Any>(
  source: Source<T>,
  options: StdioOptions
): Effect.Effect<void, McpServerError, Tool.Requirements<T>> =>
  Effect.scoped(Effect.gen(function*() {
    const core = yield* makeCore(source, options, LogLevel.Warning)
    const input = options.stdin ?? process.stdin
    const output = options.stdout ?? process.stdout
    const transport = new Wire(
      new LineTransport(input, output, options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES),
      (reason) => core.transportError(`refused a message: ${reason}`)
    )
    // "ended": no more input, answer what was read; "closed": the transport gave up (or stdout broke), stop now
    const stop = yield* Deferred.make<"ended" | "closed">()
    const ended = () => Deferred.unsafeDone(stop, Exit.succeed("ended" as const))
    const closed = () => Deferred.unsafeDone(stop, Exit.succeed("closed" as const))
    const broken = (error: Error) => {
      core.transportError(`stdout failed: ${error.message}`)
      closed()
    }
    yield* Effect.acquireRelease(
      Effect.sync(() => {
        input.on("end", ended)
        input.on("close", ended)
        output.on("error", broken)
        if (input.readableEnded) ended()
      }),
      () =>
        Effect.sync(() => {
          input.off("end", ended)
          input.off("close", ended)
          output.off("error", broken)
        })
    )
    yield* attach(core, transport, closed)
    if ((yield* Deferred.await(stop)) === "ended") {
      transport.endOfInput()
      yield* Effect.promise(() => transport.allAnswered())
    }
  })).pipe(Effect.withConsole(stderrConsole()))
