/**
 * The MCP client's machinery: the stdio transport over a peer process (`peer.ts`), the session state, remote
 * tools, one call, and the `tools/list_changed` bookkeeping. What it takes from the MCP SDK comes through
 * `mcpSdk.ts`.
 *
 * State lives in plain fields of one `Session` object and is changed synchronously: by SDK callbacks (a
 * notification, the transport closing) and by fibers between their steps, never both at once (one JavaScript
 * thread). Anything that waits for a change waits on `pulse`, a `Deferred` made by the first waiter and completed
 * (and dropped) on the next change, after checking its condition in the same synchronous step, so no wake-up is
 * lost.
 *
 * How a server's death reaches calls: every request in flight is an {@link InFlight} in `session.inFlight`, and the
 * death (the end of a spawned server as its peer declares it, with its stderr tail; the connection closing; or
 * the scope closing) fails each of them at that moment, waking its fiber; later calls see `session.dead` and fail
 * before sending. No fiber is forked per call: a call is one `Effect.async` around the SDK's promise, woken again
 * only by progress.
 *
 * `McpClient.ts` declares the types and takes its values (`connect`, the error, the defaults) from here; this
 * module imports only types from it, so there is no cycle.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import type * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import { pipeArguments } from "effect/Pipeable"
import * as Runtime from "effect/Runtime"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Path from "node:path"
import * as Elicitation from "../Elicitation.js"
import type * as McpClient from "../McpClient.js"
import type * as McpServer from "../McpServer.js"
import * as Tool from "../Tool.js"
import type { ToolError } from "../ToolError.js"
import { ToolFailure, ToolTimeout } from "../ToolError.js"
import * as Toolkit from "../Toolkit.js"
import type * as ToolResult from "../ToolResult.js"
import { preview } from "./argumentProblems.js"
import type { Progress } from "./context.js"
import * as Elicit from "./elicitation.js"
import * as Lines from "./lines.js"
import type { CallToolResult } from "./mcp.js"
import { fromCallToolResult, withoutErrorPrefix } from "./mcp.js"
import * as Auth from "./mcpAuth.js"
import * as Logging from "./mcpLogging.js"
import * as Sdk from "./mcpSdk.js"
import * as Peer from "./peer.js"
import * as Process from "./process.js"
import { reasonOf } from "./reason.js"
import * as ToolInternal from "./tool.js"

// ---------------------------------------------------------------------------------------------------------------
// the values McpClient.ts exports
// ---------------------------------------------------------------------------------------------------------------

export const TypeId: McpClient.TypeId = Symbol.for("effect-agent-tools/McpClient") as McpClient.TypeId

export class McpClientError extends Schema.TaggedError<McpClientError>("effect-agent-tools/McpClientError")(
  "McpClientError",
  {
    reason: Schema.Literal(
      "Spawn",
      "Initialize",
      "Closed",
      "Protocol",
      "TooLarge",
      "Request",
      "Unauthorized",
      "Broken"
    ),
    message: Schema.String,
    /** The underlying error (an SDK `McpError`, a process error), for logs. */
    cause: Schema.optional(Schema.Unknown)
  }
) {}

export const DEFAULT_NOTIFICATION_GRACE: Duration.DurationInput = "50 millis"

export const DEFAULT_TIMEOUT: Duration.DurationInput = "60 seconds"

export const DEFAULT_MAX_TOTAL_TIMEOUT: Duration.DurationInput = "10 minutes"

export const DEFAULT_CONNECT_TIMEOUT: Duration.DurationInput = "30 seconds"

export const DEFAULT_MAX_RESULT_BYTES: number = 16 * 1024 * 1024

export const DEFAULT_MAX_TOOLS: number = 1_000

// ---------------------------------------------------------------------------------------------------------------
// constants
// ---------------------------------------------------------------------------------------------------------------

/** The JSON-RPC error code of the answer the stdio transport makes up for a response it dropped as too large. */
export const RESULT_TOO_LARGE_CODE = -32077

/** Room for the JSON-RPC envelope around a result, on top of `maxResultBytes`, when capping a stdio line. */
const ENVELOPE_BYTES = 64 * 1024

/**
 * How soon after the end of a call that saw no `tools/list_changed` a notification marks the server as one that
 * announces its changes late (see `afterCall`).
 */
const LATE_NOTIFICATION_MILLIS = 1_000

/** The most pages a listing follows (a server whose cursors never end must not hang a refresh). */
const MAX_PAGES = 1_000

const NAME_ILLEGAL = /[^a-zA-Z0-9_-]/g

// ---------------------------------------------------------------------------------------------------------------
// sizes
// ---------------------------------------------------------------------------------------------------------------

/**
 * Whether a decoded JSON value would take more than `limit` bytes as JSON (strings counted as UTF-8, without
 * escapes). Walks without allocating and stops as soon as the limit is passed.
 */
export const exceedsBytes = (value: unknown, limit: number): boolean => {
  let total = 0
  const stack: Array<unknown> = [value]
  while (stack.length > 0) {
    const item = stack.pop()
    if (typeof item === "string") {
      total += Buffer.byteLength(item) + 2
    } else if (Array.isArray(item)) {
      total += 2 + item.length
      for (const each of item) stack.push(each)
    } else if (typeof item === "object" && item !== null) {
      total += 2
      for (const key in item) {
        total += Buffer.byteLength(key) + 4
        stack.push((item as Record<string, unknown>)[key])
      }
    } else {
      total += 8
    }
    if (total > limit) return true
  }
  return false
}

const tooLargeMessage = (limit: number, bytes?: number): string =>
  `the MCP server's result is ${bytes === undefined ? "larger than" : `${bytes} bytes, over`} the limit of ${
    Lines.formatBytes(limit)
  } for one result; ask for less at a time`

/**
 * The id of the JSON-RPC response an oversize line carried, read from its first or last bytes: `{"jsonrpc":"2.0",
 * "id":7,...` (most SDKs) or `...,"jsonrpc":"2.0","id":7}` (the TypeScript SDK, which writes the result first).
 */
export const responseIdOf = (line: Lines.OversizeLine): string | number | undefined =>
  Lines.memberAtEdges(line, "id", String.raw`"jsonrpc"\s*:\s*"2\.0"\s*,\s*`)

// ---------------------------------------------------------------------------------------------------------------
// the stdio transport
// ---------------------------------------------------------------------------------------------------------------

/** What makes a spawned server's peer end: the reason of the session's error. */
type Violation = "Protocol" | "TooLarge"

/**
 * An SDK `Transport` over a peer process: newline-delimited JSON-RPC on its stdin and stdout. A line that is not
 * a JSON-RPC message breaks the protocol (a server must write nothing else to stdout) and ends the peer. A line
 * longer than the cap is dropped as it arrives; when it was the answer to a request of ours, that request gets an
 * error answer in its place (code {@link RESULT_TOO_LARGE_CODE}), else the peer ends.
 */
export class ChildTransport implements Sdk.Transport {
  onclose?: (() => void) | undefined
  onerror?: ((error: Error) => void) | undefined
  onmessage?: ((message: Sdk.JSONRPCMessage) => void) | undefined
  private started = false
  private closed = false
  private readonly backlog: Array<Sdk.JSONRPCMessage> = []
  /** Ids of our requests not yet answered: an oversize line is matched against them. */
  private readonly pending = new Set<string | number>()

  constructor(
    private readonly peer: Peer.Peer<Violation>,
    private readonly options: { readonly maxLineBytes: number; readonly maxResultBytes: number }
  ) {
    peer.read({ line: (line) => this.receive(line), oversize: (line) => this.oversize(line) })
  }

  /**
   * The server's pid. With `stderr`, what tells the SDK a transport is stdio: a `server/discover` probe that goes
   * unanswered then means a server of the 2025 revisions (it falls back to `initialize`) rather than an outage.
   */
  get pid(): number {
    return this.peer.pid
  }

  /** Kept by the peer for messages; the SDK only looks for the field. */
  readonly stderr = null

  start(): Promise<void> {
    this.started = true
    for (const message of this.backlog.splice(0)) this.deliver(message)
    return Promise.resolve()
  }

  send(message: Sdk.JSONRPCMessage): Promise<void> {
    if (this.closed) return Promise.reject(new Error("the MCP server's connection is closed"))
    if ("method" in message) {
      if ("id" in message) this.pending.add(message.id)
      else if (message.method === "notifications/cancelled") {
        const id = (message.params as { requestId?: string | number } | undefined)?.requestId
        if (id !== undefined) this.pending.delete(id)
      }
    }
    // written outside Effect: a fiber per message cost about 30 µs of a 200 µs call to a local server (row 5); the
    // SDK waits for a send only to learn that it failed
    return new Promise((resolve, reject) => {
      this.peer.send(Sdk.serializeMessage(message), (written) => {
        if (written._tag === "Success") return resolve()
        const failure = Cause.failureOption(written.cause)
        reject(new Error(failure._tag === "Some" ? failure.value.reason : "the write failed"))
      })
    })
  }

  close(): Promise<void> {
    if (this.closed) return Promise.resolve()
    this.closed = true
    this.peer.endInput()
    this.onclose?.()
    return Promise.resolve()
  }

  /** Hands a message to the SDK, or keeps it until `start` (the order {@link deliverResponsesLast} needs is set there). */
  private deliver(message: Sdk.JSONRPCMessage): void {
    if (this.closed) return
    if (!this.started) return void this.backlog.push(message)
    this.onmessage?.(message)
  }

  private receive(line: string): void {
    if (this.closed || line.trim() === "") return
    let json: unknown
    try {
      json = JSON.parse(line)
    } catch {
      return this.peer.violate(`it wrote a line to stdout that is not JSON: ${preview(line)}`, "Protocol")
    }
    const message = Sdk.asMessage(json)
    if (message === undefined) {
      return this.peer.violate(
        `it wrote a line to stdout that is not a JSON-RPC message: ${preview(line)}`,
        "Protocol"
      )
    }
    if ("id" in message && !("method" in message) && message.id !== undefined) this.pending.delete(message.id)
    this.deliver(message)
  }

  private oversize(line: Lines.OversizeLine): void {
    if (this.closed) return
    const id = responseIdOf(line)
    if (id !== undefined && this.pending.has(id)) {
      this.pending.delete(id)
      const message = tooLargeMessage(this.options.maxResultBytes, line.bytes)
      return this.deliver({
        jsonrpc: "2.0",
        id,
        error: { code: RESULT_TOO_LARGE_CODE, message, data: { bytes: line.bytes, limit: this.options.maxResultBytes } }
      })
    }
    this.peer.violate(
      `it wrote a message of ${line.bytes} bytes to stdout, over the limit of ${
        Lines.formatBytes(this.options.maxLineBytes)
      }, that answers none of our requests`,
      "TooLarge"
    )
  }
}

