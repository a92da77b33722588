/**
 * The stdio tool-provider protocol, both sides.
 *
 * `serve` reads request lines, runs each call through the long-lived scheduler (so resource keys and
 * `maxParallel` hold across requests, in arrival order) in a fiber of its own kept in a `FiberSet`, and writes
 * each answer as one whole line through a {@link lineWriter} (answers that come while a write is in flight go out
 * together in the next write). End of input waits for the set to empty; a line that
 * is not JSON stops the reading, waits the same way, then fails; a write that fails fails everything at once.
 *
 * `connect` spawns the provider in a process group of its own, reads the header through a line splitter with no
 * length limit, and keeps the calls in flight in a map from wire `call_id` to a `Deferred`. The map is changed
 * synchronously, by the stdout callback and by call fibers between their steps, never both at once (one JavaScript
 * thread). One scoped fiber waits for the process to exit and its pipes to close (bounded: a grandchild may hold
 * them), then fails whatever is still in the map; later calls fail before sending.
 *
 * The content mapping (`toContent` one way, `fromContent` the other) is the one place where results become wire
 * values and back; a test round-trips every kind of outcome through both.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Console from "effect/Console"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as FiberRef from "effect/FiberRef"
import * as FiberSet from "effect/FiberSet"
import { dual } from "effect/Function"
import { globalValue } from "effect/GlobalValue"
import type * as Layer from "effect/Layer"
import * as Runtime from "effect/Runtime"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { Console as NodeConsole } from "node:console"
import * as Tool from "../Tool.js"
import * as ToolDefinition from "../ToolDefinition.js"
import { InvalidArguments, MODEL_PREFIX } from "../ToolError.js"
import * as Toolkit from "../Toolkit.js"
import * as ToolResult from "../ToolResult.js"
import type { Outcome } from "./executor.js"
import * as Process from "./process.js"
import * as Scheduler from "./scheduler.js"

// ---------------------------------------------------------------------------------------------------------------
// constants and errors
// ---------------------------------------------------------------------------------------------------------------

/** The prefix of an answer saying the arguments failed validation. */
export const BAD_ARGUMENTS_PREFIX = "Bad arguments: " as const

/** The prefix of every other error answer (the same as the model's). */
export const ERROR_PREFIX = MODEL_PREFIX

/** How long `connect` waits for the ready line by default. */
export const DEFAULT_START_TIMEOUT: Duration.Duration = Duration.seconds(10)

/**
 * At most how long a provider that exited gets for its pipes to deliver what it wrote last (an answer written just
 * before it exited, its last stderr lines) before the calls in flight fail: the exit is often reported before the
 * last chunk of stdout is read. The wait ends as soon as both pipes have closed; only a grandchild holding them
 * open makes it last this long.
 */
export const LAST_WORDS_MILLIS = 200

/** Characters of an offending line quoted in a message or a log. */
const QUOTED_CHARS = 200

/** What `InvalidArguments.message` starts with; a `Bad arguments: ` answer carries what follows it. */
const INVALID_ARGUMENTS = "invalid arguments: "

/** What the model reads for an `Error: ` answer with nothing after the prefix. */
export const EMPTY_FAILURE_MESSAGE = "tool call failed"

export class StdioProviderError extends Schema.TaggedError<StdioProviderError>(
  "effect-agent-tools/StdioProviderError"
)("StdioProviderError", {
  reason: Schema.Literal("Spawn", "Header", "Timeout", "Closed", "Answer", "Protocol", "Input", "Output"),
  message: Schema.String,
  cause: Schema.optional(Schema.Unknown)
}) {}

export interface ExitStatus {
  readonly code: number | null
  readonly signal: string | null
}

const quote = (line: string): string =>
  JSON.stringify(line.length > QUOTED_CHARS ? line.slice(0, QUOTED_CHARS) + "…" : line) +
  (line.length > QUOTED_CHARS ? ` (${line.length} characters)` : "")

