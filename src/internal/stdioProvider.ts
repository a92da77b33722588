/**
 * The stdio tool-provider protocol, both sides.
 *
 * `serve` reads request lines (each at most `maxLineBytes`: a longer one is dropped as it arrives), runs each call
 * through the long-lived scheduler (so resource keys and `maxParallel` hold across requests, in arrival order) in a
 * fiber of its own kept in a `FiberSet`, and writes each answer as one whole line through a `lineWriter` (answers
 * that come while a write is in flight go out together in the next write). End of input waits for the set to
 * empty; a line that is not JSON stops the reading, waits the same way, then fails; a write that fails fails
 * everything at once.
 *
 * `connect` starts the provider as a peer process (`peer.ts`: its process group, its stdout cut into lines of at
 * most `maxLineBytes`, its stderr tail, its end failing what is in flight, SIGTERM then SIGKILL). A {@link Host}
 * reads the header, then matches answers to calls by `call_id` (`Peer.Pending`); what is not an answer is logged
 * through a {@link JunkLog}, a few lines, then a count.
 *
 * The content mapping (`toContent` one way, `fromContent` the other) is the one place where results become wire
 * values and back; a test round-trips every kind of outcome through both.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
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
import type * as StdioProvider from "../StdioProvider.js"
import * as Tool from "../Tool.js"
import * as ToolDefinition from "../ToolDefinition.js"
import { InvalidArguments, MODEL_PREFIX } from "../ToolError.js"
import * as Toolkit from "../Toolkit.js"
import * as ToolResult from "../ToolResult.js"
import { preview } from "./argumentProblems.js"
import type { Outcome } from "./executor.js"
import * as Lines from "./lines.js"
import * as Peer from "./peer.js"
import * as Process from "./process.js"
import { reasonOf } from "./reason.js"
import * as Scheduler from "./scheduler.js"
import { stderrConsole } from "./stderrConsole.js"
import { rendersStructured } from "./tool.js"

// ---------------------------------------------------------------------------------------------------------------
// constants and errors
// ---------------------------------------------------------------------------------------------------------------

/** The prefix of an answer saying the arguments failed validation. */
export const BAD_ARGUMENTS_PREFIX = "Bad arguments: " as const

/** The prefix of every other error answer (the same as the model's). */
export const ERROR_PREFIX = MODEL_PREFIX

/** How long `connect` waits for the ready line by default. */
export const DEFAULT_START_TIMEOUT: Duration.Duration = Duration.seconds(10)

/** The longest line either side reads by default: 16 MiB, as much as `McpClient` takes for one result. */
export const DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024

/** The most tools `connect` takes from a header by default. */
export const DEFAULT_MAX_TOOLS = 1_000

/** Lines that are not the protocol logged one by one before they are only counted. */
const JUNK_LINES_LOGGED = 10

/** How often, at most, the count of the junk lines not logged is logged (and once more at the end). */
const JUNK_SUMMARY_MILLIS = 10_000

/** Characters of an offending line quoted in a message or a log. */
const QUOTED_CHARS = 200

/** What `InvalidArguments.message` starts with; a `Bad arguments: ` answer carries what follows it. */
const INVALID_ARGUMENTS = "invalid arguments: "

/** What the model reads for an `Error: ` answer with nothing after the prefix. */
export const EMPTY_FAILURE_MESSAGE = "tool call failed"

export class StdioProviderError extends Schema.TaggedError<StdioProviderError>(
  "effect-agent-tools/StdioProviderError"
)("StdioProviderError", {
  reason: Schema.Literal("Spawn", "Header", "Timeout", "Closed", "Answer", "TooLarge", "Protocol", "Input", "Output"),
  message: Schema.String,
  cause: Schema.optional(Schema.Unknown)
}) {}