// ---------------------------------------------------------------------------------------------------------------
// the order the SDK sees messages in
// ---------------------------------------------------------------------------------------------------------------

type OnMessage = NonNullable<Sdk.Transport["onmessage"]>

const isResponse = (message: Sdk.JSONRPCMessage): boolean => !("method" in message) && "id" in message

/**
 * Makes any transport hand the SDK each response one microtask after it arrives. The SDK runs a notification's
 * handler a microtask after the notification arrives, but a response's at once, and forgets a request's progress
 * handler with its response: a server's last progress notification and its result in one burst (one chunk of a
 * pipe or a socket, several SSE events) lost the progress, every time, whatever the transport. Deferred by one
 * microtask (microtasks run in order), a response is handled after every notification that came before it, at no
 * cost a caller can see: no macrotask, no copy.
 *
 * The transport keeps its identity (the SDK tells its own transports apart by class): its `onmessage` becomes an
 * accessor, and whatever handler the SDK installs is wrapped as it is installed.
 */
export const deliverResponsesLast = (
  transport: Sdk.Transport,
  onResponse?: (id: string | number) => void
): void => {
  const wrap = (handler: OnMessage): OnMessage => (message, extra) => {
    if (isResponse(message)) {
      if (onResponse !== undefined && "id" in message && message.id !== undefined) onResponse(message.id)
      queueMicrotask(() => handler(message, extra))
    } else {
      handler(message, extra)
    }
  }
  let wrapped: OnMessage | undefined = transport.onmessage === undefined ? undefined : wrap(transport.onmessage)
  Object.defineProperty(transport, "onmessage", {
    configurable: true,
    enumerable: true,
    get: () => wrapped,
    set: (handler: OnMessage | undefined) => {
      wrapped = handler === undefined ? undefined : wrap(handler)
    }
  })
}

// ---------------------------------------------------------------------------------------------------------------
// broken requests
// ---------------------------------------------------------------------------------------------------------------

/**
 * The JSON-RPC error code of the answer made up for a request whose connection broke before the server answered
 * it (see {@link watchRequests}).
 */
export const CONNECTION_BROKEN_CODE = -32078

/** A request that could not be sent: the network failed under it (the server may have got it). */
class ConnectionBroken extends Error {
  constructor(readonly reason: unknown) {
    super(`the connection broke: ${reasonOf(reason)}`)
  }
}

/** Whether a request failed because its connection broke before the answer (never the server's answer). */
export const isBroken = (error: unknown): boolean =>
  error instanceof ConnectionBroken || Sdk.errorCode(error) === CONNECTION_BROKEN_CODE

/**
 * Over a transport that opens one connection per request (Streamable HTTP), makes a request whose connection breaks
 * before the server answers it fail at once, telling it apart from every other failure: the SDK waits for such a
 * request until its timeout (a POST whose stream ended without the answer), or fails it with the network's own
 * error (a POST refused or cut before its answer began). The first gets an error answer made up here (code
 * {@link CONNECTION_BROKEN_CODE}); the second is failed with a {@link ConnectionBroken}. Either way
 * {@link isBroken} says so, and a caller that knows the request is safe to repeat sends it again, on a fresh
 * connection. A request aborted on purpose (a cancelled call) is neither.
 */
const watchRequests = (transport: Sdk.Transport): void => {
  const waiting = new Set<string | number>()
  deliverResponsesLast(transport, (id) => void waiting.delete(id))
  const send = transport.send.bind(transport)
  transport.send = (message, options) => {
    if (!("method" in message) || !("id" in message) || message.id === undefined) return send(message, options)
    const id = message.id
    waiting.add(id)
    const signal = options?.requestSignal
    const answered = () => void waiting.delete(id)
    signal?.addEventListener("abort", answered, { once: true })
    const ended = options?.onRequestStreamEnd
    return send(message, {
      ...options,
      onRequestStreamEnd: () => {
        ended?.()
        signal?.removeEventListener("abort", answered)
        if (!waiting.delete(id)) return
        transport.onmessage?.({
          jsonrpc: "2.0",
          id,
          error: { code: CONNECTION_BROKEN_CODE, message: "the connection broke before the server answered" }
        })
      }
    }).catch((error: unknown) => {
      waiting.delete(id)
      signal?.removeEventListener("abort", answered)
      // fetch fails with a TypeError when the network does; anything else is an answer, or ours
      throw error instanceof TypeError && signal?.aborted !== true ? new ConnectionBroken(error) : error
    })
  }
}

// ---------------------------------------------------------------------------------------------------------------
// the session
// ---------------------------------------------------------------------------------------------------------------

interface Snapshot {
  readonly tools: ReadonlyArray<Tool.Dynamic>
  readonly toolkit: Toolkit.Toolkit<Tool.Dynamic>
}

interface Settings {
  readonly prefix: string | undefined
  readonly resource: Readonly<Record<string, Tool.Resource<Record<string, unknown>>>>
  readonly sequential: Readonly<Record<string, boolean>>
  readonly timeoutMillis: number
  readonly maxTotalMillis: number
  readonly connectMillis: number
  readonly graceMillis: number
  readonly maxResultBytes: number
  readonly maxTools: number
  readonly permission: string | undefined
  readonly replay: Readonly<Record<string, Tool.Replay>>
  readonly revision: "auto" | "legacy" | "2026-07-28"
  readonly logLevel: LogLevel.LogLevel | undefined
  readonly sampling: McpClient.Sampler | undefined
}

interface Session {
  /** Set once the attempt that made this session has made its client. */
  client: Sdk.Client
  /** The transport the client talks over (an HTTP one finishes an authorization). */
  transport: Sdk.Transport
  readonly settings: Settings
  /** The OAuth provider of an `McpClient.http` given an `McpAuth.OAuth`, shared by every attempt. */
  readonly auth: Auth.OAuthProvider | undefined
  /** One authorization at a time: calls that all need one wait for the first. */
  readonly authorizing: Effect.Semaphore
  /** Whether the session speaks 2026-07-28 (negotiated with `server/discover`). */
  modern: boolean
  /** Added to every request's `_meta` (a 2026-07-28 session's log level). */
  requestMeta: Record<string, unknown> | undefined
  /**
   * Whether the SDK mirrors arguments into `Mcp-Param-*` headers (2026-07-28 over HTTP): a tool whose
   * `x-mcp-header` declarations break the rules is then left out.
   */
  mirrorsHeaders: boolean
  /** How the server is named in messages. */
  label: string
  /** Set once, when the session can no longer carry calls; `died` completes at the same moment. */
  dead: McpClientError | undefined
  /** The requests in flight ({@link InFlight}): the session's death fails them all at once. */
  readonly inFlight: Set<{ readonly die: (error: McpClientError) => void }>
  /** Whether `initialize` has succeeded: before, the transport closing is the failed `initialize`'s doing. */
  connected: boolean
  /** Set when the session is closed by {@link closeSession}: closing it again does nothing. */
  closed: boolean
  /**
   * For a request that failed while a spawned server is going (its write hit a closed pipe): waits, bounded, for
   * the peer's end, so the request fails with how the server ended and its last words rather than a broken pipe.
   */
  settled: Effect.Effect<void>
  /** A message with the stderr tail of a spawned server (as it is now) appended. */
  withStderr: (message: string) => string
  /**
   * What waiters wait on: made by the first one, completed and dropped on the next change of the fields below (and
   * of `dead`). Most sessions never have a waiter, and a `Deferred` costs a few µs.
   */
  pulse: Deferred.Deferred<void> | undefined
  /** `tools/list_changed` notifications received so far. */
  notified: number
  /**
   * Starts the {@link follower} (once; a no-op until the session is established): it runs from the first change
   * the server announces, a fiber a session would otherwise keep for nothing (most servers never change their list).
   */
  follow: () => void
  /** The notification count the latest listing started after (a listing covers notifications up to it). */
  requested: number
  /** The notification count covered by the latest listing that has ended, in success or failure. */
  landed: number
  /** Whether the server advertised `tools.listChanged`. */
  listChanged: boolean
  /**
   * Whether the server has been seen to send `tools/list_changed` after the result of the call that changed its
   * list ({@link LATE_NOTIFICATION_MILLIS}): only then do calls pay the grace.
   */
  lateNotifier: boolean
  /** When the last call that could have changed the list ended without having seen a notification. */
  quietEnd: number
  snapshot: Snapshot
  /** The first page of the listing, asked for as the handshake ended; taken by the first listing. */
  prefetched: Prefetched | undefined
  readonly lock: Effect.Semaphore
}

/** A page of the listing asked for before the listing itself ran ({@link attempt}), and when it was asked for. */
interface Prefetched {
  readonly startedAt: number
  readonly outcome: Exit.Exit<ListPage, unknown>
}

const signal = (session: Session): void => {
  const pulse = session.pulse
  if (pulse === undefined) return
  session.pulse = undefined
  Deferred.unsafeDone(pulse, Exit.void)
}

/** Waits until `condition` holds, re-checking it on every change of the session. */
const waitUntil = (session: Session, condition: () => boolean): Effect.Effect<void> =>
  Effect.suspend(function loop(): Effect.Effect<void> {
    if (condition()) return Effect.void
    const pulse = session.pulse ??= Deferred.unsafeMake<void>(FiberId.none)
    return Effect.zipRight(Deferred.await(pulse), Effect.suspend(loop))
  })

const markDead = (session: Session, error: McpClientError): void => {
  if (session.dead !== undefined) return
  session.dead = error
  for (const request of Array.from(session.inFlight)) request.die(error)
  signal(session)
}

/**
 * Runs a promise-returning request; interruption aborts it (the SDK then sends `notifications/cancelled`). Not
 * bound to the session's death: for `initialize`, which a death ends through the transport anyway. With a
 * `deadline`, the request is aborted and fails with `onTimeout()` when it has not settled within `millis` of real
 * time (after the event loop's next poll for I/O, as `Process.realSleep` ends): a timer of its own, not a race
 * against one, which would fork two fibers. `run` may end the deadline early (`disarm`) for work that follows the
 * part it bounds.
 */
const promise = <A>(
  run: (signal: AbortSignal, disarm: () => void) => Promise<A>,
  deadline?: { readonly millis: number; readonly onTimeout: () => unknown }
): Effect.Effect<A, unknown> =>
  Effect.async<A, unknown>((resume) => {
    const controller = new AbortController()
    let settled = false
    let timer: ReturnType<typeof setTimeout> | undefined
    let immediate: ReturnType<typeof setImmediate> | undefined
    const settle = (outcome: Effect.Effect<A, unknown>) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      clearImmediate(immediate)
      resume(outcome)
    }
    if (deadline !== undefined) {
      timer = setTimeout(() => {
        immediate = setImmediate(() => {
          if (settled) return
          controller.abort("the request timed out")
          settle(Effect.failSync(deadline.onTimeout))
        })
      }, deadline.millis)
    }
    // what `run` does once the part the deadline bounds is over: the deadline no longer applies
    const disarm = () => {
      clearTimeout(timer)
      clearImmediate(immediate)
    }
    run(controller.signal, disarm).then(
      (value) => settle(Effect.succeed(value)),
      (error) => settle(Effect.fail(error))
    )
    return Effect.sync(() => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      clearImmediate(immediate)
      controller.abort("the request was cancelled")
    })
  })