const reasonOf = (error: unknown): string => {
  if (error instanceof Error) return error.message
  if (typeof error === "object" && error !== null && "message" in error && typeof error.message === "string") {
    return error.message
  }
  return String(error)
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

// ---------------------------------------------------------------------------------------------------------------
// the request's working directory
// ---------------------------------------------------------------------------------------------------------------

export const currentDirectory: FiberRef.FiberRef<string | undefined> = globalValue(
  Symbol.for("effect-agent-tools/StdioProvider/directory"),
  () => FiberRef.unsafeMake<string | undefined>(undefined)
)

export const directory: Effect.Effect<string> = Effect.map(
  FiberRef.get(currentDirectory),
  (dir) => dir ?? process.cwd()
)

export const withDirectory: {
  (dir: string): <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  <A, E, R>(self: Effect.Effect<A, E, R>, dir: string): Effect.Effect<A, E, R>
} = dual(
  2,
  <A, E, R>(self: Effect.Effect<A, E, R>, dir: string): Effect.Effect<A, E, R> =>
    Effect.locally(self, currentDirectory, dir)
)

// ---------------------------------------------------------------------------------------------------------------
// content mapping, both ways
// ---------------------------------------------------------------------------------------------------------------

/**
 * An outcome as the `content` of an answer:
 * - `InvalidArguments`: `"Bad arguments: <the problems>"`; every other error: `"Error: <message>"`;
 * - a result with `structured` output that is not a string: that JSON value;
 * - a result whose parts are all text (or that has none): the text, parts joined by `\n`, as a JSON string;
 * - any other result (an image, a resource): the array of its content parts, in MCP's shapes.
 */
export const toContent = (outcome: Outcome): unknown => {
  if (Either.isLeft(outcome)) {
    const error = outcome.left
    if (error instanceof InvalidArguments) {
      const message = error.message
      return BAD_ARGUMENTS_PREFIX +
        (message.startsWith(INVALID_ARGUMENTS) ? message.slice(INVALID_ARGUMENTS.length) : message)
    }
    return ERROR_PREFIX + error.message
  }
  const result = outcome.right
  if (result.structured !== undefined && result.structured !== null && typeof result.structured !== "string") {
    return result.structured
  }
  if (result.content.every((part) => part.type === "text")) return ToolResult.toText(result)
  return result.content
}

/**
 * An answer's `content` as an outcome of the remote tool (the inverse of {@link toContent}):
 * - a string starting `Bad arguments: `: a failure whose message is `invalid arguments: <the rest>`;
 * - a string starting `Error: `: a failure whose message is the rest;
 * - any other string: text; `null` (or no `content`): empty text;
 * - a non-empty array whose every item is a content part: those parts;
 * - any other JSON value: JSON (text = its JSON, `structured` = the value).
 */
export const fromContent = (content: unknown): Either.Either<ToolResult.ToolResult, StdioProviderError> => {
  if (typeof content === "string") {
    if (content.startsWith(BAD_ARGUMENTS_PREFIX)) {
      const why = content.slice(BAD_ARGUMENTS_PREFIX.length)
      return Either.left(
        new StdioProviderError({ reason: "Answer", message: INVALID_ARGUMENTS + why, cause: content })
      )
    }
    if (content.startsWith(ERROR_PREFIX)) {
      const message = content.slice(ERROR_PREFIX.length)
      return Either.left(
        new StdioProviderError({
          reason: "Answer",
          message: message.trim() === "" ? EMPTY_FAILURE_MESSAGE : message,
          cause: content
        })
      )
    }
    return Either.right(ToolResult.text(content))
  }
  if (content === null || content === undefined) return Either.right(ToolResult.text(""))
  if (Array.isArray(content) && content.length > 0 && content.every(ToolResult.isContent)) {
    return Either.right(ToolResult.parts(content))
  }
  return Either.right(ToolResult.json(content))
}

/** One answer line; content that cannot be JSON is answered as an error instead. */
const answerLine = (callId: string, content: unknown): string => {
  try {
    return JSON.stringify({ call_id: callId, content: content === undefined ? null : content }) + "\n"
  } catch (error) {
    return JSON.stringify({
      call_id: callId,
      content: `${ERROR_PREFIX}the result cannot be sent as JSON: ${reasonOf(error)}`
    }) + "\n"
  }
}

// ---------------------------------------------------------------------------------------------------------------
// writing lines
// ---------------------------------------------------------------------------------------------------------------

/** Queues a line and calls `done` once its write has ended; the function it gives drops the line if its write has
 * not started. */
export type LineQueue<E> = (line: string, done: (exit: Exit.Exit<void, E>) => void) => () => void

/**
 * Writes lines so that the lines sent while a write is in flight go out together in the next one. A write to a
 * pipe is a system call that wakes the reader, and costs more than answering a no-op call: under load one write
 * carries a burst of lines instead of one each. A line sent while nothing is being written goes out at once, so a
 * lone call waits for nothing; lines go out in the order they were sent, each whole. A line dropped before its
 * write starts is not written; every sender in a write that fails gets its error.
 *
 * Outside Effect (a write that takes a callback, callers that need no fiber); {@link lineWriter} is a line as an
 * Effect on top of it.
 */
export const lineQueue = <E>(
  write: (text: string, done: (exit: Exit.Exit<void, E>) => void) => void
): LineQueue<E> => {
  interface Queued {
    readonly line: string
    readonly done: (exit: Exit.Exit<void, E>) => void
    dropped: boolean
  }
  let queued: Array<Queued> = []
  let writing = false
  const next = (): void => {
    const batch = queued.filter((entry) => !entry.dropped)
    queued = []
    writing = batch.length > 0
    if (!writing) return
    let text = batch[0].line
    for (let i = 1; i < batch.length; i++) text += batch[i].line
    write(text, (exit) => {
      for (const entry of batch) entry.done(exit)
      next()
    })
  }
  return (line, done) => {
    const entry: Queued = { line, done, dropped: false }
    queued.push(entry)
    if (!writing) next()
    return () => {
      entry.dropped = true
    }
  }
}

/** A line through a {@link lineQueue} as an Effect: it ends when the line's write has ended; a line whose sender
 * is interrupted before its write starts is not written. */
export const lineWriter = <E>(send: LineQueue<E>) => (line: string): Effect.Effect<void, E> =>
  Effect.async<void, E>((resume) => Effect.sync(send(line, resume)))

// ---------------------------------------------------------------------------------------------------------------
// serve
// ---------------------------------------------------------------------------------------------------------------

export interface ServeOptions {
  readonly maxParallel?: number | undefined
  readonly timeout?: Duration.DurationInput | undefined
  readonly input?: Stream.Stream<Uint8Array | string, unknown> | undefined
  readonly output?: ((text: string) => Effect.Effect<void, unknown>) | undefined
}

/** A request, read: answerable (with a call id) or not. */
type Request =
  | { readonly _tag: "Call"; readonly id: string; readonly name: string; readonly args: unknown; readonly dir?: string }
  | { readonly _tag: "Malformed"; readonly id: string; readonly reason: string }
  | { readonly _tag: "Unanswerable"; readonly reason: string }

const readRequest = (value: unknown): Request => {
  if (!isRecord(value)) return { _tag: "Unanswerable", reason: "a request is a JSON object" }
  const id = value.call_id
  if (typeof id !== "string") return { _tag: "Unanswerable", reason: "the request has no string call_id" }
  const fn = value.function
  if (!isRecord(fn)) return { _tag: "Malformed", id, reason: "function must be an object" }
  if (typeof fn.name !== "string") return { _tag: "Malformed", id, reason: "function.name must be a string" }
  const args = fn.arguments
  if (args !== undefined && args !== null && typeof args !== "string" && !isRecord(args)) {
    return { _tag: "Malformed", id, reason: "function.arguments must be a string of JSON" }
  }
  const context = value.context
  if (context !== undefined && context !== null && !isRecord(context)) {
    return { _tag: "Malformed", id, reason: "context must be an object" }
  }
  const dir = isRecord(context) ? context.dir : undefined
  if (dir !== undefined && dir !== null && typeof dir !== "string") {
    return { _tag: "Malformed", id, reason: "context.dir must be a string" }
  }
  return {
    _tag: "Call",
    id,
    name: fn.name,
    args: args ?? "",
    ...(typeof dir === "string" && dir !== "" ? { dir } : {})
  }
}

/** The header: one OpenAI chat definition per tool, then the empty ready line, as one write. */
export const header = (toolkit: Toolkit.Toolkit<Tool.Any>): string =>
  toolkit.tools.map((tool) => JSON.stringify(ToolDefinition.openAiChat(tool)) + "\n").join("") + "\n"

const toBuffer = (chunk: Uint8Array | string): Buffer =>
  typeof chunk === "string" ? Buffer.from(chunk, "utf8") : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)

