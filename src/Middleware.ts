/**
 * What runs around every call of a batch, a server or a program: logging, output budgets, a journal, a cache.
 *
 * A middleware is a function of the call and `next`, the rest of the call's pipeline, giving the call's outcome:
 * it may look at the call, run `next` (or not, answering in the tool's place), and look at or change what `next`
 * gave. Where it sits in the one pipeline every call goes through:
 *
 * ```text
 * arguments checked ─ permission ─ middleware₁ ( middleware₂ ( … onStart ─ Started ─ timeout ( recover ( handler ) ) ─ record ) )
 * ```
 *
 * - It sees the calls that may run: their tool found, their arguments decoded, permission given (or not needed).
 *   A call refused before (an unknown tool, invalid arguments, a denial) never reaches it; those are in the
 *   executor's `Finished` events, the span and the metrics. So a middleware that answers without calling `next`
 *   (a cache) can never answer a call the user refused.
 * - It cannot change the arguments: they are checked when the batch is planned, before anything waits (their
 *   resource keys order the batch), and permission is asked about the decoded parameters, so what runs is what
 *   was asked about. Rewrite the calls before they reach the executor (they are data), or one tool's parameters
 *   with `Tool.wrap`.
 * - The first installed is the outermost: it sees the call first and the outcome last. Middleware installed in
 *   the context ({@link layer}) is around a batch's own (`Executor.Options.middleware`).
 * - `next` never fails. What a middleware fails with becomes the call's outcome, as `onStart`'s failure does (a
 *   `ToolError` as itself, a defect as the call's `ToolDefect`), so the one around it sees an outcome too.
 * - `next` may be run more than once (a retry): the handler runs each time; the executor's `Started` is sent the
 *   first time. The tool's timeout is the handler's, around each run.
 *
 * The stages the pipeline always has are what middleware would be: *timeout* (the tool's, else the executor's,
 * around the handler: `ToolTimeout`) and *recover* (a handler that throws or dies is that call's `ToolDefect`; a
 * typed failure its `ToolFailure`; the rest of the batch carries on). They are built in, innermost, and need no
 * installing.
 *
 * Facts about the task (the user, the session, the project) travel as Effect services: a `Context.Tag` the host
 * provides around the batch (or the server), which handlers and middleware read; see the guide's example.
 *
 * Installed in the context, middleware reaches every way a call runs: `Executor` batches, `Tool.execute`,
 * `Tool.call`, `Toolkit.call`, the MCP server and the stdio provider, and remote tools (a remote MCP server's, a
 * stdio provider's), which are ordinary tools through the same pipeline. A pipeline with middleware installed
 * takes no shortcut around it; one without is exactly as fast as before.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Executor from "./Executor.js"
import * as Logging from "./internal/middleware.js"
import * as Budget from "./internal/outputBudget.js"
import type * as Tool from "./Tool.js"
import type { ToolError } from "./ToolError.js"

/**
 * What a middleware sees of a call.
 *
 * - `id`, `name`, `arguments`: the call as the model (or the client, or the program) wrote it; `arguments` as it
 *   came, a JSON string or a parsed value;
 * - `parameters`: the arguments decoded by the tool's schema: what the handler gets;
 * - `tool`: the tool the call runs.
 *
 * @since 0.1.0
 * @category models
 */
export interface Call {
  readonly id: string
  readonly name: string
  readonly arguments: unknown
  readonly parameters: unknown
  readonly tool: Tool.Any
}

/**
 * A middleware: given the call and `next` (the rest of its pipeline, which never fails), the call's outcome.
 *
 * It is generic in the outcome: what it gives back is the outcome `next` gave, or one made from it (`Either.map`
 * on a result keeps its type), or a `ToolError` in its error channel. An outcome made up in the tool's place (a
 * cached result) is the middleware's promise that it is what the tool would give: say so with a cast. `R` is what
 * it needs; middleware installed in the context ({@link layer}) needs nothing.
 *
 * @example
 * ```ts
 * import { Effect, Either } from "effect"
 * import type { Middleware } from "effect-agent-tools"
 *
 * // counts the calls that failed, by tool
 * const failures = new Map<string, number>()
 * const countFailures: Middleware.Middleware = (call, next) =>
 *   Effect.tap(next, (outcome) =>
 *     Effect.sync(() => {
 *       if (Either.isLeft(outcome)) failures.set(call.name, (failures.get(call.name) ?? 0) + 1)
 *     }))
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Middleware<R = never> {
  <O extends Executor.Outcome>(call: Call, next: Effect.Effect<O>): Effect.Effect<O, ToolError, R>
}

const none: ReadonlyArray<Middleware> = []

/**
 * The middleware installed around every call run with this context, outermost first. A `Context.Reference`:
 * none by default. Read once when a batch starts, a server or a provider is made, or `Tool.execute` runs; install
 * it with {@link layer}.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Middleware } from "effect-agent-tools"
 *
 * const installed = Effect.map(Middleware.Installed, (middleware) => middleware.length) // 0
 * ```
 *
 * @since 0.1.0
 * @category services
 */