/** What the SDK's request options take as `onprogress`. */
type OnProgress = (progress: { progress: number; total?: number | undefined; message?: string | undefined }) => void

/**
 * Controllers of requests that ended without being aborted, for the next requests: a request's signal is
 * unobserved once its promise has settled (the SDK removes its listener as the request ends, before its caller
 * hears of it), and making a signal costs more than a tenth of a call to a local server. An aborted one is never
 * kept. At most {@link IDLE_CONTROLLERS} (as many as calls once ran side by side, up to that).
 */
const idleControllers: Array<AbortController> = []

const IDLE_CONTROLLERS = 64

const release = (controller: AbortController): void => {
  if (!controller.signal.aborted && idleControllers.length < IDLE_CONTROLLERS) idleControllers.push(controller)
}

/**
 * One request of the session in flight, between the SDK's promise and the fiber that waits for it: no queue, no
 * forked fiber, no race. The promise settling, the server's progress and the session's death land here,
 * synchronously, and resume the fiber if it waits; the fiber is resumed with what to do next: forward the progress
 * that arrived and wait again, or end with the outcome. The outcome is set once, by whichever comes first: the
 * answer, the SDK's error, the session's death ({@link markDead}), or the fiber's interruption
 * ({@link InFlight.interrupted}), which aborts the request so the SDK sends `notifications/cancelled` at once.
 */
class InFlight<A> {
  /** Progress that arrived since the fiber last looked, in order. */
  private progress: Array<Progress> | undefined = undefined
  /** How the request ended, once it has. */
  private outcome: Exit.Exit<A, unknown> | undefined = undefined
  private resume: ((next: Effect.Effect<A, unknown>) => void) | undefined = undefined
  /**
   * Aborting it is how a call is cancelled: the SDK then sends `notifications/cancelled` and rejects the request.
   * A real `AbortController` (the SDK may use the signal in any way an `AbortSignal` allows), taken from
   * {@link idleControllers} when the request starts.
   */
  private controller: AbortController | undefined = undefined

  constructor(
    private readonly session: Session,
    private readonly run: (signal: AbortSignal, onprogress: OnProgress) => Promise<A>
  ) {}

  /**
   * Sends the request (the first time) and waits for what comes next. What it is resumed with (forwarding progress
   * included) runs under its canceler, so an interruption at any point aborts the request.
   */
  readonly wait: Effect.Effect<A, unknown> = Effect.async<A, unknown>((resume) => {
    if (this.controller === undefined) this.start()
    const next = this.next()
    if (next === undefined) this.resume = resume
    else resume(next)
    return this.interrupted
  })

  /** Interruption: the request is abandoned at once, and the SDK tells the server. */
  private readonly interrupted: Effect.Effect<void> = Effect.sync(() => {
    this.resume = undefined
    if (this.end(Exit.interrupt(FiberId.none))) this.controller?.abort("the call was cancelled")
  })

  /** The session died: the request fails with the reason now, whatever the server still sends. */
  die(error: McpClientError): void {
    this.progress = undefined
    if (this.end(Exit.fail(error))) this.controller?.abort("the MCP session ended")
  }

  private start(): void {
    const controller = idleControllers.pop() ?? new AbortController()
    this.controller = controller
    if (this.session.dead !== undefined) return void this.end(Exit.fail(this.session.dead))
    this.session.inFlight.add(this)
    this.run(controller.signal, (p) => {
      if (this.outcome !== undefined) return
      const progress: Progress = {
        progress: p.progress,
        ...(p.total === undefined ? {} : { total: p.total }),
        ...(p.message === undefined ? {} : { message: p.message })
      }
      if (this.progress === undefined) this.progress = [progress]
      else this.progress.push(progress)
      this.wake()
    }).then(
      (value) => {
        this.end(Exit.succeed(value))
        release(controller)
      },
      (error) => {
        this.end(Exit.fail(error))
        release(controller)
      }
    )
  }

  /** What the fiber does next: forward the progress that arrived and wait again, or end; nothing yet. */
  private next(): Effect.Effect<A, unknown> | undefined {
    const batch = this.progress
    if (batch === undefined) return this.outcome
    this.progress = undefined
    return Effect.zipRight(Effect.forEach(batch, Tool.progress, { discard: true }), this.wait)
  }

  /** Sets the outcome unless it is set; whether this was the end. */
  private end(outcome: Exit.Exit<A, unknown>): boolean {
    if (this.outcome !== undefined) return false
    this.outcome = outcome
    this.session.inFlight.delete(this)
    this.wake()
    return true
  }

  private wake(): void {
    const resume = this.resume
    if (resume === undefined) return
    const next = this.next()
    if (next === undefined) return
    this.resume = undefined
    resume(next)
  }
}

/**
 * Runs a request of the session: its progress forwarded as `Tool.progress` (when it asks for progress),
 * interruption aborting it, the session's death failing it at once with the reason (an `McpClientError`); other
 * failures are the SDK's.
 */
const inFlight = <A>(
  session: Session,
  run: (signal: AbortSignal, onprogress: OnProgress) => Promise<A>
): Effect.Effect<A, unknown> => Effect.suspend(() => new InFlight(session, run).wait)

/**
 * A failed request as the session's error. `method` names the request (`tools/list`) and `what` says it in words
 * (`listing the tools`). A result that arrived but does not follow MCP's schema is the server's fault, said in one
 * line; it does not end the session.
 */
const requestError = (session: Session, method: string, what: string, error: unknown): McpClientError => {
  if (session.dead !== undefined) return session.dead
  if (error instanceof McpClientError) return error
  if (Sdk.isTimeout(error)) {
    return new McpClientError({
      reason: "Request",
      message: `the ${session.label} did not answer ${what} in time`,
      cause: error
    })
  }
  if (isBroken(error)) {
    return new McpClientError({
      reason: "Broken",
      message: `the connection to the ${session.label} broke before it answered ${what}`,
      cause: error
    })
  }
  if (Auth.isAuthFailure(error)) return unauthorized(session, error)
  const sdkMessage = Sdk.errorMessage(error)
  if (sdkMessage !== undefined) {
    return new McpClientError({ reason: "Request", message: `${what} failed: ${sdkMessage}`, cause: error })
  }
  const malformed = Sdk.malformedResult(error)
  if (malformed !== undefined) {
    return new McpClientError({
      reason: "Protocol",
      message: `the ${session.label} sent a malformed ${method} result: ${malformed}`,
      cause: error
    })
  }
  return new McpClientError({
    reason: "Request",
    message: `${what} could not reach the ${session.label}: ${reasonOf(error)}`,
    cause: error
  })
}

// ---------------------------------------------------------------------------------------------------------------
// remote tools
// ---------------------------------------------------------------------------------------------------------------

/** The override for a tool named by its remote or its local name; the later entry wins when both appear. */
const override = <A>(table: Readonly<Record<string, A>>, remote: string, local: string): A | undefined => {
  let found: A | undefined
  for (const key in table) {
    if (Object.hasOwn(table, key) && (key === remote || key === local)) found = table[key]
  }
  return found
}

/**
 * MCP's hints as our annotations: MCP's defaults for hints missing from a block the server sent (destructive and
 * open-world default true), nothing for a server that sent no block (unstated is not harmless).
 */
export const annotationsOf = (tool: Sdk.Tool): Tool.Annotations => {
  const hints = tool.annotations
  if (hints === undefined) return {}
  return {
    ...(hints.title === undefined ? {} : { title: hints.title }),
    readOnly: hints.readOnlyHint ?? false,
    destructive: hints.destructiveHint ?? true,
    idempotent: hints.idempotentHint ?? false,
    openWorld: hints.openWorldHint ?? true
  }
}

const localName = (session: Session, remote: string): string => {
  const name = remote.replace(NAME_ILLEGAL, "_")
  return session.settings.prefix === undefined ? name : `${session.settings.prefix}__${name}`
}

/** Why a remote tool cannot be offered under `name`, or `undefined` when it can. */
const unusableName = (remote: string, name: string, seen: ReadonlySet<string>): string | undefined => {
  // a prefix alone (`p__`) would pass the name rule: the remote name itself must not be empty
  if (remote === "") return "its name is empty"
  if (seen.has(name)) return "another tool has that name"
  if (!Tool.NAME_PATTERN.test(name)) return "a tool name is 1 to 64 letters, digits, \"_\" or \"-\""
  return undefined
}

/**
 * The server's listing as tools. A tool we cannot offer (an empty name, a name too long, a duplicate, a broken
 * schema) is left out with a warning that names it.
 */
const toSnapshot = (session: Session, listed: ReadonlyArray<Sdk.Tool>): Effect.Effect<Snapshot> =>
  Effect.gen(function*() {
    const tools: Array<Tool.Dynamic> = []
    const seen = new Set<string>()
    for (const [i, remote] of listed.entries()) {
      // making a thousand tools is synchronous work: the event loop turns (timers, I/O) between groups of them
      if (i % Process.YIELD_EVERY === Process.YIELD_EVERY - 1) yield* Process.yieldToEventLoop
      const name = localName(session, remote.name)
      // one walk of the schema for the common case, a schema that declares no headers: defaults made optional, and
      // whether any schema in it has an `x-mcp-header`
      const prepared = prepareSchema(remote.inputSchema)
      const declares = session.mirrorsHeaders && prepared.declaresHeaders
      const unusable = unusableName(remote.name, name, seen) ??
        (declares ? headerDeclarationProblem(remote.inputSchema) : undefined)
      if (unusable !== undefined) {
        yield* Effect.logWarning(
          `the ${session.label} lists a tool ${preview(remote.name)} that cannot be offered${
            remote.name === "" ? "" : ` as ${preview(name)}`
          }: ${unusable}`
        )
        continue
      }
      try {
        // no Ajv work while listing: each tool checks and compiles its schema on its first call
        tools.push(
          ToolInternal.withSchemaCheckOnFirstCall(() =>
            remoteTool(session, remote, name, prepared.parameters as Tool.JsonSchema, declares)
          )
        )
        seen.add(name)
      } catch (error) {
        yield* Effect.logWarning(
          `the ${session.label} lists a tool ${preview(remote.name)} that cannot be offered: ${reasonOf(error)}`
        )
      }
    }
    return { tools, toolkit: Toolkit.make(...tools) }
  })

/** RFC 9110's `token`: what an `x-mcp-header` name may be. */
const HTTP_TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/

/** The types a property named in a header may have (a `number` is not one: its text is not canonical). */
const HEADER_TYPES: ReadonlySet<unknown> = new Set(["string", "integer", "boolean"])