/** The input as lines, with no limit on a line's length. */
const linesOf = (
  input: Stream.Stream<Uint8Array | string, unknown>
): Stream.Stream<string, StdioProviderError> =>
  Stream.suspend(() => {
    const ready: Array<string> = []
    const splitter = Process.lineSplitter((line) => ready.push(line))
    return input.pipe(
      Stream.mapError((error) =>
        new StdioProviderError({
          reason: "Input",
          message: `reading the input failed: ${reasonOf(error)}`,
          cause: error
        })
      ),
      Stream.mapConcat((chunk) => {
        splitter.push(toBuffer(chunk))
        return ready.splice(0)
      }),
      Stream.concat(Stream.suspend(() => {
        splitter.end()
        return Stream.fromIterable(ready.splice(0))
      }))
    )
  })

/**
 * `@effect/platform-node` is an optional peer dependency: only a provider on this process's own stdin and stdout
 * needs it, so it is loaded when one starts, and importing the library never loads it.
 */
const PLATFORM_NODE_MISSING = "a provider on the process's stdio needs @effect/platform-node (an optional peer " +
  "dependency of effect-agent-tools): npm install @effect/platform-node@^0.108"

const processInput: Stream.Stream<Uint8Array, unknown> = Stream.unwrap(
  Effect.map(
    Effect.tryPromise({
      try: () => import("@effect/platform-node/NodeStream"),
      catch: (cause) => new Error(`${PLATFORM_NODE_MISSING} (${reasonOf(cause)})`, { cause })
    }),
    (NodeStream) => NodeStream.fromReadable(() => process.stdin, (error) => error)
  )
)

