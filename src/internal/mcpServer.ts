/**
 * The MCP server's machinery, on the SDK's low-level `Server` so our own JSON Schema is what clients see.
 *
 * One `Core` per served toolkit (one `McpServer.serve`, `stdio` or `http`): the long-lived scheduler every
 * session's calls go through (so resource keys serialise calls across clients), the `FiberSet` the calls run in
 * (closing the core's scope interrupts them and waits for their finalizers), the current toolkit and the SDK
 * `Server`s attached to it (one per connection; an HTTP server has one per session, or one per request when
 * stateless), which `notifications/tools/list_changed` goes to.
 *
 * Both protocol eras: a server instance's era is the SDK's to bind (an `initialize` makes it a 2025 server; the
 * SDK's `serveStdio`, which every connection here goes through, and `createMcpHandler`, which answers a 2026 HTTP
 * request, bind a 2026 one), and one `tools/call` handler serves both: `serveCall` for a 2025 client,
 * `serveModernCall` for a 2026 one (its rounds in `mcpRounds.ts`).
 *
 * A `tools/call` runs as its own fiber, forked from the core's runtime; the SDK's `ctx.mcpReq.signal` (aborted on
 * `notifications/cancelled` and when the connection closes) interrupts it, and the SDK sends nothing for an aborted
 * request. Inside the fiber, `currentRequest` holds the call's MCP context (session, the SDK `Server`, the SDK's
 * request context, the log level): what `McpServer.session` reads, and where the call reaches its client from,
 * always through the request's context so that over HTTP every message goes on the stream of the request it belongs
 * to (for a 2026 call, the round's request):
 * - `Effect.log*` becomes `notifications/message` once the client set a level (`logging/setLevel` per connection
 *   in 2025, the request's `_meta` in 2026), through a logger added to the call's loggers (the host's keep logging);
 * - `Tool.elicit` asks the `Elicitor` provided for the call: a 2025 client that declared the capability for that
 *   mode gets `elicitation/create`, a 2026 one an entry of the round's `inputRequests`; else the host's own
 *   `Elicitor`;
 * - `McpServer.sample` and `McpServer.listRoots` likewise (`sampling/createMessage`, `roots/list`).
 * A stateless HTTP request of a 2025 client has no session a client could answer in, so it asks nobody.
 *
 * @internal
 */
import type {
  CallToolResult as SdkCallToolResult,
  ClientCapabilities,
  CreateMessageResult,
  ElicitResult,
  JSONRPCMessage,
  JSONRPCRequest,
  ListRootsResult,
  MessageExtraInfo,
  RequestId,
  Result,
  ServerContext,
  StandardSchemaV1,
  Tool as SdkTool,
  Transport,
  TransportSendOptions
} from "@modelcontextprotocol/server"
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  LOG_LEVEL_META_KEY,
  MissingRequiredClientCapabilityError,
  Server
} from "@modelcontextprotocol/server"
import { serveStdio } from "@modelcontextprotocol/server/stdio"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
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
import type { ToolError } from "../ToolError.js"
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
import * as Rounds from "./mcpRounds.js"
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
  readonly requestStateKey?: string | Uint8Array | undefined
  readonly requestStateTtl?: Duration.DurationInput | undefined
  readonly maxParkedCalls?: number | undefined
  readonly instance?: string | undefined
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
  /** Undefined for a stateless HTTP request and for a 2026 client, which belong to no session. */
  readonly session: Session | undefined
  readonly server: Server
  /** The request being answered: for a 2026 call, the round's (a retry is a request of its own). */
  readonly extra: Extra
  readonly connection: { readonly level: Logging.McpLevel | undefined }
  /** A 2026 client's call, which asks its client through `input_required` results. */
  readonly call?: Rounds.ModernCall | undefined
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

/** An error's reason without the prefixes (`MCP error <code>: `) the SDK puts before it each time it crosses a wire. */
const unprefixed = (error: unknown): string => Mcp.withoutErrorPrefix(reasonOf(error))

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

/** The client capabilities a 2026 request declares in its `_meta`. */
const capabilitiesOf = (call: Rounds.ModernCall): ClientCapabilities | undefined =>
  Rounds.envelopeValue(call.ctx, CLIENT_CAPABILITIES_META_KEY) as ClientCapabilities | undefined