/** The keywords under which a property is not reachable by `properties` alone (SEP-2243's static reachability). */
const UNREACHABLE_UNDER = [
  "items",
  "prefixItems",
  "contains",
  "additionalProperties",
  "unevaluatedProperties",
  "unevaluatedItems",
  "propertyNames",
  "patternProperties",
  "dependentSchemas",
  "oneOf",
  "anyOf",
  "allOf",
  "not",
  "if",
  "then",
  "else",
  "$defs",
  "definitions"
]

/**
 * Why a tool's `x-mcp-header` declarations break MCP 2026-07-28's rules (SEP-2243), or `undefined`: a header name
 * must be a non-empty RFC 9110 token, unique whatever its case, on a string, integer or boolean property reached by
 * `properties` alone. Over Streamable HTTP the SDK mirrors such arguments into `Mcp-Param-*` headers, and MCP asks
 * a client to leave out a tool whose declarations it could not honour. Asked only of a schema that has one
 * ({@link prepareSchema} says).
 */
const headerDeclarationProblem = (inputSchema: unknown): string | undefined => {
  const seen = new Map<string, string>()
  const visit = (node: unknown, path: ReadonlyArray<string>, reachable: boolean, depth: number): string | undefined => {
    if (!isRecord(node) || depth > MAX_SCHEMA_DEPTH) return undefined
    const where = path.length === 0 ? "the root" : path.join(".")
    if ("x-mcp-header" in node) {
      const header = node["x-mcp-header"]
      if (!reachable || path.length === 0) {
        return `${where}: x-mcp-header is allowed only on a property reached by properties`
      }
      if (typeof header !== "string" || header === "") return `${where}: x-mcp-header must be a non-empty string`
      if (!HTTP_TOKEN.test(header)) return `${where}: x-mcp-header ${JSON.stringify(header)} is not an HTTP token`
      if (!HEADER_TYPES.has(node.type)) return `${where}: x-mcp-header is allowed only on a string, integer or boolean`
      const earlier = seen.get(header.toLowerCase())
      if (earlier !== undefined) {
        return `x-mcp-header ${JSON.stringify(header)} is declared twice (also as ${JSON.stringify(earlier)})`
      }
      seen.set(header.toLowerCase(), header)
    }
    if (isRecord(node.properties)) {
      for (const [key, child] of Object.entries(node.properties)) {
        const problem = visit(child, [...path, key], reachable, depth + 1)
        if (problem !== undefined) return problem
      }
    }
    for (const keyword of UNREACHABLE_UNDER) {
      const sub = node[keyword]
      const branches = Array.isArray(sub) ? sub : isRecord(sub) && (keyword === "patternProperties" ||
          keyword === "dependentSchemas" || keyword === "$defs" || keyword === "definitions")
        ? Object.values(sub)
        : [sub]
      for (const branch of branches) {
        const problem = visit(branch, [...path, `<${keyword}>`], false, depth + 1)
        if (problem !== undefined) return problem
      }
    }
    return undefined
  }
  return visit(inputSchema, [], true, 0)
}

/** How deep {@link defaultsOptional} rewrites; a deeper schema is left as the server sent it below that. */
const MAX_SCHEMA_DEPTH = 64

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * A remote schema with every property that has a `default` taken out of `required`, at any depth; the same object
 * when there is none. zod 4 lists such properties as required (its input type would not), and the server fills the
 * default in for a call that leaves one out: checked as the server sent it, a call it would accept was refused
 * here. Copy-on-write: the server's objects are never changed. One pass over the keys a schema has (a listing of
 * 28 tools walked every keyword that can hold a schema at every level: 7 µs a tool).
 */
export const defaultsOptional = (schema: unknown): unknown => prepareSchema(schema).parameters

/** What one walk of a remote input schema finds. */
interface Walk {
  /** Whether a schema in it has an `x-mcp-header` (then {@link headerDeclarationProblem} looks closer). */
  declaresHeaders: boolean
}

/**
 * A remote input schema as its tool offers it ({@link defaultsOptional}), and whether it declares headers: one walk
 * of the schema, not one for each (a second walk was a sixth of making a listing's tools).
 */
export const prepareSchema = (schema: unknown): { readonly parameters: unknown; readonly declaresHeaders: boolean } => {
  const walk: Walk = { declaresHeaders: false }
  const parameters = optionalWhereDefault(schema, 0, walk)
  return { parameters, declaresHeaders: walk.declaresHeaders }
}

const optionalWhereDefault = (schema: unknown, depth: number, walk: Walk): unknown => {
  if (!isRecord(schema) || depth >= MAX_SCHEMA_DEPTH) return schema
  let out: Record<string, unknown> | undefined
  for (const key in schema) {
    const value = schema[key]
    let rewritten = value
    switch (key) {
      case "x-mcp-header":
        walk.declaresHeaders = true
        break
      case "required": {
        const properties = schema.properties
        if (!isRecord(properties) || !Array.isArray(value)) break
        const required = value.filter((name) =>
          !(typeof name === "string" && isRecord(properties[name]) && "default" in properties[name])
        )
        if (required.length !== value.length) rewritten = required
        break
      }
      // a schema
      case "additionalProperties":
      case "unevaluatedProperties":
      case "unevaluatedItems":
      case "not":
      case "if":
      case "then":
      case "else":
      case "contains":
      case "propertyNames":
        rewritten = optionalWhereDefault(value, depth + 1, walk)
        break
      // a schema, or a list of them
      case "items":
        rewritten = Array.isArray(value)
          ? optionalWhereDefaultEach(value, depth + 1, walk)
          : optionalWhereDefault(value, depth + 1, walk)
        break
      // a list of schemas
      case "anyOf":
      case "oneOf":
      case "allOf":
      case "prefixItems":
        if (Array.isArray(value)) rewritten = optionalWhereDefaultEach(value, depth + 1, walk)
        break
      // names to schemas
      case "properties":
      case "patternProperties":
      case "$defs":
      case "definitions":
      case "dependentSchemas":
        if (isRecord(value)) rewritten = optionalWhereDefaultIn(value, depth + 1, walk)
        break
    }
    if (rewritten !== value) (out ??= { ...schema })[key] = rewritten
  }
  return out ?? schema
}

const optionalWhereDefaultEach = (list: ReadonlyArray<unknown>, depth: number, walk: Walk): ReadonlyArray<unknown> => {
  let mapped: Array<unknown> | undefined
  for (let i = 0; i < list.length; i++) {
    const rewritten = optionalWhereDefault(list[i], depth, walk)
    if (rewritten !== list[i]) (mapped ??= [...list])[i] = rewritten
  }
  return mapped ?? list
}

const optionalWhereDefaultIn = (
  map: Record<string, unknown>,
  depth: number,
  walk: Walk
): Record<string, unknown> => {
  let mapped: Record<string, unknown> | undefined
  for (const name in map) {
    const rewritten = optionalWhereDefault(map[name], depth, walk)
    if (rewritten !== map[name]) (mapped ??= { ...map })[name] = rewritten
  }
  return mapped ?? map
}

/**
 * A remote tool as a tool named `name`. `mirrored`: the SDK mirrors its `x-mcp-header` arguments into headers (a
 * 2026-07-28 session over HTTP, and a schema that declares some).
 */
const remoteTool = (
  session: Session,
  remote: Sdk.Tool,
  name: string,
  parameters: Tool.JsonSchema,
  mirrored: boolean
): Tool.Dynamic => {
  const annotations = annotationsOf(remote)
  const title = remote.title ?? remote.annotations?.title
  const resource = override(session.settings.resource, remote.name, name)
  const sequential = override(session.settings.sequential, remote.name, name)
  const replay = override(session.settings.replay, remote.name, name)
  // a tool the server marks read-only cannot have changed the list without lying: no grace for it
  const grace = remote.annotations?.readOnlyHint !== true
  // sending a call again is safe by the server's word (read-only, idempotent) or the host's (replay: "safe")
  const safe = remote.annotations?.readOnlyHint === true || remote.annotations?.idempotentHint === true ||
    replay === "safe"
  // without its output schema: the SDK would compile one for every call given a definition
  const headers = mirrored ? { ...remote, outputSchema: undefined } : undefined
  const rules: CallRules = { grace, safe, plain: remote.outputSchema === undefined && headers === undefined, headers }
  return Tool.fromJsonSchema(name, {
    description: remote.description ?? title ?? "",
    title,
    annotations,
    // a property with a default is optional, whatever `required` says (see defaultsOptional)
    parameters,
    outputSchema: remote.outputSchema as Tool.JsonSchema | undefined,
    resource,
    sequential,
    replay,
    permission: session.settings.permission === undefined ? undefined : {
      action: session.settings.permission,
      describe: (args) => `call ${remote.name} on the ${session.label} with ${preview(args, 200)}`
    },
    handler: (args) => callTool(session, remote, name, rules, args)
  })
}

// ---------------------------------------------------------------------------------------------------------------
// one call
// ---------------------------------------------------------------------------------------------------------------

const failure = (tool: string, error: McpClientError): ToolFailure =>
  new ToolFailure({ tool, message: error.message, error })

/** An authorization that failed, or that this client could not have (it was given no `auth`). */
const unauthorized = (session: Session, error: unknown): McpClientError =>
  error instanceof McpClientError ? error : new McpClientError({
    reason: "Unauthorized",
    message: session.auth === undefined
      ? `the ${session.label} asks for authorization, and this client has no way to sign in (McpClient.http's auth): ${
        Auth.describe(error)
      }`
      : `authorizing with the ${session.label} failed: ${Auth.describe(error)}`,
    cause: error
  })

/** A call whose connection broke before the answer, as the call's error (see {@link recovering}). */
const broken = (session: Session, safe: boolean, error: unknown): McpClientError =>
  new McpClientError({
    reason: "Broken",
    message: safe
      ? `the connection to the ${session.label} broke before it answered, again after the call was sent once more`
      : `the connection to the ${session.label} broke before it answered: the call may have run there, and it is ` +
        `not sent again, since running it twice may not be safe (the server does not mark it read-only or ` +
        `idempotent, and the host did not give it replay: "safe")`,
    cause: error
  })