const processOutput = (text: string): Effect.Effect<void, unknown> =>
  Effect.async<void, unknown>((resume) => {
    process.stdout.write(text, (error) => resume(error == null ? Effect.void : Effect.fail(error)))
  })

/**
 * While serving on the process's stdout, a write error (EPIPE: the host went away) must reach the write's
 * callback rather than crash the process as an unhandled `error` event.
 */
const guardProcessStdout: Effect.Effect<void, never, Scope.Scope> = Effect.acquireRelease(
  Effect.sync(() => {
    const ignore = () => {}
    process.stdout.on("error", ignore)
    return ignore
  }),
  (ignore) => Effect.sync(() => process.stdout.off("error", ignore))
)

/** A `Console` whose every method writes to stderr: stdout belongs to the protocol. */
export const stderrConsole = (): Console.Console => {
  const unsafe = new NodeConsole({ stdout: process.stderr, stderr: process.stderr })
  return {
    [Console.TypeId]: Console.TypeId,
    assert: (condition, ...args) => Effect.sync(() => unsafe.assert(condition, ...args)),
    clear: Effect.sync(() => unsafe.clear()),
    count: (label) => Effect.sync(() => unsafe.count(label)),
    countReset: (label) => Effect.sync(() => unsafe.countReset(label)),
    debug: (...args) => Effect.sync(() => unsafe.debug(...args)),
    dir: (item, options) => Effect.sync(() => unsafe.dir(item, options)),
    dirxml: (...args) => Effect.sync(() => unsafe.dirxml(...args)),
    error: (...args) => Effect.sync(() => unsafe.error(...args)),
    group: (options) =>
      Effect.sync(
        () => (options?.collapsed === true ? unsafe.groupCollapsed(options.label) : unsafe.group(options?.label))
      ),
    groupEnd: Effect.sync(() => unsafe.groupEnd()),
    info: (...args) => Effect.sync(() => unsafe.info(...args)),
    log: (...args) => Effect.sync(() => unsafe.log(...args)),
    table: (data, properties) => Effect.sync(() => unsafe.table(data, properties)),
    time: (label) => Effect.sync(() => unsafe.time(label)),
    timeEnd: (label) => Effect.sync(() => unsafe.timeEnd(label)),
    timeLog: (label, ...args) => Effect.sync(() => unsafe.timeLog(label, ...args)),
    trace: (...args) => Effect.sync(() => unsafe.trace(...args)),
    warn: (...args) => Effect.sync(() => unsafe.warn(...args)),
    unsafe
  }
}