const quote = (line: string): string =>
  JSON.stringify(line.length > QUOTED_CHARS ? line.slice(0, QUOTED_CHARS) + "…" : line) +
  (line.length > QUOTED_CHARS ? ` (${line.length} characters)` : "")

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
 * - a result with `structured` output that is not a string, rendered as its JSON: that JSON value (a result
 *   whose text is something else, shaped by `toModelOutput`, sends its text: that is what the model must read);
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
  if (typeof result.structured !== "string" && rendersStructured(result)) return result.structured
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
// lines that are not the protocol
// ---------------------------------------------------------------------------------------------------------------

/**
 * Logs lines the other side wrote that are not the protocol, without letting them flood the log: the first
 * {@link JUNK_LINES_LOGGED} one by one, then only their count, at most once per {@link JUNK_SUMMARY_MILLIS} (when
 * one more arrives) and once at the end ({@link JunkLog.flush}).
 */
class JunkLog {
  private logged = 0
  private unlogged = 0
  private lastLog = 0

  constructor(private readonly log: (message: string) => void, private readonly what: string) {}

  /** One more line; `message` is made only if it is logged. */
  add(message: () => string): void {
    if (this.logged < JUNK_LINES_LOGGED) {
      this.logged++
      this.lastLog = Date.now()
      return this.log(message())
    }
    this.unlogged++
    if (Date.now() - this.lastLog >= JUNK_SUMMARY_MILLIS) this.flush()
  }

  /** Logs the count of the lines not logged since the last count, if any. */
  flush(): void {
    if (this.unlogged === 0) return
    const count = this.unlogged
    this.unlogged = 0
    this.lastLog = Date.now()
    this.log(
      `stdio provider: ignored ${count} more ${count === 1 ? "line" : "lines"} ${this.what} (the first ` +
        `${JUNK_LINES_LOGGED} were logged one by one; the rest are counted)`
    )
  }
}

const tooLongMessage = (what: string, bytes: number, limit: number): string =>
  `${what} is ${bytes} bytes, over the limit of ${Lines.formatBytes(limit)} for one line`

// ---------------------------------------------------------------------------------------------------------------
// serve
// ---------------------------------------------------------------------------------------------------------------

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