/** A failed request as the call's error. */
const callError = (session: Session, tool: string, safe: boolean, error: unknown): ToolError => {
  if (session.dead !== undefined) return failure(tool, session.dead)
  if (error instanceof McpClientError) return failure(tool, error)
  if (Sdk.isTimeout(error)) {
    const total = (Sdk.errorData(error) as { maxTotalTimeout?: unknown } | undefined)?.maxTotalTimeout !== undefined
    return new ToolTimeout({
      tool,
      timeout: Duration.millis(total ? session.settings.maxTotalMillis : session.settings.timeoutMillis)
    })
  }
  if (isBroken(error)) return failure(tool, broken(session, safe, error))
  if (Auth.isAuthFailure(error)) return failure(tool, unauthorized(session, error))
  if (Sdk.errorCode(error) === RESULT_TOO_LARGE_CODE) {
    const data = Sdk.errorData(error) as { bytes?: number } | undefined
    return failure(
      tool,
      new McpClientError({
        reason: "TooLarge",
        message: tooLargeMessage(session.settings.maxResultBytes, data?.bytes),
        cause: error
      })
    )
  }
  // the server's own answer to the call (an unknown tool, arguments it refused): its words, for the model
  const answered = Sdk.errorMessage(error)
  if (answered !== undefined) {
    return failure(tool, new McpClientError({ reason: "Request", message: withoutErrorPrefix(answered), cause: error }))
  }
  return failure(tool, requestError(session, "tools/call", "the call", error))
}

/**
 * Finishes the authorization the server asked for: the host's browser step, then the code redeemed (see
 * `Auth.authorize`). One at a time; a request that waited while another finished one (new tokens since it was
 * sent, `seen`) just goes again.
 */
const authorizeNow = (session: Session, seen: number): Effect.Effect<void, McpClientError> =>
  session.authorizing.withPermits(1)(Effect.suspend(() => {
    const auth = session.auth
    const transport = session.transport as Partial<Auth.Finisher>
    if (auth === undefined || typeof transport.finishAuth !== "function") {
      return Effect.fail(unauthorized(session, new Sdk.UnauthorizedError()))
    }
    if (auth.generation !== seen) return Effect.void
    return Auth.authorize(auth, transport as Auth.Finisher).pipe(
      Effect.flatMap((done) =>
        done ? Effect.void : Effect.fail(
          new Auth.McpAuthError({
            reason: "Redirect",
            message: "the server refused the token it was given, and no new authorization was started"
          })
        )
      ),
      Effect.mapError((error) => unauthorized(session, error))
    )
  }))

/**
 * A request of the session, sent again when what stopped it is mended: an authorization the server asked for
 * (after the browser step, {@link authorizeNow}), or a connection that broke before the answer when the request
 * is `safe` to repeat (a fresh request, on a fresh connection). Each at most once; the session's death and every
 * other failure are failures.
 */
const recovering = <A>(
  session: Session,
  safe: boolean,
  send: Effect.Effect<A, unknown>
): Effect.Effect<A, unknown> => {
  const attempt = (reissued: boolean, authorized: boolean): Effect.Effect<A, unknown> =>
    Effect.suspend(() => {
      const generation = session.auth?.generation ?? 0
      return Effect.catchAll(send, (error) => {
        if (session.dead !== undefined) return Effect.fail(error)
        if (safe && !reissued && isBroken(error)) return attempt(true, authorized)
        if (!authorized && session.auth !== undefined && Auth.isUnauthorized(error)) {
          return Effect.zipRight(authorizeNow(session, generation), attempt(reissued, true))
        }
        return Effect.fail(error)
      })
    })
  return attempt(false, false)
}

/**
 * One call: the request (with a progress token, the inactivity timeout reset by progress, and the total cap), its
 * progress forwarded as `Tool.progress` in order and before the result, the result's size checked and mapped, then
 * the wait the grace rule asks for. Interruption aborts the request and returns at once; the session's death fails
 * it at once. A call that needed an authorization, or whose connection broke, is sent again as
 * {@link recovering} says (inline here: a call is the hot path, and the layers of a wrapper cost it).
 */
const callTool = (
  session: Session,
  remote: Sdk.Tool,
  local: string,
  rules: CallRules,
  args: Record<string, unknown>
): Effect.Effect<ToolResult.ToolResult, ToolError> =>
  Effect.suspend(() =>
    session.dead !== undefined
      ? Effect.fail(failure(local, session.dead))
      : sendCall(session, remote, local, rules, args, session.notified, false, false)
  )

/** What a remote tool's calls follow: whether they wait out the grace, and whether sending one again is safe. */
interface CallRules {
  readonly grace: boolean
  readonly safe: boolean
  /** Whether the tool has no output schema and no `x-mcp-header` declarations: nothing for `callTool` to do. */
  readonly plain: boolean
  /** The definition the SDK mirrors `x-mcp-header` arguments from (2026-07-28 over HTTP), when it has any. */
  readonly headers: Sdk.Tool | undefined
}

const sendCall = (
  session: Session,
  remote: Sdk.Tool,
  local: string,
  rules: CallRules,
  args: Record<string, unknown>,
  seen: number,
  reissued: boolean,
  authorized: boolean
): Effect.Effect<ToolResult.ToolResult, ToolError> => {
  const settings = session.settings
  const meta = session.requestMeta
  const generation = session.auth?.generation ?? 0
  const call = new InFlight(session, (signal, onprogress) => {
    const params = meta === undefined
      ? { name: remote.name, arguments: args }
      : { name: remote.name, arguments: args, _meta: meta }
    const options = {
      signal,
      timeout: settings.timeoutMillis,
      resetTimeoutOnProgress: true,
      maxTotalTimeout: settings.maxTotalMillis,
      onprogress
    }
    // in a 2025 session, for a tool without an output schema, `callTool` adds nothing to the request but the cost
    // of looking up an output check there is none of, and of checking the result through the era's table
    if (!session.modern && rules.plain) {
      return session.client.request({ method: "tools/call", params }, Sdk.legacyCallToolResult, options)
    }
    return session.client.callTool(
      params,
      rules.headers === undefined ? options : { ...options, toolDefinition: rules.headers }
    )
  })
  return Effect.matchEffect(call.wait, {
    onFailure: (error) => {
      if (session.dead === undefined) {
        if (rules.safe && !reissued && isBroken(error)) {
          return sendCall(session, remote, local, rules, args, seen, true, authorized)
        }
        if (!authorized && session.auth !== undefined && Auth.isUnauthorized(error)) {
          return Effect.zipRight(
            Effect.mapError(authorizeNow(session, generation), (reason) => failure(local, reason)),
            sendCall(session, remote, local, rules, args, seen, reissued, true)
          )
        }
      }
      return Effect.zipRight(
        session.settled,
        Effect.suspend(() => Effect.fail(callError(session, local, rules.safe, error)))
      )
    },
    onSuccess: (raw) => {
      if (exceedsBytes(raw, settings.maxResultBytes)) {
        return Effect.fail(
          failure(local, new McpClientError({ reason: "TooLarge", message: tooLargeMessage(settings.maxResultBytes) }))
        )
      }
      const outcome = fromCallToolResult(local, raw as CallToolResult)
      const wait = afterCall(session, seen, rules.grace)
      return wait === undefined ? outcome : Effect.zipRight(wait, outcome)
    }
  })
}

/**
 * The grace rule. A call that saw `tools/list_changed` returns once a listing that started after it has ended, so
 * the next turn offers the new tools. A call that saw none returns at once, unless the server has been seen to send
 * its notification after the result of the call that made the change (on a timer, as the Go SDK does, or on
 * another stream, as Streamable HTTP carries it): then it waits up to the grace for one, and for its listing. Never
 * for tools the server marks read-only, nor for servers that do not announce changes; the wait also ends if the
 * session dies. A server that sends its notification before its result (what the SDKs do on the request's own
 * stream) never costs a wait; a late one costs it from its first late notification on. `undefined` for no wait.
 */
const afterCall = (session: Session, seen: number, grace: boolean): Effect.Effect<void> | undefined => {
  const landed = Effect.suspend(() => {
    const target = session.notified
    return waitUntil(session, () => session.landed >= target || session.dead !== undefined)
  })
  if (session.notified > seen) return landed
  if (!grace || !session.listChanged || session.settings.graceMillis <= 0) return undefined
  if (!session.lateNotifier) {
    session.quietEnd = Date.now()
    return undefined
  }
  return Peer.race(
    waitUntil(session, () => session.notified > seen || session.dead !== undefined),
    Process.realSleep(session.settings.graceMillis)
  ).pipe(Effect.zipRight(Effect.suspend(() => {
    if (session.notified > seen) return landed
    session.quietEnd = Date.now()
    return Effect.void
  })))
}

// ---------------------------------------------------------------------------------------------------------------
// listings
// ---------------------------------------------------------------------------------------------------------------

/** One page of `tools/list`, checked by the SDK against the session's revision. */
const requestPage = (
  session: Session,
  params: { readonly cursor?: string; readonly _meta?: Record<string, unknown> },
  signal: AbortSignal,
  timeout: number
) => session.client.request({ method: "tools/list", params }, { signal, timeout })

type ListPage = Awaited<ReturnType<typeof requestPage>>

/** `outcome` the first time, `send` after: a page sent again by {@link recovering} is a new request. */
const answeredThen = <A>(
  outcome: Exit.Exit<A, unknown>,
  send: Effect.Effect<A, unknown>
): Effect.Effect<A, unknown> => {
  let used = false
  return Effect.suspend(() => {
    if (used) return send
    used = true
    return outcome
  })
}

/**
 * Every page of the server's list, at most `maxTools` tools in all, before `deadline` (`Date.now()` time): each
 * request is given the time left as its timeout, and `late()` is the error when it runs out. `first`: the first page,
 * if it was asked for already ({@link attempt}).
 */
const listPages = (
  session: Session,
  deadline: number,
  late: () => McpClientError,
  first: Prefetched | undefined
): Effect.Effect<ReadonlyArray<Sdk.Tool>, McpClientError> =>
  Effect.gen(function*() {
    const tools: Array<Sdk.Tool> = []
    const cursors = new Set<string>()
    let cursor: string | undefined
    for (let page = 0; page < MAX_PAGES; page++) {
      // the first page may have been asked for already: its answer is taken as it came, a failure by the same rules;
      // it was asked for in time (its own timeout was the time), however late the listing gets to it
      const asked = page === 0 ? first?.outcome : undefined
      if (session.dead !== undefined) return yield* Effect.fail(session.dead)
      if (asked === undefined && Date.now() >= deadline) return yield* Effect.fail(late())
      const meta = session.requestMeta
      const params = { ...(cursor === undefined ? {} : { cursor }), ...(meta === undefined ? {} : { _meta: meta }) }
      const send = inFlight(
        session,
        (signal) => requestPage(session, params, signal, Math.max(1, deadline - Date.now()))
      )
      const result = asked !== undefined && Exit.isSuccess(asked) ? asked.value : yield* Effect.catchAll(
        // one page per request: the SDK's own `listTools()` walks every page itself, past our bounds; a listing is
        // safe to send again
        recovering(session, true, asked === undefined ? send : answeredThen(asked, send)),
        (error) =>
          // a request's timeout is the time the listing had left
          session.dead === undefined && Sdk.isTimeout(error) ? Effect.fail(late()) : Effect.zipRight(
            session.settled,
            Effect.suspend(() => Effect.fail(requestError(session, "tools/list", "listing the tools", error)))
          )
      )
      if (tools.length + result.tools.length > session.settings.maxTools) {
        return yield* Effect.fail(
          new McpClientError({
            reason: "TooLarge",
            message: `the ${session.label} lists more than ${session.settings.maxTools} tools, the limit (maxTools)`
          })
        )
      }
      tools.push(...result.tools)
      cursor = result.nextCursor
      if (cursor === undefined || cursors.has(cursor)) return tools
      cursors.add(cursor)
    }
    // a list that has not ended is not the server's list: never a silent part of it
    return yield* Effect.fail(
      new McpClientError({
        reason: "TooLarge",
        message: `the ${session.label} did not end its tool list within ${MAX_PAGES} pages`
      })
    )
  })