export const serve = <Tools extends Tool.Any>(
  toolkit: Toolkit.Toolkit<Tools>,
  options?: ServeOptions
): Effect.Effect<void, StdioProviderError, Tool.Requirements<Tools>> => {
  const onProcessStdout = options?.output === undefined
  const output = options?.output ?? processOutput
  const input = options?.input ?? processInput
  const program = Effect.scoped(Effect.gen(function*() {
    if (onProcessStdout) yield* guardProcessStdout
    const scheduler = yield* Scheduler.make({ maxParallel: options?.maxParallel, timeout: options?.timeout })
    const runFork = Runtime.runFork(yield* Effect.runtime<never>())
    const sendLine = lineQueue<unknown>((text, done) => runFork(Effect.suspend(() => output(text))).addObserver(done))
    const outputError = (error: unknown) =>
      new StdioProviderError({
        reason: "Output",
        message: `writing to the output failed: ${reasonOf(error)}`,
        cause: error
      })
    const write = lineWriter(sendLine)
    const send = (text: string): Effect.Effect<void, StdioProviderError> => Effect.mapError(write(text), outputError)
    yield* send(header(toolkit))

    // Answers known at once (a refusal, a handler that answered with a value) are written with no fiber: counted
    // until written, and a failed write ends everything, as a failed `send` in a call's fiber does.
    const broken = yield* Deferred.make<void, StdioProviderError>()
    let unwritten = 0
    let drained: (() => void) | undefined
    const answerNow = (text: string): Effect.Effect<void> => {
      unwritten++
      sendLine(text, (exit) => {
        unwritten--
        if (Exit.isFailure(exit)) Deferred.unsafeDone(broken, Exit.mapError(exit, outputError))
        if (unwritten === 0 && drained !== undefined) drained()
      })
      return Effect.void
    }
    const allWritten = Effect.async<void>((resume) => {
      if (unwritten === 0) return resume(Effect.void)
      drained = () => resume(Effect.void)
      return Effect.sync(() => {
        drained = undefined
      })
    })

    const inFlight = yield* FiberSet.make<void, StdioProviderError>()
    let lineNumber = 0
    const handle = (line: string): Effect.Effect<void, StdioProviderError, Tool.Requirements<Tools>> => {
      lineNumber++
      if (line.trim() === "") return Effect.void
      let value: unknown
      try {
        value = JSON.parse(line)
      } catch (error) {
        return Effect.fail(
          new StdioProviderError({
            reason: "Protocol",
            message: `line ${lineNumber} of the input is not JSON (${reasonOf(error)}): ${quote(line)}`
          })
        )
      }
      const request = readRequest(value)
      switch (request._tag) {
        case "Unanswerable":
          return Effect.logWarning(`stdio provider: ignored line ${lineNumber}: ${request.reason}: ${quote(line)}`)
        case "Malformed":
          return answerNow(answerLine(request.id, `${ERROR_PREFIX}malformed request: ${request.reason}`))
        case "Call": {
          const call = { id: request.id, name: request.name, arguments: request.args }
          // a call that can start now and answers with a value needs no fiber of its own, only its answer written
          const now = scheduler.tryNow(toolkit, call)
          if (now !== undefined && Either.isEither(now)) return answerNow(answerLine(request.id, toContent(now)))
          const run = now ?? scheduler.run(toolkit, call)
          const answered = Effect.flatMap(
            request.dir === undefined ? run : Effect.locally(run, currentDirectory, request.dir),
            (outcome) => send(answerLine(request.id, toContent(outcome)))
          )
          return Effect.asVoid(FiberSet.run(inFlight, answered))
        }
      }
    }

    // End of input, or a line that is fatal: start nothing more, let the calls in flight answer, then stop.
    const reading = Effect.gen(function*() {
      const read = yield* Effect.exit(Stream.runForEach(linesOf(input), handle))
      yield* FiberSet.awaitEmpty(inFlight)
      yield* allWritten
      return yield* read
    })
    // A failed write ends everything at once: nobody is reading the answers.
    yield* Effect.raceFirst(reading, Effect.raceFirst(FiberSet.join(inFlight), Deferred.await(broken)))
  }))
  return onProcessStdout ? Effect.withConsole(program, stderrConsole()) : program
}

export interface MainOptions<R = never, E = never> {
  readonly maxParallel?: number | undefined
  readonly timeout?: Duration.DurationInput | undefined
  readonly layer?: Layer.Layer<R, E> | undefined
}

/** Waits until everything written to stdout and stderr so far has been handed to the OS, then exits. */
const exitAfterFlush = (code: number): void => {
  process.stdout.write("", () => process.stderr.write("", () => process.exit(code)))
}