export class Installed extends Context.Reference<Installed>()("effect-agent-tools/Middleware/Installed", {
  defaultValue: (): ReadonlyArray<Middleware> => none
}) {}

/**
 * Installs middleware around every call run with the layer's context, inside what is installed already (the
 * layer reads the context it is built in): `Effect.provide(program, Middleware.layer(a, b))` runs `a` around `b`
 * around each call, all of them inside middleware the host installed further out. Give one layer all the
 * middleware of one place: two `Middleware.layer`s merged side by side (`Layer.merge`) are built in the same
 * context, and the second replaces the first, as any two layers of one service do.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { Executor, Middleware, Tool, Toolkit } from "effect-agent-tools"
 *
 * const Echo = Tool.make("echo", {
 *   description: "Echo a text",
 *   parameters: { text: Schema.String },
 *   handler: ({ text }) => Effect.succeed(text)
 * })
 *
 * const program = Executor.run(Toolkit.make(Echo), [{ id: "1", name: "echo", arguments: { text: "hi" } }]).pipe(
 *   Effect.provide(Middleware.layer(Middleware.logging))
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (...middleware: ReadonlyArray<Middleware>): Layer.Layer<Installed> =>
  Layer.effect(
    Installed,
    Effect.map(Installed, (outer) => outer.length === 0 ? middleware : [...outer, ...middleware])
  )

/**
 * Logs every call it wraps once it is over, with `Effect.log` at `Info` for a success, `Warning` for an error and
 * `Error` for a defect, annotated `tool.name`, `tool.call_id`, `tool.outcome` (`Success` or the error's tag;
 * `ToolInterrupted` for a call stopped from outside), `tool.duration_ms` (on Effect's clock, from when the
 * middleware got the call) and, for an error, `tool.error` (its message). The message is `tool call`.
 *
 * @example
 * ```ts
 * import { Middleware } from "effect-agent-tools"
 *
 * const logged = Middleware.layer(Middleware.logging)
 * ```
 *
 * @since 0.1.0
 * @category middleware
 */
export const logging: Middleware = Logging.logging

/**
 * The characters one token is taken for by `maxTokens`: an estimate (English prose and code average about four
 * characters a token with the common tokenizers), not a count.
 *
 * @since 0.1.0
 * @category constants
 */
export const CHARS_PER_TOKEN: number = Budget.CHARS_PER_TOKEN

/**
 * The budget of {@link outputBudget} when it is given none: 30,000 characters, about 7,500 tokens.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_MAX_CHARS: number = Budget.DEFAULT_MAX_CHARS

/**
 * How much a spill folder keeps by default before its oldest files go: 100 MiB.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_SPILL_MAX_BYTES: number = Budget.DEFAULT_SPILL_MAX_BYTES

/**
 * Where an output budget keeps the whole output of a result it cut.
 *
 * - `{ directory?, maxBytes? }` (the default): files, one per call, in a folder of their own made in `directory`
 *   (default `os.tmpdir()/agent-tools-spill`): `<directory>/<pid>-<random>/<n>-<call id>.txt`, readable by the
 *   user only, at most `maxBytes` in all (default {@link DEFAULT_SPILL_MAX_BYTES}; the oldest go first, and one
 *   output larger than that is not kept). Choose a `directory` the model can read (inside a workspace's root, for
 *   `read_file` and `grep`), and remove it when the host is done: the files outlive their calls, since the model
 *   may read one later.
 * - a sink, `(call, text) => Effect<location>`: the host keeps the text (the text parts joined by `\n`) and says
 *   where, in words the model can act on (a path, a URL, a tool call to make).
 * - `false`: the output is not kept; the model reads that it was cut.
 *
 * A spill that fails (a full disk, a sink that fails) is logged as a warning and the model reads that the whole
 * output could not be kept; the call stays a success, since its side effect has happened.
 *
 * @since 0.1.0
 * @category models
 */