/**
 * The server's tools, listed (every page) within `millis` of real time, and made tools: a server that pages slowly,
 * or without end, cannot hold a connect or a refresh past its timeout. The time is the requests' own timeouts (the
 * time left, each), not a timer raced against the listing: a race forks two fibers, a fifth of the Effect work of
 * a connection.
 */
const listTools = (
  session: Session,
  millis: number,
  first?: Prefetched | undefined
): Effect.Effect<Snapshot, McpClientError> =>
  Effect.suspend(() => {
    const late = () =>
      new McpClientError({
        reason: "Request",
        message: `the ${session.label} did not finish listing its tools within ${
          Duration.format(Duration.millis(millis))
        }`
      })
    // a first page asked for already counts against the time, from when it was asked for
    const deadline = (first?.startedAt ?? Date.now()) + millis
    return Effect.flatMap(listPages(session, deadline, late, first), (listed) => toSnapshot(session, listed))
  })

/**
 * Lists the tools and swaps the snapshot; one listing at a time. Whatever the outcome, the notifications counted
 * when it started are covered (`landed`), so calls waiting for them return; a failure keeps the old snapshot.
 */
const refreshNow = (session: Session): Effect.Effect<Snapshot, McpClientError> =>
  session.lock.withPermits(1)(Effect.suspend(() => {
    const target = session.notified
    session.requested = Math.max(session.requested, target)
    return listTools(session, session.settings.timeoutMillis).pipe(
      Effect.tap((snapshot) =>
        Effect.sync(() => {
          if (!session.closed) session.snapshot = snapshot
        })
      ),
      Effect.ensuring(Effect.sync(() => {
        session.landed = Math.max(session.landed, target)
        signal(session)
      }))
    )
  }))

/**
 * The snapshot, once a listing has covered every `tools/list_changed` already received (the follower's listing,
 * bounded by `timeout`): a host that reads the toolkit for its next turn just after a late notification offers the
 * new tools. At once when nothing is pending, or the session is dead.
 */
const current = (session: Session): Effect.Effect<Snapshot> =>
  Effect.suspend(() => {
    if (session.landed >= session.notified || session.dead !== undefined) return Effect.succeed(session.snapshot)
    const target = session.notified
    return Effect.map(
      waitUntil(session, () => session.landed >= target || session.dead !== undefined),
      () => session.snapshot
    )
  })

/** Follows `tools/list_changed`: one listing for any number of notifications that arrived before it started. */
const follower = (session: Session): Effect.Effect<never> =>
  Effect.forever(
    Effect.zipRight(
      waitUntil(session, () => session.notified > session.requested),
      Effect.catchAll(refreshNow(session), (error) =>
        Effect.logWarning(
          `refreshing the tools of the ${session.label} failed; keeping the ${session.snapshot.tools.length} tools ` +
            `listed before: ${error.message}`
        ))
    )
  )

// ---------------------------------------------------------------------------------------------------------------
// answering a server's questions
// ---------------------------------------------------------------------------------------------------------------

/**
 * A server's `elicitation/create`, asked of the `Elicitor` the session was made with. An accepted form comes
 * back with the form's defaults filled in for the fields the answer leaves out (SEP-1034). The server cancelling
 * its request interrupts the asking; an `Elicitor` that fails is answered with an error the server can read.
 */
const answerElicitation = async (
  runtime: Runtime.Runtime<never>,
  elicitor: Elicitation.Elicitor["Type"],
  params: Parameters<typeof Elicit.fromParams>[0],
  signal: AbortSignal
) => {
  const request = Elicit.fromParams(params)
  const exit = await Runtime.runPromiseExit(runtime)(elicitor.elicit(request), { signal })
  if (Exit.isFailure(exit)) {
    // a plain Error: the SDK answers it as an internal error (-32603) whose message is ours, unprefixed
    const failure = Option.getOrUndefined(Cause.failureOption(exit.cause))
    throw new Error(failure === undefined ? "the question could not be asked" : failure.message)
  }
  const result = exit.value
  return Elicit.toElicitResult(
    result._tag === "Accept" && request.mode === "form"
      ? Elicitation.accept(Elicit.withDefaults(request.requestedSchema, result.content))
      : result
  )
}

/** What a server's `sampling/createMessage` asks, as `McpClient.Sampler` takes it (fields MCP does not define left out). */
const samplingRequestOf = (params: Record<string, unknown>): McpServer.SamplingRequest => {
  const picked: Record<string, unknown> = {}
  for (
    const key of [
      "messages",
      "maxTokens",
      "systemPrompt",
      "temperature",
      "stopSequences",
      "modelPreferences",
      "includeContext",
      "metadata"
    ]
  ) {
    if (params[key] !== undefined) picked[key] = params[key]
  }
  return picked as unknown as McpServer.SamplingRequest
}

/**
 * A server's request for a completion, answered by the host's `Sampler`; the server cancelling its request
 * interrupts it, and a failure is answered as an error whose message is the failure's.
 */
const answerSampling = async (
  runtime: Runtime.Runtime<never>,
  sampler: McpClient.Sampler,
  params: Record<string, unknown>,
  signal: AbortSignal
) => {
  const exit = await Runtime.runPromiseExit(runtime)(sampler(samplingRequestOf(params)), { signal })
  if (Exit.isFailure(exit)) {
    const failure = Option.getOrUndefined(Cause.failureOption(exit.cause))
    throw new Error(failure?.message ?? "the host's model could not answer")
  }
  const { content, model, role, stopReason } = exit.value
  // our content parts are MCP's, read-only
  return { role, content: content as Sdk.SamplingContent, model, ...(stopReason === undefined ? {} : { stopReason }) }
}

// ---------------------------------------------------------------------------------------------------------------
// ending
// ---------------------------------------------------------------------------------------------------------------

/** A transport with an HTTP session to end. */
interface Terminable extends Sdk.Transport {
  readonly sessionId: string
  readonly terminateSession: () => Promise<void>
}

const hasSessionToEnd = (transport: Sdk.Transport): transport is Terminable =>
  typeof (transport as { readonly terminateSession?: unknown }).terminateSession === "function" &&
  transport.sessionId !== undefined

/** How long closing waits for the server to answer the `DELETE` that ends an HTTP session. */
const END_SESSION_MILLIS = 2_000

/**
 * Ends an HTTP session the way MCP asks a client that is done with one: a `DELETE` with its session id, so the
 * server frees it now rather than when it expires (servers in the wild kept every session a client left). Any
 * transport that can (the SDK's Streamable HTTP, ours or one handed to `connect`), and only when there is a session
 * (2026-07-28 has none); bounded, and whatever the answer (`405` included), closing goes on.
 */
const endSession = (transport: Terminable): Promise<void> => {
  let timer: ReturnType<typeof setTimeout> | undefined
  return Promise.race([
    transport.terminateSession().catch(() => undefined),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, END_SESSION_MILLIS)
    })
  ]).finally(() => clearTimeout(timer))
}

// ---------------------------------------------------------------------------------------------------------------
// connecting
// ---------------------------------------------------------------------------------------------------------------

export const STDIO_PROBE_TIMEOUT: Duration.DurationInput = "5 seconds"

/** How many times `connect` finishes an authorization and tries again before it gives up. */
const MAX_AUTHORIZATIONS = 2

/** The pause before a 2026-07-28 session listens for changes again after the stream dropped. */
const RELISTEN_MILLIS = 1_000

const millis = (input: Duration.DurationInput): number => Duration.toMillis(Duration.decode(input))

/** `input` in milliseconds, or `fallback` (already in milliseconds) when it is not given. */
const millisOr = (input: Duration.DurationInput | undefined, fallback: number): number =>
  input === undefined ? fallback : millis(input)

/** The default durations in milliseconds, decoded once (`"60 seconds"` is parsed each time it is decoded). */
const DEFAULT_MILLIS = {
  timeout: millis(DEFAULT_TIMEOUT),
  maxTotal: millis(DEFAULT_MAX_TOTAL_TIMEOUT),
  connect: millis(DEFAULT_CONNECT_TIMEOUT),
  grace: millis(DEFAULT_NOTIFICATION_GRACE)
}

const isStdio = (transport: McpClient.Transport): transport is McpClient.StdioTransport =>
  (transport as { _tag?: unknown })._tag === "StdioTransport" && !("send" in transport)

const isHttp = (transport: McpClient.Transport): transport is McpClient.HttpTransport =>
  (transport as { _tag?: unknown })._tag === "HttpTransport" && !("send" in transport)

/** `node server.js`, `npx @scope/server`: the command and its first operand, without directories. */
const commandLabel = (command: string, args: ReadonlyArray<string>): string => {
  const operand = args.find((arg) => !arg.startsWith("-"))
  return [command, ...(operand === undefined ? [] : [operand])].map((part) => Path.basename(part)).join(" ")
}

/** The options checked (a bad one is a defect, like a bad regexp literal), with their defaults. */
const settingsOf = (options: McpClient.Options): Effect.Effect<Settings> =>
  Effect.suspend(() => {
    if (options.prefix !== undefined && !/^[a-zA-Z0-9_-]{1,61}$/.test(options.prefix)) {
      return Effect.dieMessage(
        `invalid MCP client prefix ${JSON.stringify(options.prefix)}: a prefix is letters, digits, "_" or "-"`
      )
    }
    if (options.maxResultBytes !== undefined && !Lines.isLineCap(options.maxResultBytes + ENVELOPE_BYTES)) {
      return Effect.dieMessage(
        `invalid maxResultBytes ${options.maxResultBytes}: a positive integer up to ${
          Lines.MAX_LINE_CAP - ENVELOPE_BYTES
        } is needed`
      )
    }
    if (options.maxTools !== undefined && !(Number.isInteger(options.maxTools) && options.maxTools >= 0)) {
      return Effect.dieMessage(`invalid maxTools ${options.maxTools}: a non-negative integer is needed`)
    }
    return Effect.succeed({
      prefix: options.prefix,
      resource: options.resource ?? {},
      sequential: options.sequential ?? {},
      timeoutMillis: millisOr(options.timeout, DEFAULT_MILLIS.timeout),
      maxTotalMillis: millisOr(options.maxTotalTimeout, DEFAULT_MILLIS.maxTotal),
      connectMillis: millisOr(options.connectTimeout, DEFAULT_MILLIS.connect),
      graceMillis: millisOr(options.notificationGrace, DEFAULT_MILLIS.grace),
      maxResultBytes: options.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES,
      maxTools: options.maxTools ?? DEFAULT_MAX_TOOLS,
      permission: options.permission,
      replay: options.replay ?? {},
      revision: options.revision ?? "auto",
      logLevel: options.logLevel,
      sampling: options.sampling
    })
  })