export const main = <Tools extends Tool.Any, R, E>(
  toolkit: Toolkit.Toolkit<Tools>,
  options?: MainOptions<R, E>
): void => {
  // stdout carries the protocol and nothing else: console output of any kind goes to stderr.
  globalThis.console = new NodeConsole({ stdout: process.stderr, stderr: process.stderr })
  const served = serve(toolkit, options) as Effect.Effect<void, StdioProviderError, unknown>
  const provided = (options?.layer === undefined ? served : Effect.provide(served, options.layer)) as Effect.Effect<
    void,
    StdioProviderError | E
  >
  const program = Effect.tapErrorCause(provided, (cause) =>
    Effect.sync(() => {
      if (Cause.isInterruptedOnly(cause)) return
      const failure = Cause.failureOption(cause)
      const text = failure._tag === "Some" && failure.value instanceof StdioProviderError
        ? `stdio provider stopped: ${failure.value.message}`
        : `stdio provider stopped: ${Cause.pretty(cause)}`
      process.stderr.write(text + "\n")
    }))
  import("@effect/platform-node/NodeRuntime").then(
    (NodeRuntime) =>
      NodeRuntime.runMain(program, {
        disableErrorReporting: true,
        disablePrettyLogger: true,
        teardown: (exit) => exitAfterFlush(Exit.isFailure(exit) && !Cause.isInterruptedOnly(exit.cause) ? 1 : 0)
      }),
    (cause) => {
      process.stderr.write(`stdio provider stopped: ${PLATFORM_NODE_MISSING} (${reasonOf(cause)})\n`)
      exitAfterFlush(1)
    }
  )
}

// ---------------------------------------------------------------------------------------------------------------
// connect
// ---------------------------------------------------------------------------------------------------------------

export interface ConnectOptions {
  readonly command: string
  readonly args?: ReadonlyArray<string> | undefined
  readonly cwd?: string | undefined
  readonly env?: Readonly<Record<string, string | undefined>> | undefined
  readonly startTimeout?: Duration.DurationInput | undefined
  readonly callTimeout?: Duration.DurationInput | undefined
}

export interface Provider {
  readonly toolkit: Toolkit.Toolkit<Tool.Tool<string>>
  readonly definitions: ReadonlyArray<ToolDefinition.OpenAiChat>
  readonly command: string
  readonly pid: number
  readonly exited: Effect.Effect<ExitStatus>
}

const commandLabel = (options: ConnectOptions): string => {
  const label = [options.command, ...(options.args ?? [])].join(" ")
  return label.length > 120 ? label.slice(0, 120) + "…" : label
}

/** One header line as a definition, or why it is not one. */
const readDefinition = (line: string): ToolDefinition.OpenAiChat | string => {
  let value: unknown
  try {
    value = JSON.parse(line)
  } catch (error) {
    return `it is not JSON (${reasonOf(error)})`
  }
  if (!isRecord(value) || value.type !== "function" || !isRecord(value.function)) {
    return "it is not a tool definition {\"type\":\"function\",\"function\":{\"name\",\"description\",\"parameters\"}}"
  }
  const fn = value.function
  if (typeof fn.name !== "string") return "function.name is not a string"
  if (!Tool.NAME_PATTERN.test(fn.name)) {
    return `the tool name ${JSON.stringify(fn.name)} is not 1 to 64 letters, digits, "_" or "-"`
  }
  if (fn.description !== undefined && fn.description !== null && typeof fn.description !== "string") {
    return `function.description of ${JSON.stringify(fn.name)} is not a string`
  }
  if (fn.parameters !== undefined && fn.parameters !== null && !isRecord(fn.parameters)) {
    return `function.parameters of ${JSON.stringify(fn.name)} is not a JSON Schema object`
  }
  return {
    type: "function",
    function: {
      name: fn.name,
      description: typeof fn.description === "string" ? fn.description : "",
      parameters: isRecord(fn.parameters) ? fn.parameters : { type: "object", properties: {}, required: [] },
      ...(fn.strict === true ? { strict: true as const } : {})
    }
  }
}

export const connect = (options: ConnectOptions): Effect.Effect<Provider, StdioProviderError, Scope.Scope> =>
  Effect.gen(function*() {
    // A provider that fails to start is ended now, not when the caller's (maybe long-lived) scope closes.
    const scope = yield* Scope.fork(yield* Effect.scope, ExecutionStrategy.sequential)
    return yield* start(options).pipe(
      Scope.extend(scope),
      Effect.onError((cause) => Scope.close(scope, Exit.failCause(cause)))
    )
  })