/** Whether a client's elicitation capability covers a mode (`{}` is a form-only client, as MCP says). */
const canElicit = (capability: ClientCapabilities["elicitation"], mode: "form" | "url"): boolean =>
  capability !== undefined &&
  (mode === "url" ? capability.url !== undefined : capability.form !== undefined || capability.url === undefined)

/**
 * The `Elicitor` of a 2026 call: a question for a client that declared the capability in the request's `_meta`
 * goes out in the round's `input_required` result; else the host's own `Elicitor`, else nobody (`Cancel`). A
 * question the client leaves unanswered reads `Cancel`.
 */
const roundElicitor = (
  call: Rounds.ModernCall,
  host: Option.Option<Elicitation.Elicitor["Type"]>
): Elicitation.Elicitor["Type"] => ({
  elicit: (request) => {
    if (!canElicit(capabilitiesOf(call)?.elicitation, request.mode)) {
      return Option.isSome(host) ? host.value.elicit(request) : Effect.succeed(Elicitation.cancel)
    }
    const { elicitationId: _, ...params } = Elicit.toParams(request, () => "") as Record<string, unknown>
    const input: Rounds.InputRequest = { method: "elicitation/create", params }
    return Effect.map(
      call.ask(request.key ?? Rounds.questionKey(input, call.seen), input),
      (answer) => (answer === undefined ? Elicitation.cancel : Elicit.fromElicitResult(answer as ElicitResult))
    )
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
  readonly key?: string | undefined
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

/**
 * A request to the calling client, from inside a call: pushed to a 2025-era client in its session
 * (`ctx.mcpReq.send`), asked of a 2026 client in the round's `input_required` result. `capable` reads the
 * client's capability; `unavailable`/`unsupported`/`failed` make the caller's error.
 */
const askClient = <A, E>(options: {
  readonly method: Rounds.InputRequest["method"]
  readonly params: Record<string, unknown>
  readonly key: string | undefined
  /** The client capability the request needs. */
  readonly capability: "sampling" | "roots"
  readonly unavailable: (stateless: boolean) => E
  readonly unsupported: (client: string | undefined) => E
  readonly failed: (reason: string, cause: unknown) => E
  readonly decode: (result: unknown) => A
}): Effect.Effect<A, E> =>
  Effect.flatMap(FiberRef.get(currentRequest), (context) => {
    if (context === undefined) return Effect.fail(options.unavailable(false))
    const call = context.call
    if (call !== undefined) {
      if (capabilitiesOf(call)?.[options.capability] === undefined) {
        call.missing = { ...call.missing, [options.capability]: {} }
        const info = Rounds.envelopeValue(call.ctx, CLIENT_INFO_META_KEY) as { readonly name?: unknown } | undefined
        return Effect.fail(options.unsupported(typeof info?.name === "string" ? info.name : undefined))
      }
      const input: Rounds.InputRequest = { method: options.method, params: options.params }
      return Effect.flatMap(call.ask(options.key ?? Rounds.questionKey(input, call.seen), input), (answer) =>
        answer === undefined
          ? Effect.fail(options.failed("the client did not answer", undefined))
          : Effect.succeed(options.decode(answer)))
    }
    if (context.session === undefined) {
      return Effect.fail(options.unavailable(true))
    }
    const server = context.server
    if (server.getClientCapabilities()?.[options.capability] === undefined) {
      return Effect.fail(options.unsupported(server.getClientVersion()?.name))
    }
    return Effect.tryPromise({
      try: (signal) =>
        context.extra.mcpReq.send(
          { method: options.method, params: options.params } as never,
          { signal, timeout: NO_TIMEOUT_MILLIS }
        ) as Promise<unknown>,
      catch: (cause) =>
        options.failed(unprefixed(cause), cause)
    }).pipe(Effect.map(options.decode))
  })

const named = (client: string | undefined): string => (client === undefined ? "" : ` ${JSON.stringify(client)}`)

export const sample = (request: SamplingRequest): Effect.Effect<SamplingResult, SamplingError> =>
  askClient({
    method: "sampling/createMessage",
    params: definedOnly({
      messages: request.messages,
      maxTokens: request.maxTokens,
      systemPrompt: request.systemPrompt,
      temperature: request.temperature,
      stopSequences: request.stopSequences,
      modelPreferences: request.modelPreferences,
      includeContext: request.includeContext,
      metadata: request.metadata
    }),
    key: request.key,
    capability: "sampling",
    unavailable: (stateless) =>
      new SamplingError({
        reason: "Unavailable",
        message: stateless
          ? "sampling needs a session: a stateless HTTP request has no client to answer it"
          : "sampling needs an MCP client to ask: McpServer.sample works only in a call served over MCP"
      }),
    unsupported: (client) =>
      new SamplingError({ reason: "Unsupported", message: `the MCP client${named(client)} does not offer sampling` }),
    failed: (reason, cause) =>
      new SamplingError({
        reason: "Failed",
        message: `sampling failed: ${reason}`,
        ...(cause === undefined ? {} : { cause })
      }),
    decode: (answer) => {
      const result = answer as CreateMessageResult
      return {
        role: result.role,
        content: result.content as SamplingContent,
        model: result.model,
        ...(result.stopReason === undefined ? {} : { stopReason: result.stopReason })
      }
    }
  })

// ---------------------------------------------------------------------------------------------------------------
// in a call: roots
// ---------------------------------------------------------------------------------------------------------------

export interface Root {
  readonly uri: string
  readonly name?: string | undefined
}

export class RootsError extends Schema.TaggedError<RootsError>("effect-agent-tools/RootsError")(
  "RootsError",
  {
    reason: Schema.Literal("Unavailable", "Unsupported", "Failed"),
    message: Schema.String,
    cause: Schema.optional(Schema.Defect)
  }
) {}

export const listRoots = (options?: { readonly key?: string | undefined }): Effect.Effect<
  ReadonlyArray<Root>,
  RootsError
> =>
  askClient({
    method: "roots/list",
    params: {},
    key: options?.key,
    capability: "roots",
    unavailable: (stateless) =>
      new RootsError({
        reason: "Unavailable",
        message: stateless
          ? "listing roots needs a session: a stateless HTTP request has no client to answer it"
          : "listing roots needs an MCP client to ask: McpServer.listRoots works only in a call served over MCP"
      }),
    unsupported: (client) =>
      new RootsError({ reason: "Unsupported", message: `the MCP client${named(client)} does not offer roots` }),
    failed: (reason, cause) =>
      new RootsError({
        reason: "Failed",
        message: `listing roots failed: ${reason}`,
        ...(cause === undefined ? {} : { cause })
      }),
    decode: (answer) =>
      (answer as ListRootsResult).roots.map((root) =>
        root.name === undefined ? { uri: root.uri } : { uri: root.uri, name: root.name }
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
  /** Told too when the toolkit changes: the `subscriptions/listen` streams of 2026 clients over HTTP. */
  readonly onListChanged: Set<() => void>
  /** What 2026 calls need: the `requestState` signer, the parked calls. */
  readonly host: Rounds.Host
  readonly scheduler: Scheduler.Scheduler
  readonly runCall: (effect: Effect.Effect<SdkCallToolResult>) => Fiber.RuntimeFiber<SdkCallToolResult>
  /** What the SDK reports going wrong on a connection (bad input, a response with no one to take it). */
  readonly transportError: (message: string) => void
}

/** The options of 2026 calls, checked; the parked calls end with the scope. */
const optionsError = (message: string) => new McpServerError({ reason: "Options", message })

/** The options of 2026 calls, checked; the parked calls end with the scope. */
const roundsHost = (
  options: Options,
  report: (message: string) => void
): Effect.Effect<Rounds.Host, McpServerError, Scope.Scope> =>
  Effect.gen(function*() {
    const ttl = Duration.decodeUnknown(options.requestStateTtl ?? Rounds.DEFAULT_REQUEST_STATE_TTL_MILLIS)
    if (Option.isNone(ttl) || !Duration.isFinite(ttl.value) || Duration.toMillis(ttl.value) < 1000) {
      return yield* Effect.fail(optionsError(
        `invalid requestStateTtl ${String(options.requestStateTtl)}: it is a finite duration of a second or more`
      ))
    }
    const maxParked = options.maxParkedCalls ?? Rounds.DEFAULT_MAX_PARKED_CALLS
    if (!Number.isSafeInteger(maxParked) || maxParked < 1) {
      return yield* Effect.fail(optionsError(`invalid maxParkedCalls ${maxParked}: it is a whole number above 0`))
    }
    const key = options.requestStateKey
    if (key !== undefined && (typeof key === "string" ? Buffer.byteLength(key) : key.byteLength) < 32) {
      return yield* Effect.fail(optionsError("invalid requestStateKey: an HMAC-SHA-256 key is 32 bytes or more"))
    }
    const instance = options.instance ?? randomUUID()
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(instance)) {
      return yield* Effect.fail(optionsError(
        `invalid instance ${JSON.stringify(instance)}: 1 to 64 letters, digits, "_" or "-" (it starts a requestState)`
      ))
    }
    const ttlMillis = Duration.toMillis(ttl.value)
    const parked = new Rounds.Parked(maxParked)
    yield* Effect.addFinalizer(() => Effect.sync(() => parked.closeAll()))
    return {
      states: new Rounds.RequestStates({ key, ttlMillis }, Math.max(10_000, maxParked * 10)),
      instance,
      parked,
      ttlMillis,
      report
    }
  })

export const makeCore = <T extends Tool.Any>(
  source: Source<T>,
  options: Options,
  /** Debug over HTTP, where any client on the network can send junk; a warning where the peer is the host's own. */
  transportErrors: LogLevel.LogLevel
): Effect.Effect<Core, McpServerError, Scope.Scope | Tool.Requirements<T>> =>
  Effect.gen(function*() {
    // made first, so closed last: by then every server is closed and every call aborted
    const calls = yield* FiberSet.make<SdkCallToolResult>()
    const runCall = yield* FiberSet.runtime(calls)<Tool.Requirements<T>>()
    const runtime = yield* Effect.runtime<never>()
    const scheduler = yield* Scheduler.make({ maxParallel: options.maxParallel, timeout: options.timeout })
    const servers = new Set<Server>()
    const onListChanged = new Set<() => void>()
    const current: { kit: Toolkit.Toolkit<Tool.Any> | undefined } = { kit: undefined }
    const report = (message: string) =>
      Runtime.runSync(runtime, Effect.logWithLevel(transportErrors, `MCP server ${options.name}: ${message}`))
    const host = yield* roundsHost(options, report)
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
              for (const notify of onListChanged) notify()
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
      onListChanged,
      host,
      scheduler,
      runCall: runCall as unknown as Core["runCall"],
      transportError: report
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
 * `notifications/progress` for a request that carries a progress token, on the stream of the request being
 * answered (`extra()`: a 2026 call's round changes). MCP wants `progress` to grow with each notification; a report
 * without a number counts as the next step.
 */
const progressReporter = (extra: () => Extra): ((progress: Progress) => Effect.Effect<void>) | undefined => {
  if (extra().mcpReq._meta?.progressToken === undefined) return undefined
  let last = 0
  return (progress) =>
    Effect.promise(() => {
      last = progress.progress ?? last + 1
      const request = extra()
      const token = request.mcpReq._meta?.progressToken
      if (token === undefined) return Promise.resolve()
      return request.mcpReq.notify({
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

/** The call's own elicitor (none for a stateless 2025 request) and logger, around the call. */
const inCall = <A, E, R>(self: Effect.Effect<A, E, R>, context: RequestContext): Effect.Effect<A, E, R> => {
  const logged = withClientLogging(self, context.connection)
  const call = context.call
  if (call === undefined && context.session === undefined) return logged
  return Effect.flatMap(
    Effect.serviceOption(Elicitation.Elicitor),
    (host) =>
      Effect.provideService(
        logged,
        Elicitation.Elicitor,
        call === undefined ? clientElicitor(context.server, context.extra, host) : roundElicitor(call, host)
      )
  )
}

/**
 * A call as a fiber: in the call's MCP context (`currentRequest`), in a span when tracing, run by the core. The
 * observer gets the fiber's end.
 */
const runCall = (
  core: Core,
  context: RequestContext,
  effect: Effect.Effect<Either.Either<ToolResult.ToolResult, ToolError>, never, unknown>,
  structured: boolean,
  span: { readonly name: string; readonly callId: string }
): Fiber.RuntimeFiber<SdkCallToolResult> => {
  let program = inCall(
    Effect.map(effect, (outcome) => Mcp.toCallToolResult(outcome, { structured }) as SdkCallToolResult),
    context
  )
  if (core.scheduler.traced) {
    program = Effect.withSpan(program, "McpServer.call", {
      kind: "server",
      attributes: {
        "tool.name": span.name,
        "tool.call_id": span.callId,
        ...(context.session === undefined ? {} : { "mcp.session_id": context.session.id })
      }
    })
  }
  // started at once (`runFork` is immediate): the slot `tryNow` took is given back by `program`'s own finalizer
  return core.runCall(Effect.locally(program, currentRequest, context) as Effect.Effect<SdkCallToolResult>)
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
  const onProgress = progressReporter(() => extra)
  // A call that can start at once is started here; one whose handler answers with a value (or that is refused) is
  // answered with no fiber at all. Such a handler runs no effect, so it needs none of the call's MCP context.
  const now = core.scheduler.tryNow(toolkit, call, { onProgress })
  if (now !== undefined && Either.isEither(now)) {
    return Promise.resolve(Mcp.toCallToolResult(now, { structured }) as SdkCallToolResult)
  }
  const context: RequestContext = { session, server, extra, connection }
  return new Promise((resolve, reject) => {
    const fiber = runCall(core, context, now ?? core.scheduler.run(toolkit, call, { onProgress }), structured, {
      name,
      callId
    })
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

/** Whether a server instance serves the 2026-07-28 revision (its era is fixed when it is made). */
const isModern = (server: Server): boolean => (server.getNegotiatedProtocolVersion() ?? "") >= MODERN_REVISION

const MODERN_REVISION = "2026-07-28"

/**
 * A `tools/call` of a 2026 client, one round of it: a fresh call, a `replay` call run again with the answers its
 * state carries, or a parked call resumed (see `mcpRounds.ts`). The round's request being cancelled (or its HTTP
 * connection dropped) interrupts the call.
 */
const serveModernCall = async (
  core: Core,
  server: Server,
  params: { readonly name: string; readonly arguments?: unknown },
  ctx: Extra
): Promise<Result> => {
  const name = params.name
  const host = core.host
  const hasState = ctx.mcpReq.requestState() !== undefined
  const binding = hasState ? Rounds.bindingOf(ctx, name, params.arguments) : undefined
  const state = binding === undefined ? undefined : await Rounds.stateOf(host, ctx, binding)
  const answers = ctx.mcpReq.inputResponses
  if (state?.k === "park") {
    const parked = state.i === host.instance ? host.parked.take(state.c) : undefined
    if (parked === undefined) {
      host.report(
        state.i === host.instance
          ? "a requestState names a parked call that has ended (expired, or the server parks too many)"
          : `a requestState names a call parked in another server process (${state.i}): route it there`
      )
      throw Rounds.invalidState()
    }
    return answerRound(parked, ctx, () => parked.resume(ctx, answers))
  }
  const signal = ctx.mcpReq.signal
  if (signal.aborted) return interrupted(name)
  const toolkit = core.toolkit()
  const tool = toolkit.byName.get(name)
  const structured = tool?.outputSchema !== undefined
  const call = new Rounds.ModernCall(
    tool?.replay === "safe" ? "replay" : "park",
    host,
    () => binding ?? Rounds.bindingOf(ctx, name, params.arguments),
    ctx,
    answers,
    state === undefined ? undefined : { answers: state.a, asked: state.q }
  )
  const onProgress = progressReporter(() => call.ctx)
  const request = { id: `${call.id}`, name, arguments: params.arguments }
  const now = core.scheduler.tryNow(toolkit, request, { onProgress })
  if (now !== undefined && Either.isEither(now)) return Mcp.toCallToolResult(now, { structured }) as Result
  const context: RequestContext = {
    session: undefined,
    server,
    get extra() {
      return call.ctx
    },
    connection: {
      get level() {
        return Rounds.envelopeValue(call.ctx, LOG_LEVEL_META_KEY) as Logging.McpLevel | undefined
      }
    },
    call
  }
  return answerRound(call, ctx, () => {
    const round = call.open()
    const fiber = runCall(core, context, now ?? core.scheduler.run(toolkit, request, { onProgress }), structured, {
      name,
      callId: call.id
    })
    call.fiber = fiber
    fiber.addObserver((exit) => {
      // a call that failed after needing a capability its client did not declare: the request is refused (-32021)
      if (Exit.isSuccess(exit) && exit.value.isError === true && call.missing !== undefined) {
        return call.finished(new MissingRequiredClientCapabilityError({ requiredCapabilities: call.missing }))
      }
      if (Exit.isSuccess(exit)) return call.finished(exit.value)
      if (Cause.isInterruptedOnly(exit.cause)) return call.finished(interrupted(name))
      call.finished(Cause.squash(exit.cause) as Error)
    })
    return round
  })
}

/** A round of a call, its request's cancellation interrupting the call until the round is answered. */
const answerRound = (call: Rounds.ModernCall, ctx: Extra, open: () => Promise<Result>): Promise<Result> => {
  const signal = ctx.mcpReq.signal
  const abort = () => call.interrupt()
  signal.addEventListener("abort", abort, { once: true })
  return open().finally(() => signal.removeEventListener("abort", abort))
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

/**
 * How long a 2026 client may keep the tool list of a toolkit that never changes while it is served; a toolkit that
 * changes lists with `ttlMs: 0` (clients hear of changes on `subscriptions/listen`). The list is the same for every
 * client: `cacheScope: "public"`.
 */
const FIXED_TOOLS_TTL_MILLIS = 5 * 60_000

/**
 * A new SDK server for one connection (a 2025 session, a stdio connection) or one 2026 request; `sessions: false`
 * for a 2025 stateless request, which has no session. Its era is the SDK's to bind: an `initialize` makes it a 2025
 * server; the SDK's serving entries (`serveStdio`, `createMcpHandler`) bind a 2026 one before it serves.
 */
export const makeServer = (core: Core, options: { readonly sessions: boolean }): Server => {
  const { instructions, name, title, version } = core.options
  const server = new ToolServer(
    { name, version, ...(title === undefined ? {} : { title }) },
    {
      capabilities: { tools: core.listChanged ? { listChanged: true } : {}, logging: {} },
      cacheHints: {
        "tools/list": { ttlMs: core.listChanged ? 0 : FIXED_TOOLS_TTL_MILLIS, cacheScope: "public" },
        "server/discover": { ttlMs: FIXED_TOOLS_TTL_MILLIS, cacheScope: "public" }
      },
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
  server.setRequestHandler(
    "tools/call",
    { params: AnyCallToolParams },
    (params, ctx) =>
      isModern(server) ? serveModernCall(core, server, params, ctx) : serveCall(
        core,
        server,
        connection,
        options.sessions ? { id: ctx.sessionId ?? connectionId, clientInfo: clientInfoOf(server) } : undefined,
        params,
        ctx
      )
  )
  server.onerror = (error) => core.transportError(error.message)
  return server
}

/** A server for a connection, told about toolkit changes until it closes. */
export const attachedServer = (core: Core, options: {
  readonly sessions: boolean
  readonly onclose?: (() => void) | undefined
}): Server => {
  const server = makeServer(core, options)
  server.onclose = () => {
    core.servers.delete(server)
    options.onclose?.()
  }
  core.servers.add(server)
  return server
}

/** Connects a new server to a transport (a 2025 HTTP session, or one stateless 2025 request). */
export const connectServer = async (core: Core, transport: Transport, options: {
  readonly sessions: boolean
  readonly onclose?: (() => void) | undefined
}): Promise<Server> => {
  const server = attachedServer(core, options)
  await server.connect(transport)
  return server
}

export const closeServer = (server: Server): Promise<void> => server.close().catch(() => undefined)

/**
 * Serves one connection (stdio, or any transport) in whichever era its client speaks, through the SDK's
 * `serveStdio`: the first message decides (an `initialize`, or a request carrying the 2026 `_meta` envelope), one
 * server instance serves the connection from then on, and the SDK answers `server/discover` and
 * `subscriptions/listen` (routing `tools/list_changed` to the listening requests) for a 2026 client. Closing the
 * scope closes the connection.
 */
const attach = (core: Core, wire: Wire, onclose?: () => void): Effect.Effect<void, never, Scope.Scope> =>
  Effect.asVoid(Effect.acquireRelease(
    Effect.sync(() =>
      serveStdio(() => attachedServer(core, { sessions: true, onclose }), {
        transport: wire,
        onerror: (error) => core.transportError(error.message)
      })
    ),
    (handle) => Effect.promise(() => handle.close().catch(() => undefined))
  ))

// ---------------------------------------------------------------------------------------------------------------
// any transport
// ---------------------------------------------------------------------------------------------------------------

export const serve = <T extends Tool.Any>(
  source: Source<T>,
  options: Options,
  transport: Transport
): Effect.Effect<void, McpServerError, Scope.Scope | Tool.Requirements<T>> =>
  Effect.flatMap(
    makeCore(source, options, LogLevel.Warning),
    (core) => attach(core, new Wire(transport, (reason) => core.transportError(`refused a message: ${reason}`)))
  )

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