/** What every attempt at a session shares. */
interface Dialing {
  readonly settings: Settings
  readonly clientInfo: { readonly name: string; readonly version: string; readonly title?: string }
  readonly elicitor: Option.Option<Elicitation.Elicitor["Type"]>
  readonly runtime: Runtime.Runtime<never>
  readonly auth: Auth.OAuthProvider | undefined
  readonly authProvider: Sdk.OAuthClientProvider | undefined
}

/** Why an attempt failed, and what the next one could do about it. */
class AttemptFailed {
  constructor(
    readonly error: McpClientError,
    /** The server asked for an authorization, which this transport can finish. */
    readonly finisher: Auth.Finisher | undefined,
    /** A spawned server ended while its revision was being negotiated (it may exit on the probe). */
    readonly endedInProbe: boolean,
    /** The attempt's session, to close, once it had a client. */
    readonly session: Session | undefined
  ) {}
}

/** A session's tools before its first listing, and after it is closed. */
const noTools: Snapshot = { tools: [], toolkit: Toolkit.make() }

const newSession = (dialing: Dialing, lock: Effect.Semaphore, authorizing: Effect.Semaphore): Session => ({
  client: undefined as unknown as Sdk.Client,
  transport: undefined as unknown as Sdk.Transport,
  settings: dialing.settings,
  auth: dialing.auth,
  authorizing,
  modern: false,
  requestMeta: undefined,
  mirrorsHeaders: false,
  label: "MCP server",
  dead: undefined,
  inFlight: new Set(),
  connected: false,
  closed: false,
  settled: Effect.void,
  withStderr: (message) => message,
  pulse: undefined,
  notified: 0,
  follow: () => {},
  requested: 0,
  landed: 0,
  listChanged: false,
  lateNotifier: false,
  quietEnd: Number.NEGATIVE_INFINITY,
  snapshot: noTools,
  prefetched: undefined,
  lock
})

// a closed session's error has no stack of its own: it reads as an error made with an empty stack trace would (as
// the executor's errors do); one made by the constructor keeps its own
Object.defineProperty(McpClientError.prototype, "stack", {
  get(this: Error) {
    return `${this.name}: ${this.message}`
  },
  configurable: true
})

/**
 * The error of a session whose client was closed, for the calls that come after: made as its constructor makes it,
 * without the constructor's work (`makeErrorValue`: no check of fields that are ours, no stack, which would show the
 * scope's finalizer). Every connection's close makes one; checked and with a stack it cost 40 to 80 µs of a 3 ms
 * connection (row 12).
 */
const closedError = (session: Session): McpClientError =>
  ToolInternal.makeErrorValue(McpClientError, {
    reason: "Closed",
    message: `the MCP client of the ${session.label} was closed`
  })

/** The transport of an attempt with a spawned server: the process, in `scope`, and our transport over its pipes. */
const spawnTransport = (
  session: Session,
  spec: McpClient.StdioTransport,
  scope: Scope.Scope
): Effect.Effect<Sdk.Transport, McpClientError> =>
  Effect.gen(function*() {
    const settings = session.settings
    session.label = `MCP server (${commandLabel(spec.command, spec.args)})`
    const maxLineBytes = settings.maxResultBytes + ENVELOPE_BYTES
    const peer = yield* Scope.extend(
      Peer.start<Violation>({
        command: spec.command,
        args: spec.args,
        env: spec.env,
        cwd: spec.cwd,
        maxLineBytes,
        subject: () => `the ${session.label}`,
        ...(spec.killGrace === undefined ? {} : { killGraceMillis: millis(spec.killGrace) })
      }),
      scope
    ).pipe(
      Effect.mapError((error) =>
        new McpClientError({
          reason: "Spawn",
          message: `the ${session.label} could not be started: ${error.reason}`,
          cause: error
        })
      )
    )
    const child = new ChildTransport(peer, { maxLineBytes, maxResultBytes: settings.maxResultBytes })
    session.settled = peer.settled
    session.withStderr = (message) => peer.withStderr(message)
    // the server's end (it exited, or broke the protocol): calls fail at once, then the transport closes
    peer.onEnd((end) => {
      markDead(
        session,
        new McpClientError({ reason: end._tag === "Exited" ? "Closed" : end.detail, message: peer.describe(end) })
      )
      void child.close()
    })
    deliverResponsesLast(child)
    return child
  })

/** The transport of an attempt over HTTP (ours), or the one handed to `connect`. */
const openTransport = (session: Session, spec: McpClient.Transport, dialing: Dialing): Sdk.Transport => {
  if (isHttp(spec)) {
    session.label = `MCP server at ${spec.url.origin}${spec.url.pathname}`
    const http = new Sdk.StreamableHTTPClientTransport(spec.url, {
      ...(spec.headers === undefined ? {} : { requestInit: { headers: { ...spec.headers } } }),
      ...(dialing.authProvider === undefined ? {} : { authProvider: dialing.authProvider })
    })
    watchRequests(http)
    return http
  }
  const given = spec as Sdk.Transport
  if ((given as { hasPerRequestStream?: unknown }).hasPerRequestStream === true) watchRequests(given)
  else deliverResponsesLast(given)
  return given
}

/** A client of the SDK's for an attempt, with every handler the session answers with. */
const makeClient = (session: Session, dialing: Dialing, transport: Sdk.Transport): Sdk.Client => {
  const { elicitor, runtime, settings } = dialing
  const capabilities: Sdk.ClientCapabilities = {
    // an Elicitor in the context is someone to ask: the client offers forms and pages to servers
    ...(Option.isSome(elicitor) ? { elicitation: { form: {}, url: {} } } : {}),
    ...(settings.sampling === undefined ? {} : { sampling: {} })
  }
  const stdio = (transport as { readonly pid?: unknown }).pid !== undefined
  const client = new Sdk.Client(dialing.clientInfo, {
    capabilities,
    versionNegotiation: settings.revision === "legacy"
      ? { mode: "legacy" }
      : {
        mode: settings.revision === "auto" ? "auto" : { pin: settings.revision },
        // over stdio a silent probe means a server of the 2025 revisions; over HTTP, an outage
        probe: {
          timeoutMs: stdio ? Math.min(millis(STDIO_PROBE_TIMEOUT), settings.connectMillis) : settings.connectMillis
        }
      }
  })
  // errors the SDK reports out of band (a response to a cancelled request, a stream that dropped) are not the
  // outcome of any call; the ones that are reach their call through its promise
  client.onerror = () => {}
  client.onclose = () => {
    // after the session's own end (its scope closing, its server's death) there is nothing to say
    if (!session.connected || session.dead !== undefined) return
    markDead(
      session,
      new McpClientError({
        reason: "Closed",
        message: session.withStderr(`the connection to the ${session.label} closed`)
      })
    )
  }
  client.setNotificationHandler("notifications/tools/list_changed", () => {
    // soon after a call that saw none: this server announces its changes after the result (see afterCall)
    if (Date.now() - session.quietEnd <= LATE_NOTIFICATION_MILLIS) session.lateNotifier = true
    session.notified++
    signal(session)
    session.follow()
  })
  if (Option.isSome(elicitor)) {
    client.setRequestHandler(
      "elicitation/create",
      (request, ctx) => answerElicitation(runtime, elicitor.value, request.params, ctx.mcpReq.signal)
    )
  }
  const sampling = settings.sampling
  if (sampling !== undefined) {
    client.setRequestHandler(
      "sampling/createMessage",
      (request, ctx) => answerSampling(runtime, sampling, request.params as Record<string, unknown>, ctx.mcpReq.signal)
    )
  }
  const logLevel = settings.logLevel
  if (logLevel !== undefined) {
    client.setNotificationHandler("notifications/message", (notification) => {
      const { data, level, logger } = notification.params
      Runtime.runSync(runtime)(
        Effect.logWithLevel(Logging.fromMcp(level), typeof data === "string" ? data : JSON.stringify(data)).pipe(
          Effect.annotateLogs({
            "mcp.server": session.label,
            ...(logger === undefined ? {} : { "mcp.logger": logger })
          })
        )
      )
    })
  }
  return client
}

/** `initialize` (or `server/discover`) failed: why, in words. */
const handshakeError = (session: Session, error: unknown): McpClientError => {
  if (Sdk.isTimeout(error)) {
    return new McpClientError({
      reason: "Initialize",
      message: session.withStderr(
        `the ${session.label} did not answer ${
          session.settings.revision === "legacy" ? "initialize" : "server/discover or initialize"
        } within ${Duration.format(Duration.millis(session.settings.connectMillis))}`
      ),
      cause: error
    })
  }
  if (session.dead !== undefined) return session.dead
  if (Auth.isAuthFailure(error)) return unauthorized(session, error)
  const malformed = Sdk.malformedResult(error)
  // what an HTTP server said with its error status (the SDK keeps it beside its message)
  const body = Sdk.httpErrorText(error)
  const reason = body === undefined || reasonOf(error).includes(body) ? reasonOf(error) : `${reasonOf(error)}: ${body}`
  return new McpClientError({
    reason: "Initialize",
    message: session.withStderr(
      malformed === undefined
        ? `initialize with the ${session.label} failed: ${reason}`
        : `the ${session.label} sent a malformed initialize result: ${malformed}`
    ),
    cause: error
  })
}

/**
 * Ends a session, once: calls in flight fail at once, saying so (rather than holding the close), an HTTP session
 * is ended with a `DELETE`, the transport is closed. It waits only where something is left to wait for: the
 * `DELETE`, or the close of a transport handed to `connect`. Ours do their closing synchronously (the SDK's HTTP
 * transport aborts its requests, a spawned server's input is ended and its scope ends the process), so their
 * close is not awaited: a wait on a promise with nothing left to do cost a connection a resumption of its fiber.
 */
const closeSession = (session: Session, handed: boolean): Effect.Effect<void> =>
  Effect.suspend(() => {
    if (session.closed) return Effect.void
    session.closed = true
    // a closed session lists no tools, and lets go of them: a closed connection stays reachable for the young
    // generation until a full collection (undici registers each fetch and response in a FinalizationRegistry, whose
    // targets V8's scavenger keeps), and must not carry a listing and its tools through the scavenges in between
    session.snapshot = noTools
    session.prefetched = undefined
    const { client, transport } = session
    const ending = session.connected && session.dead === undefined && hasSessionToEnd(transport)
    if (session.dead === undefined) markDead(session, closedError(session))
    if (!ending && !handed) {
      client.close().catch(() => undefined)
      return Effect.void
    }
    return Effect.promise(async () => {
      if (ending) await endSession(transport)
      await client.close().catch(() => undefined)
    })
  })