export type Spill =
  | false
  | { readonly directory?: string | undefined; readonly maxBytes?: number | undefined }
  | ((call: Call, text: string) => Effect.Effect<string, unknown>)

/**
 * An output budget: how much of a result's text the model may read (`maxChars`, or an estimate in tokens,
 * `maxTokens` × {@link CHARS_PER_TOKEN}; the smaller when both are given; {@link DEFAULT_MAX_CHARS} when neither
 * is), and where the whole output goes ({@link Spill}).
 *
 * @since 0.1.0
 * @category models
 */
export interface OutputBudget {
  readonly maxChars?: number | undefined
  readonly maxTokens?: number | undefined
  readonly spill?: Spill | undefined
}

const positiveInteger = (name: string, value: number): number => {
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new Error(`Middleware.outputBudget: ${name} must be a positive integer, got ${String(value)}`)
  }
  return value
}

/**
 * Caps what the model reads of each result: a result whose text (its text parts and the text of embedded
 * resources; characters being UTF-16 code units) is longer than the budget keeps its head and its tail, each
 * ending or starting at a line boundary when one is near, with one line between them that says what was cut and
 * where the whole output is:
 *
 * ```text
 * … [9990012 characters cut; the whole output is at /tmp/agent-tools-spill/4242-Xk2a9Q/1-call_7.txt] …
 * ```
 *
 * The model's text is at most `maxChars` characters, that line included (a budget too small to hold the line
 * gives the line alone). The whole output is spilled first ({@link Spill}). Media parts (images, audio, blobs)
 * are passed whole and do not count: cutting the middle out of an image breaks it; a host that must bound them
 * drops or shrinks them in a middleware of its own. Errors pass as they are: their message is the tool's own
 * words, and a tool that fails with a whole log should give it as a result.
 *
 * The program loses nothing: `structured` and `details` are kept as they are, and the cut result's `truncation`
 * (`ToolResult.Truncation`) holds the whole content as the tool gave it, with what was cut and where it was
 * spilled; like `details`, it never reaches a model. A result within the budget is the same result.
 *
 * Install it outermost, so every middleware inside it (a journal among them) sees the whole output, and what
 * they give back (a journaled outcome on a resumed run) is cut the same way. Two budgets: the smaller holds, and
 * the whole output is spilled once. Throws for a budget that is not a positive integer (a programmer error).
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { Executor, Middleware, Tool, Toolkit } from "effect-agent-tools"
 *
 * const Logs = Tool.make("logs", {
 *   description: "The service's logs",
 *   parameters: { service: Schema.String },
 *   handler: ({ service }) => Effect.succeed(`${service}: ok\n`.repeat(100_000))
 * })
 *
 * const program = Executor.run(Toolkit.make(Logs), [{ id: "1", name: "logs", arguments: { service: "api" } }], {
 *   middleware: [Middleware.outputBudget({ maxTokens: 2_000 })]
 * })
 * ```
 *
 * @since 0.1.0
 * @category middleware
 */
export const outputBudget = (options?: OutputBudget): Middleware => {
  const byChars = options?.maxChars === undefined ? undefined : positiveInteger("maxChars", options.maxChars)
  const byTokens = options?.maxTokens === undefined
    ? undefined
    : positiveInteger("maxTokens", options.maxTokens) * Budget.CHARS_PER_TOKEN
  const maxChars = Math.min(byChars ?? Infinity, byTokens ?? Infinity, byChars ?? byTokens ?? DEFAULT_MAX_CHARS)
  const spillOption = options?.spill
  const spill: Budget.Spill | undefined = spillOption === false
    ? undefined
    : typeof spillOption === "function"
    ? Budget.sinkSpill(spillOption)
    : new Budget.SpillFolder({
      parent: spillOption?.directory,
      maxBytes: spillOption?.maxBytes === undefined
        ? Budget.DEFAULT_SPILL_MAX_BYTES
        : positiveInteger("spill.maxBytes", spillOption.maxBytes)
    }).spill
  return (call, next) => Effect.flatMap(next, (outcome) => Budget.budgetOutcome(call, outcome, maxChars, spill))
}