const start = (options: ConnectOptions): Effect.Effect<Provider, StdioProviderError, Scope.Scope> =>
  Effect.gen(function*() {
    const label = commandLabel(options)
    const startTimeout = options.startTimeout === undefined
      ? DEFAULT_START_TIMEOUT
      : Duration.decode(options.startTimeout)
    const child = yield* Process.spawn({
      command: options.command,
      args: options.args,
      cwd: options.cwd,
      env: options.env
    }).pipe(
      Effect.mapError((error) =>
        new StdioProviderError({
          reason: "Spawn",
          message: `stdio provider ${JSON.stringify(label)} could not be started: ${error.reason}`,
          cause: error
        })
      )
    )
    const runtime = yield* Effect.runtime<never>()
    // the host writes outside Effect: a fiber per request line would cost more than the call it carries
    const sendLine = lineQueue<Process.ProcessError>((text, done) =>
      child.unsafeWrite(text, (error) => done(error === undefined ? Exit.void : Exit.fail(error)))
    )
    const log = (effect: Effect.Effect<void>): void =>
      Runtime.runSync(runtime)(Effect.annotateLogs(effect, "stdio_provider", label))

    /** The calls waiting for their answer, by call id: each settles its call when called. */
    const pending = new Map<string, (exit: Exit.Exit<unknown, StdioProviderError>) => void>()
    let lost: StdioProviderError | undefined
    let nextId = 0
    const definitions: Array<ToolDefinition.OpenAiChat> = []
    const names = new Set<string>()
    const ready = Deferred.unsafeMake<void, StdioProviderError>(FiberId.none)
    let phase: "header" | "ready" | "refused" = "header"
    let headerLines = 0

    const refuse = (why: string): void => {
      phase = "refused"
      Deferred.unsafeDone(
        ready,
        Exit.fail(
          new StdioProviderError({
            reason: "Header",
            message: Process.withStderr(
              `stdio provider ${JSON.stringify(label)} sent a malformed header: line ${headerLines}: ${why}`,
              child.stderrTail()
            )
          })
        )
      )
    }

    const onAnswer = (line: string): void => {
      if (line.trim() === "") return
      let value: unknown
      try {
        value = JSON.parse(line)
      } catch {
        return log(Effect.logWarning(`stdio provider: ignored a line of stdout that is not JSON: ${quote(line)}`))
      }
      if (!isRecord(value) || typeof value.call_id !== "string") {
        return log(Effect.logWarning(`stdio provider: ignored a line of stdout that is not an answer: ${quote(line)}`))
      }
      const waiting = pending.get(value.call_id)
      if (waiting === undefined) {
        return log(Effect.logDebug(
          `stdio provider: ignored an answer to call_id ${JSON.stringify(value.call_id)}, ` +
            "which nothing waits for (unknown, or its call was interrupted)"
        ))
      }
      pending.delete(value.call_id)
      waiting(Exit.succeed(value.content))
    }

    const onLine = (line: string): void => {
      if (phase === "ready") return onAnswer(line)
      if (phase === "refused") return
      headerLines++
      if (line.trim() === "") {
        phase = "ready"
        Deferred.unsafeDone(ready, Exit.void)
        return
      }
      const definition = readDefinition(line)
      if (typeof definition === "string") return refuse(definition)
      if (names.has(definition.function.name)) {
        return refuse(`the tool name ${JSON.stringify(definition.function.name)} is already taken`)
      }
      names.add(definition.function.name)
      definitions.push(definition)
    }
    const splitter = Process.lineSplitter(onLine)
    child.onStdout(splitter.push)

    const fail = (error: StdioProviderError): void => {
      if (lost === undefined) lost = error
      const waiting = [...pending.values()]
      pending.clear()
      for (const settle of waiting) settle(Exit.fail(error))
    }

    // Calls in flight fail when the scope closes (before the process group is ended)...
    yield* Effect.addFinalizer(() =>
      Effect.sync(() =>
        fail(
          new StdioProviderError({
            reason: "Closed",
            message: `the connection to stdio provider ${JSON.stringify(label)} was closed`
          })
        )
      )
    )
    // ... or as soon as the process exits, once its last output has had a moment to arrive.
    yield* Effect.forkScoped(Effect.gen(function*() {
      const status = yield* child.exited
      const closed = yield* Effect.raceFirst(
        Effect.as(child.closed, true),
        Effect.as(Process.realSleep(LAST_WORDS_MILLIS), false)
      )
      if (closed) splitter.end()
      const exit: ExitStatus = { code: status.code, signal: status.signal }
      const how = Process.describeExit(status)
      Deferred.unsafeDone(
        ready,
        Exit.fail(
          new StdioProviderError({
            reason: "Closed",
            message: Process.withStderr(
              `stdio provider ${JSON.stringify(label)} ${how} before its ready line`,
              child.stderrTail()
            ),
            cause: exit
          })
        )
      )
      fail(
        new StdioProviderError({
          reason: "Closed",
          message: Process.withStderr(`stdio provider ${JSON.stringify(label)} ${how}`, child.stderrTail()),
          cause: exit
        })
      )
    }))

    yield* Deferred.await(ready).pipe(
      Effect.timeoutFail({
        duration: startTimeout,
        onTimeout: () =>
          new StdioProviderError({
            reason: "Timeout",
            message: Process.withStderr(
              `stdio provider ${JSON.stringify(label)} sent no ready line (an empty line after the tool ` +
                `definitions) within ${Duration.format(startTimeout)}` +
                (definitions.length === 0 ? "" : `; it had sent ${definitions.length} definition(s)`),
              child.stderrTail()
            )
          })
      })
    )

    /**
     * One request and its answer: the line is queued for writing and the call waits for the answer with that call
     * id, with no fiber of its own. A write that fails waits a moment for the process's exit, whose status and stderr
     * are the better reason; an interrupted call drops its line if it has not been written, and its answer, if it
     * ever comes, is ignored.
     */
    const ask = (name: string, args: Record<string, unknown>, dir: string) =>
      Effect.async<unknown, StdioProviderError>((resume) => {
        if (lost !== undefined) return resume(Effect.fail(lost))
        const id = String(++nextId)
        let lastWords: ReturnType<typeof setTimeout> | undefined
        const settle = (exit: Exit.Exit<unknown, StdioProviderError>): void => {
          if (lastWords !== undefined) clearTimeout(lastWords)
          resume(exit)
        }
        pending.set(id, settle)
        const line = JSON.stringify({
          call_id: id,
          function: { name, arguments: JSON.stringify(args) },
          context: { dir }
        })
        const drop = sendLine(line + "\n", (written) => {
          if (Exit.isSuccess(written) || pending.get(id) !== settle) return
          const failure = Cause.failureOption(written.cause)
          const reason = failure._tag === "Some" ? failure.value.reason : Cause.pretty(written.cause)
          lastWords = setTimeout(() => {
            if (pending.get(id) !== settle) return
            pending.delete(id)
            resume(Effect.fail(
              new StdioProviderError({
                reason: "Closed",
                message: `the call could not be sent to stdio provider ${JSON.stringify(label)}: ${reason}`,
                cause: written.cause
              })
            ))
          }, LAST_WORDS_MILLIS * 3)
        })
        return Effect.sync(() => {
          drop()
          if (lastWords !== undefined) clearTimeout(lastWords)
          if (pending.get(id) === settle) pending.delete(id)
        })
      })

    const call = (name: string) => (args: Record<string, unknown>) =>
      Effect.flatMap(
        FiberRef.get(currentDirectory),
        (dir) => Effect.flatMap(ask(name, args, dir ?? process.cwd()), fromContent)
      )

    const tools: Array<Tool.Tool<string>> = []
    for (const definition of definitions) {
      const fn = definition.function
      try {
        tools.push(Tool.fromJsonSchema(fn.name, {
          description: fn.description,
          parameters: fn.parameters,
          strict: fn.strict === true,
          timeout: options.callTimeout,
          handler: call(fn.name)
        }))
      } catch (error) {
        return yield* Effect.fail(
          new StdioProviderError({
            reason: "Header",
            message: `stdio provider ${JSON.stringify(label)} sent a malformed header: ${reasonOf(error)}`,
            cause: error
          })
        )
      }
    }

    return {
      toolkit: Toolkit.make(...tools),
      definitions,
      command: label,
      pid: child.pid,
      exited: Effect.map(child.exited, (status): ExitStatus => ({ code: status.code, signal: status.signal }))
    }
  })