/** A transport handed to `connect` (SSE, WebSocket, one of the host's), rather than one we made. */
const isHanded = (spec: McpClient.Transport): boolean => !isStdio(spec) && !isHttp(spec)

/**
 * One attempt at a session: the transport, a client, and the handshake (`server/discover` or `initialize`).
 * `scope` is the one the session is closed with ({@link closeSession}); a spawned server's process belongs to it
 * too. An attempt that fails is closed by the caller.
 */
const attempt = (
  spec: McpClient.Transport,
  dialing: Dialing,
  locks: { readonly lock: Effect.Semaphore; readonly authorizing: Effect.Semaphore },
  scope: Scope.Scope
): Effect.Effect<Session, AttemptFailed> =>
  Effect.gen(function*() {
    const session = newSession(dialing, locks.lock, locks.authorizing)
    const transport = isStdio(spec)
      ? yield* Effect.mapError(
        spawnTransport(session, spec, scope),
        (error) => new AttemptFailed(error, undefined, false, undefined)
      )
      : openTransport(session, spec, dialing)
    const client = makeClient(session, dialing, transport)
    session.client = client
    session.transport = transport
    yield* Scope.addFinalizer(scope, closeSession(session, isHanded(spec)))

    // not raced with the session's death: a death always closes the transport, which fails the handshake, and
    // the SDK closes the transport itself when it times out (a death that must not hide the timeout)
    const connectMillis = session.settings.connectMillis
    yield* promise((signal, disarm) =>
      client.connect(transport, { signal, timeout: connectMillis }).then(() => {
        // connected from now on: the connection closing is the session's death
        session.connected = true
        session.modern = client.getProtocolEra() === "modern"
        session.mirrorsHeaders = session.modern && !isStdio(spec)
        // with no log level to set first, the listing's first page is asked for in the same wait (one resumption
        // of the fiber fewer: 2% of a connection over HTTP, row 12); it is bounded by its own timeout, not the
        // handshake's, and its outcome, whatever it is, is the first listing's to take
        if (session.settings.logLevel !== undefined) return
        disarm()
        const startedAt = Date.now()
        return requestPage(session, {}, signal, connectMillis).then(
          (page) => void (session.prefetched = { startedAt, outcome: Exit.succeed(page) }),
          (error) => void (session.prefetched = { startedAt, outcome: Exit.fail(error) })
        )
      }), {
      millis: connectMillis,
      // the whole handshake (the probe, then initialize) is under connectTimeout, said as the SDK says a timeout
      onTimeout: () => new Sdk.SdkError(Sdk.SdkErrorCode.RequestTimeout, "the handshake timed out")
    }).pipe(
      Effect.catchAll((error) => Effect.zipRight(session.settled, Effect.fail(error))),
      Effect.mapError((error) => {
        const mapped = handshakeError(session, error)
        const finishing = Auth.isUnauthorized(error) &&
          typeof (transport as Partial<Auth.Finisher>).finishAuth === "function"
        return new AttemptFailed(
          mapped,
          finishing ? transport as unknown as Auth.Finisher : undefined,
          isStdio(spec) && session.dead !== undefined,
          session
        )
      })
    )
    return session
  })

/**
 * Keeps a 2026-07-28 session told of changes to the server's tools: there, `tools/list_changed` comes on a
 * `subscriptions/listen` stream the client opens. A stream that drops is opened again after a pause, and counts as
 * a change (one may have been missed).
 */
const listener = (session: Session): Effect.Effect<void> =>
  Effect.acquireUseRelease(
    promise((signal) =>
      session.client.listen({ toolsListChanged: true }, { signal, timeout: session.settings.timeoutMillis })
    ),
    (subscription) => Effect.promise(() => subscription.closed),
    (subscription) => Effect.promise(() => subscription.close().catch(() => undefined))
  ).pipe(
    Effect.flatMap((how) => {
      // closed by us, or by the server on purpose: nothing more will come
      if (how !== "remote" || session.dead !== undefined) return Effect.never
      session.notified++
      signal(session)
      session.follow()
      return Effect.void
    }),
    Effect.catchAll((error) =>
      Effect.logWarning(`listening for tool changes of the ${session.label} failed: ${reasonOf(error)}`)
    ),
    Effect.zipRight(Process.realSleep(RELISTEN_MILLIS)),
    Effect.zipRight(Effect.suspend(() => (session.dead === undefined ? listener(session) : Effect.never)))
  )

export const connect = (
  transport: McpClient.Transport,
  options: McpClient.Options
): Effect.Effect<McpClient.McpClient, McpClientError, Scope.Scope> =>
  Effect.gen(function*() {
    const settings = yield* settingsOf(options)
    const info = options.clientInfo
    const auth = isHttp(transport) && transport.auth !== undefined && Auth.isOAuth(transport.auth)
      ? yield* Auth.providerFor(transport.auth, transport.url).pipe(
        Effect.mapError((error) =>
          new McpClientError({ reason: "Unauthorized", message: Auth.describe(error), cause: error })
        )
      )
      : undefined
    // one read of the context for the scope, the elicitor and the runtime the session's callbacks run in
    const runtime = yield* Effect.runtime<Scope.Scope>()
    const outer = Context.get(runtime.context, Scope.Scope)
    const dialing: Dialing = {
      settings,
      clientInfo: info === undefined
        ? { name: "effect-agent-tools", version: "0.1.0" }
        : { name: info.name, version: info.version, ...(info.title === undefined ? {} : { title: info.title }) },
      elicitor: Elicit.providedIn(runtime.context),
      runtime,
      auth,
      authProvider: auth ??
        (isHttp(transport) && transport.auth !== undefined && !Auth.isOAuth(transport.auth)
          ? transport.auth
          : undefined)
    }
    const locks = { lock: Effect.unsafeMakeSemaphore(1), authorizing: Effect.unsafeMakeSemaphore(1) }

    // attempts: again after the browser step when the server asked for an authorization, and with initialize
    // alone on a fresh process when a spawned server ended on the server/discover probe
    let current = dialing
    let authorizations = 0
    for (;;) {
      // a spawned server's process is its attempt's: a scope of its own, closed when the attempt fails; any other
      // session is closed on the caller's scope, or at once when its attempt fails (a scope made and closed for
      // nothing cost a connection over HTTP 30 µs). The scope is passed, not provided: providing it is a copy of
      // the context and a comparison of two, each time.
      const own = isStdio(transport) ? yield* Scope.fork(outer, ExecutionStrategy.sequential) : undefined
      const scope = own ?? outer
      const exit = yield* Effect.exit(attempt(transport, current, locks, scope))
      if (Exit.isSuccess(exit)) return yield* established(exit.value, scope, runtime)
      if (own !== undefined) yield* Scope.close(own, exit)
      const failed = Option.getOrUndefined(Cause.failureOption(exit.cause))
      if (failed === undefined) return yield* Effect.failCause(exit.cause as Cause.Cause<never>)
      if (failed.session !== undefined) yield* closeSession(failed.session, isHanded(transport))
      if (failed.finisher !== undefined && auth !== undefined && authorizations < MAX_AUTHORIZATIONS) {
        authorizations++
        const done = yield* Auth.authorize(auth, failed.finisher).pipe(
          Effect.mapError((error) =>
            new McpClientError({
              reason: "Unauthorized",
              message: `authorizing with the MCP server at ${auth.server.origin}${auth.server.pathname} failed: ${
                Auth.describe(error)
              }`,
              cause: error
            })
          )
        )
        if (done) continue
      }
      if (failed.endedInProbe && current.settings.revision === "auto") {
        current = { ...current, settings: { ...current.settings, revision: "legacy" } }
        continue
      }
      return yield* Effect.fail(failed.error)
    }
  })

/** A session that completed its handshake: its log level, its change listener, its first listing, its value. */
const established = (
  session: Session,
  scope: Scope.Scope,
  runtime: Runtime.Runtime<never>
): Effect.Effect<McpClient.McpClient, McpClientError> =>
  Effect.gen(function*() {
    const { client, settings } = session
    const version = client.getServerVersion()
    const serverInfo: McpClient.ServerInfo = {
      name: version?.name ?? "",
      version: version?.version ?? "",
      ...(version?.title === undefined ? {} : { title: version.title })
    }
    if (serverInfo.name !== "") session.label = `MCP server ${preview(serverInfo.name, 100)}`
    const capabilities = client.getServerCapabilities()
    session.listChanged = capabilities?.tools?.listChanged === true
    const logLevel = settings.logLevel
    if (logLevel !== undefined && capabilities?.logging !== undefined) {
      if (session.modern) {
        // 2026-07-28 has no logging/setLevel: each request says the level it wants its log messages at
        session.requestMeta = { [Sdk.LOG_LEVEL_META_KEY]: Logging.toMcp(logLevel) }
      } else {
        yield* Effect.catchAll(
          inFlight(
            session,
            (signal) => client.setLoggingLevel(Logging.toMcp(logLevel), { signal, timeout: settings.connectMillis })
          ),
          (error) => Effect.fail(requestError(session, "logging/setLevel", "setting the log level", error))
        )
      }
    }
    if (session.modern && session.listChanged) yield* Effect.forkIn(listener(session), scope)

    const first = session.prefetched
    session.prefetched = undefined
    session.snapshot = yield* listTools(session, settings.connectMillis, first).pipe(
      Effect.mapError((error) =>
        session.dead !== undefined || error.reason !== "Request"
          ? error
          : new McpClientError({ ...error, message: session.withStderr(error.message) })
      )
    )
    let following = false
    session.follow = () => {
      if (following || session.dead !== undefined) return
      following = true
      Runtime.runFork(runtime)(Effect.forkIn(follower(session), scope))
    }
    // a change announced while the first listing was made
    if (session.notified > session.requested) session.follow()

    const self: McpClient.McpClient = Object.assign(Object.create(ClientProto), {
      [TypeId]: TypeId,
      serverInfo,
      instructions: client.getInstructions(),
      protocolVersion: client.getNegotiatedProtocolVersion() ?? "",
      tools: Effect.map(current(session), (snapshot) => snapshot.tools),
      toolkit: Effect.map(current(session), (snapshot) => snapshot.toolkit),
      refresh: Effect.map(refreshNow(session), (snapshot) => snapshot.toolkit)
    })
    return self
  })

const ClientProto = {
  pipe() {
    // eslint-disable-next-line prefer-rest-params
    return pipeArguments(this, arguments)
  },
  toJSON(this: McpClient.McpClient) {
    return { _id: "McpClient", serverInfo: this.serverInfo }
  }
}