/** The input as lines, each at most `maxLineBytes`; a longer one comes as its {@link Lines.OversizeLine}. */
const linesOf = (
  input: Stream.Stream<Uint8Array | string, unknown>,
  maxLineBytes: number
): Stream.Stream<string | Lines.OversizeLine, StdioProviderError> =>
  Stream.suspend(() => {
    const ready: Array<string | Lines.OversizeLine> = []
    const push = (line: string | Lines.OversizeLine) => void ready.push(line)
    const splitter = Lines.lineSplitter(push, { maxLineBytes, onOversize: push })
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

export const serve = <Tools extends Tool.Any>(
  toolkit: Toolkit.Toolkit<Tools>,
  options?: StdioProvider.ServeOptions
): Effect.Effect<void, StdioProviderError, Tool.Requirements<Tools>> => {
  const onProcessStdout = options?.output === undefined
  const output = options?.output ?? processOutput
  const input = options?.input ?? processInput
  const program = Effect.scoped(Effect.gen(function*() {
    const maxLineBytes = yield* lineCap(options?.maxLineBytes)
    if (onProcessStdout) yield* guardProcessStdout
    const scheduler = yield* Scheduler.make({ maxParallel: options?.maxParallel, timeout: options?.timeout })
    const runFork = Runtime.runFork(yield* Effect.runtime<never>())
    const sendLine = Lines.lineQueue<unknown>((text, done) =>
      runFork(Effect.suspend(() => output(text))).addObserver(done)
    )
    const outputError = (error: unknown) =>
      new StdioProviderError({
        reason: "Output",
        message: `writing to the output failed: ${reasonOf(error)}`,
        cause: error
      })
    const write = Lines.lineWriter(sendLine)
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
    const runSync = Runtime.runSync(yield* Effect.runtime<never>())
    const junk = new JunkLog((message) => runSync(Effect.logWarning(message)), "of input that cannot be answered")
    yield* Effect.addFinalizer(() => Effect.sync(() => junk.flush()))
    let lineNumber = 0
    /** A request line over the cap, dropped as it arrived: answered if its call_id is at either end of it. */
    const oversize = (line: Lines.OversizeLine): Effect.Effect<void> => {
      const id = Lines.memberAtEdges(line, "call_id")
      const message = tooLongMessage("the request", line.bytes, maxLineBytes)
      if (typeof id === "string") return answerNow(answerLine(id, ERROR_PREFIX + message))
      return Effect.sync(() =>
        junk.add(() => `stdio provider: ignored line ${lineNumber}: ${message}, without a call_id at its start or end`)
      )
    }
    const handle = (
      line: string | Lines.OversizeLine
    ): Effect.Effect<void, StdioProviderError, Tool.Requirements<Tools>> => {
      lineNumber++
      if (typeof line !== "string") return oversize(line)
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
        case "Unanswerable": {
          const number = lineNumber
          return Effect.sync(() =>
            junk.add(() => `stdio provider: ignored line ${number}: ${request.reason}: ${quote(line)}`)
          )
        }
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
      const read = yield* Effect.exit(Stream.runForEach(linesOf(input, maxLineBytes), handle))
      yield* FiberSet.awaitEmpty(inFlight)
      yield* allWritten
      return yield* read
    })
    // A failed write ends everything at once: nobody is reading the answers.
    yield* Effect.raceFirst(reading, Effect.raceFirst(FiberSet.join(inFlight), Deferred.await(broken)))
  }))
  return onProcessStdout ? Effect.withConsole(program, stderrConsole()) : program
}

/** `main`'s options as it receives them: the public ones, and the layer when the handlers need one. */
export interface MainOptions<R = never, E = never> extends StdioProvider.MainOptions {
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

/** A line cap from an option: the default when absent; a defect (a programmer error) when it is not a cap. */
const lineCap = (given: number | undefined): Effect.Effect<number> => {
  if (given === undefined) return Effect.succeed(DEFAULT_MAX_LINE_BYTES)
  if (!Lines.isLineCap(given)) {
    return Effect.dieMessage(
      `invalid maxLineBytes ${given}: a positive integer up to ${Lines.MAX_LINE_CAP} is needed`
    )
  }
  return Effect.succeed(given)
}

const commandLabel = (options: StdioProvider.ConnectOptions): string => {
  const label = [options.command, ...(options.args ?? [])].join(" ")
  return label.length > 120 ? label.slice(0, 120) + "…" : label
}

/** How messages name a provider: `stdio provider "node provider.js"`. */
const subjectOf = (label: string): string => `stdio provider ${JSON.stringify(label)}`

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
    return `the tool name ${preview(fn.name)} is not 1 to 64 letters, digits, "_" or "-"`
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

interface HostSettings {
  readonly label: string
  readonly maxLineBytes: number
  readonly maxTools: number
}

/**
 * The host's side of one provider, as the peer's reader: the header until its ready line, then the answers, each
 * settling the call waiting for its `call_id`. A line over the cap is dropped as it arrives: in the header, it
 * refuses the header; after, it fails the call it answers, when its `call_id` can be read at either end of it.
 */
class Host implements Peer.Reader {
  private phase: "header" | "ready" | "refused" = "header"
  private headerLines = 0
  private readonly names = new Set<string>()
  readonly definitions: Array<ToolDefinition.OpenAiChat> = []
  /** Completes with the ready line, or fails with why the header was refused or never came. */
  readonly ready = Deferred.unsafeMake<void, StdioProviderError>(FiberId.none)
  readonly calls: Peer.Pending<unknown, StdioProviderError>
  readonly junk: JunkLog

  constructor(
    readonly peer: Peer.Peer,
    readonly settings: HostSettings,
    private readonly log: (effect: Effect.Effect<void>) => void
  ) {
    this.calls = new Peer.Pending(peer)
    this.junk = new JunkLog((message) => log(Effect.logWarning(message)), "of stdout that are not answers")
  }

  private get subject(): string {
    return subjectOf(this.settings.label)
  }

  get readied(): boolean {
    return this.phase === "ready"
  }

  line(text: string): void {
    if (this.phase === "ready") return this.answer(text)
    if (this.phase === "refused") return
    this.headerLines++
    if (text.trim() === "") {
      this.phase = "ready"
      Deferred.unsafeDone(this.ready, Exit.void)
      return
    }
    if (this.definitions.length >= this.settings.maxTools) {
      return this.refuse(`it lists more than ${this.settings.maxTools} tools, the limit (maxTools)`)
    }
    const definition = readDefinition(text)
    if (typeof definition === "string") return this.refuse(definition)
    if (this.names.has(definition.function.name)) {
      return this.refuse(`the tool name ${JSON.stringify(definition.function.name)} is already taken`)
    }
    this.names.add(definition.function.name)
    this.definitions.push(definition)
  }

  oversize(line: Lines.OversizeLine): void {
    if (this.phase === "refused") return
    if (this.phase === "header") {
      this.headerLines++
      return this.refuse(`${tooLongMessage("it", line.bytes, this.settings.maxLineBytes)} (maxLineBytes)`)
    }
    const id = Lines.memberAtEdges(line, "call_id")
    const message = tooLongMessage(`the answer of ${this.subject}`, line.bytes, this.settings.maxLineBytes)
    if (typeof id === "string" && this.calls.has(id)) {
      this.calls.settle(
        id,
        Exit.fail(new StdioProviderError({ reason: "TooLarge", message: `${message}; ask for less at a time` }))
      )
      return
    }
    this.junk.add(() => `stdio provider: ignored a line of stdout that answers no call in flight: ${message}`)
  }

  /** The provider ended: the start fails if it was not over, and every call in flight fails. */
  ended(end: Peer.End<never>): void {
    const status: StdioProvider.ExitStatus | undefined = end._tag === "Exited" ? end.status : undefined
    Deferred.unsafeDone(
      this.ready,
      Exit.fail(
        new StdioProviderError({
          reason: "Closed",
          message: this.peer.describe(end, " before its ready line"),
          cause: status
        })
      )
    )
    this.calls.failAll(new StdioProviderError({ reason: "Closed", message: this.peer.describe(end), cause: status }))
    this.junk.flush()
  }

  private answer(line: string): void {
    if (line.trim() === "") return
    let value: unknown
    try {
      value = JSON.parse(line)
    } catch {
      return this.junk.add(() => `stdio provider: ignored a line of stdout that is not JSON: ${quote(line)}`)
    }
    if (!isRecord(value) || typeof value.call_id !== "string") {
      return this.junk.add(() => `stdio provider: ignored a line of stdout that is not an answer: ${quote(line)}`)
    }
    if (!this.calls.settle(value.call_id, Exit.succeed(value.content))) {
      this.log(Effect.logDebug(
        `stdio provider: ignored an answer to call_id ${preview(value.call_id)}, ` +
          "which nothing waits for (unknown, or its call was interrupted)"
      ))
    }
  }

  private refuse(why: string): void {
    this.phase = "refused"
    Deferred.unsafeDone(
      this.ready,
      Exit.fail(
        new StdioProviderError({
          reason: "Header",
          message: this.peer.withStderr(`${this.subject} sent a malformed header: line ${this.headerLines}: ${why}`)
        })
      )
    )
  }
}

export const connect = (
  options: StdioProvider.ConnectOptions
): Effect.Effect<StdioProvider.Provider, StdioProviderError, Scope.Scope> =>
  Effect.gen(function*() {
    const settings: HostSettings = {
      label: commandLabel(options),
      maxLineBytes: yield* lineCap(options.maxLineBytes),
      maxTools: options.maxTools ?? DEFAULT_MAX_TOOLS
    }
    if (!(Number.isInteger(settings.maxTools) && settings.maxTools >= 0)) {
      return yield* Effect.dieMessage(`invalid maxTools ${settings.maxTools}: a non-negative integer is needed`)
    }
    // A provider that fails to start is ended now, not when the caller's (maybe long-lived) scope closes.
    const scope = yield* Scope.fork(yield* Effect.scope, ExecutionStrategy.sequential)
    return yield* start(options, settings).pipe(
      Scope.extend(scope),
      Effect.onError((cause) => Scope.close(scope, Exit.failCause(cause)))
    )
  })

const start = (
  options: StdioProvider.ConnectOptions,
  settings: HostSettings
): Effect.Effect<StdioProvider.Provider, StdioProviderError, Scope.Scope> =>
  Effect.gen(function*() {
    const label = settings.label
    const startTimeout = options.startTimeout === undefined
      ? DEFAULT_START_TIMEOUT
      : Duration.decode(options.startTimeout)
    const runtime = yield* Effect.runtime<never>()
    const log = (effect: Effect.Effect<void>): void =>
      Runtime.runSync(runtime)(Effect.annotateLogs(effect, "stdio_provider", label))
    const subject = subjectOf(label)
    const peer = yield* Peer.start({
      command: options.command,
      args: options.args,
      cwd: options.cwd,
      env: options.env,
      maxLineBytes: settings.maxLineBytes,
      subject: () => subject
    }).pipe(
      Effect.mapError((error) =>
        new StdioProviderError({
          reason: "Spawn",
          message: `${subject} could not be started: ${error.reason}`,
          cause: error
        })
      )
    )
    const host = new Host(peer, settings, log)
    peer.read(host)
    peer.onEnd((end) => host.ended(end))
    // Calls in flight fail when the scope closes, before the process group is ended.
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        host.calls.failAll(
          new StdioProviderError({ reason: "Closed", message: `the connection to ${subject} was closed` })
        )
        host.junk.flush()
      })
    )

    const call = (name: string) => (args: Record<string, unknown>) =>
      Effect.flatMap(FiberRef.get(currentDirectory), (dir) =>
        Effect.flatMap(
          host.calls.ask(
            (id) =>
              JSON.stringify({
                call_id: id,
                function: { name, arguments: JSON.stringify(args) },
                context: { dir: dir ?? process.cwd() }
              }) + "\n",
            (reason) =>
              new StdioProviderError({
                reason: "Closed",
                message: `the call could not be sent to ${subject}: ${reason}`
              })
          ),
          fromContent
        ))

    // The whole start, the header and building its tools, is under startTimeout: a header of many tools, each
    // schema compiled, must not hold a host past it.
    const tools = yield* Peer.withDeadline(
      Effect.zipRight(
        Deferred.await(host.ready),
        Effect.forEach(host.definitions, (definition, i) =>
          Effect.zipRight(
            i % Process.YIELD_EVERY === Process.YIELD_EVERY - 1 ? Process.yieldToEventLoop : Effect.void,
            Effect.try({
              try: () =>
                Tool.fromJsonSchema(definition.function.name, {
                  description: definition.function.description,
                  parameters: definition.function.parameters,
                  strict: definition.function.strict === true,
                  timeout: options.callTimeout,
                  handler: call(definition.function.name)
                }),
              catch: (error) =>
                new StdioProviderError({
                  reason: "Header",
                  message: `${subject} sent a malformed header: ${reasonOf(error)}`,
                  cause: error
                })
            })
          ))
      ),
      Duration.toMillis(startTimeout),
      () =>
        new StdioProviderError({
          reason: "Timeout",
          message: peer.withStderr(
            host.readied
              ? `${subject} did not start within ${Duration.format(startTimeout)}: its ${host.definitions.length} ` +
                "tools were still being read"
              : `${subject} sent no ready line (an empty line after the tool definitions) within ` +
                Duration.format(startTimeout) +
                (host.definitions.length === 0 ? "" : `; it had sent ${host.definitions.length} definition(s)`)
          )
        })
    )

    const toolkit = Toolkit.make(...tools)
    return {
      tools: Effect.succeed(tools),
      toolkit: Effect.succeed(toolkit),
      definitions: host.definitions,
      command: label,
      pid: peer.pid,
      exited: peer.exited
    }
  })
