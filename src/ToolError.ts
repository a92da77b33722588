/**
 * The ways a tool call can fail, as values.
 *
 * Every failure of a call is one of the eight tagged errors below; the model sees one line, `Error: <message>`
 * (see {@link toModelText}), and the program sees the typed union. The wording of every `message` is part of the
 * contract: it is what a model reads to correct itself, so it names what went wrong in the model's terms (the
 * argument path, the tool name, the duration) and never carries stack traces or Effect internals.
 *
 * @since 0.1.0
 */
import * as Duration from "effect/Duration"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"

/**
 * @since 0.1.0
 * @category type ids
 */
export const TypeId: unique symbol = Symbol.for("effect-agent-tools/ToolError")

/**
 * @since 0.1.0
 * @category type ids
 */
export type TypeId = typeof TypeId

/**
 * The prefix the model sees in front of every error message, applied exactly once at the model boundary.
 *
 * @since 0.1.0
 * @category constants
 */
export const MODEL_PREFIX = "Error: "

/**
 * The longest tool name a message quotes whole: a longer one (a model can write anything where a name goes) is
 * quoted as its first this-many characters, an ellipsis and its length. Every valid name fits (see
 * `Tool.NAME_PATTERN`).
 *
 * @example
 * ```ts
 * import { ToolError } from "effect-agent-tools"
 *
 * const error = new ToolError.ToolNotFound({ tool: "x".repeat(100_000), available: ["read_file"] })
 * console.log(error.message.length < 200) // true
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_QUOTED_NAME_LENGTH = 64

/**
 * The most tool names `ToolNotFound` lists; the rest are counted (`…, and 450 more`).
 *
 * @example
 * ```ts
 * import { ToolError } from "effect-agent-tools"
 *
 * const available = Array.from({ length: 500 }, (_, i) => `tool_${i}`)
 * const error = new ToolError.ToolNotFound({ tool: "tool", available })
 * console.log(error.message.endsWith("tool_49, and 450 more")) // true
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_LISTED_TOOLS = 50

/**
 * The longest line of an `InvalidArguments` message: a longer one (a property name of a megabyte, a schema's
 * enum of a thousand values) is cut there and ends with `…`. With at most 20 problems listed (and a line counting
 * the rest), the message of any argument error stays within about 10 kB.
 *
 * @example
 * ```ts
 * import { ToolError } from "effect-agent-tools"
 *
 * const error = new ToolError.InvalidArguments({
 *   tool: "t",
 *   problems: [new ToolError.ArgumentProblem({ path: "k".repeat(10_000), message: "unexpected property" })]
 * })
 * console.log(error.message.length) // 519: "invalid arguments: " and 500 characters
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_PROBLEM_LINE_LENGTH = 500

/** A tool name in quotes, bounded by {@link MAX_QUOTED_NAME_LENGTH}. */
const quoted = (name: string): string =>
  name.length <= MAX_QUOTED_NAME_LENGTH
    ? JSON.stringify(name)
    : `${JSON.stringify(name.slice(0, MAX_QUOTED_NAME_LENGTH)).slice(0, -1)}…" (${name.length} characters)`

const listed = (names: ReadonlyArray<string>): string => {
  if (names.length === 0) return "(none)"
  if (names.length <= MAX_LISTED_TOOLS) return names.join(", ")
  return `${names.slice(0, MAX_LISTED_TOOLS).join(", ")}, and ${names.length - MAX_LISTED_TOOLS} more`
}

const bounded = (line: string): string =>
  line.length <= MAX_PROBLEM_LINE_LENGTH ? line : `${line.slice(0, MAX_PROBLEM_LINE_LENGTH - 1)}…`

/**
 * One problem found in a call's arguments: where (`path`, dotted with `[i]` for array items, empty for the whole
 * arguments object) and what was wrong (`expected ..., got ...`).
 *
 * @since 0.1.0
 * @category models
 */
export class ArgumentProblem extends Schema.Class<ArgumentProblem>("effect-agent-tools/ArgumentProblem")({
  path: Schema.String,
  message: Schema.String
}) {}

/**
 * No tool by the requested name. The message lists the available tools so the model can pick one (at most
 * {@link MAX_LISTED_TOOLS}; the name asked for is quoted up to {@link MAX_QUOTED_NAME_LENGTH} characters).
 *
 * @example
 * ```ts
 * import { ToolError } from "effect-agent-tools"
 *
 * const error = new ToolError.ToolNotFound({ tool: "reed_file", available: ["read_file", "write_file"] })
 * console.log(ToolError.toModelText(error))
 * // Error: unknown tool "reed_file"; available tools: read_file, write_file
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolNotFound extends Schema.TaggedError<ToolNotFound>("effect-agent-tools/ToolNotFound")(
  "ToolNotFound",
  {
    tool: Schema.String,
    available: Schema.Array(Schema.String)
  }
) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  /** @since 0.1.0 */
  override get message(): string {
    return `unknown tool ${quoted(this.tool)}; available tools: ${listed(this.available)}`
  }
}

/**
 * The arguments were not JSON, not a JSON object, or did not match the tool's parameters. One line per problem:
 * `invalid arguments: <path>: expected <what>, got <what came>`, each at most {@link MAX_PROBLEM_LINE_LENGTH}
 * characters.
 *
 * @example
 * ```ts
 * import { ToolError } from "effect-agent-tools"
 *
 * const error = new ToolError.InvalidArguments({
 *   tool: "read_file",
 *   problems: [new ToolError.ArgumentProblem({ path: "max_bytes", message: "expected an integer, got \"ten\"" })]
 * })
 * console.log(error.message) // invalid arguments: max_bytes: expected an integer, got "ten"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidArguments extends Schema.TaggedError<InvalidArguments>("effect-agent-tools/InvalidArguments")(
  "InvalidArguments",
  {
    tool: Schema.String,
    problems: Schema.Array(ArgumentProblem)
  }
) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  /** @since 0.1.0 */
  override get message(): string {
    return "invalid arguments: " +
      this.problems.map((p) => bounded(p.path === "" ? p.message : `${p.path}: ${p.message}`)).join("\n")
  }
}

/**
 * The handler failed with a typed error. The message is the error's own `message` when it has one, else its JSON.
 * `E` is the type of `error`: `unknown` in general, the tool's `Tool.Failure` (and the executor's `onStart` error)
 * in a typed outcome (see `Executor.Outcome`).
 *
 * @example
 * ```ts
 * import { ToolError } from "effect-agent-tools"
 *
 * const error = new ToolError.ToolFailure({ tool: "read_file", message: "no such file: a.txt", error: undefined })
 * console.log(ToolError.toModelText(error)) // Error: no such file: a.txt
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolFailure<out E = unknown>
  extends Schema.TaggedError<ToolFailure>("effect-agent-tools/ToolFailure")("ToolFailure", {
    tool: Schema.String,
    message: Schema.String,
    /** The handler's error as it failed, for the program; never shown to the model. */
    error: Schema.Unknown
  })
{
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  /** The handler's error as it failed, for the program; never shown to the model. */
  declare readonly error: E
}

/**
 * The handler died (threw, `Effect.die`, or produced output that cannot be rendered). The message is one line; the
 * whole `Cause` stays on the value for logs and never reaches the model.
 *
 * @example
 * ```ts
 * import { Cause } from "effect"
 * import { ToolError } from "effect-agent-tools"
 *
 * const error = new ToolError.ToolDefect({ tool: "x", reason: "boom", cause: Cause.die(new Error("boom")) })
 * console.log(error.message) // tool "x" panicked: boom
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolDefect extends Schema.TaggedError<ToolDefect>("effect-agent-tools/ToolDefect")(
  "ToolDefect",
  {
    tool: Schema.String,
    /** One line saying what went wrong, without a stack. */
    reason: Schema.String,
    cause: Schema.Cause({ error: Schema.Unknown, defect: Schema.Defect })
  }
) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  /** @since 0.1.0 */
  override get message(): string {
    return `tool ${quoted(this.tool)} panicked: ${this.reason}`
  }
}

/**
 * The call outran its timeout; its handler was interrupted and its finalizers have run.
 *
 * @example
 * ```ts
 * import { Duration } from "effect"
 * import { ToolError } from "effect-agent-tools"
 *
 * const error = new ToolError.ToolTimeout({ tool: "bash", timeout: Duration.seconds(30) })
 * console.log(error.message) // tool "bash" timed out after 30s
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolTimeout extends Schema.TaggedError<ToolTimeout>("effect-agent-tools/ToolTimeout")(
  "ToolTimeout",
  {
    tool: Schema.String,
    timeout: Schema.Duration
  }
) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  /** @since 0.1.0 */
  override get message(): string {
    return `tool ${quoted(this.tool)} timed out after ${Duration.format(this.timeout)}`
  }
}

/**
 * A permission requester refused the call; the handler never ran.
 *
 * @example
 * ```ts
 * import { ToolError } from "effect-agent-tools"
 *
 * const error = new ToolError.PermissionDenied({ tool: "bash", description: "run rm -rf /", reason: "too risky" })
 * console.log(error.message) // permission denied: run rm -rf /: too risky
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class PermissionDenied extends Schema.TaggedError<PermissionDenied>("effect-agent-tools/PermissionDenied")(
  "PermissionDenied",
  {
    tool: Schema.String,
    description: Schema.String,
    reason: Schema.optional(Schema.String)
  }
) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  /** @since 0.1.0 */
  override get message(): string {
    return `permission denied: ${this.description}` + (this.reason === undefined ? "" : `: ${this.reason}`)
  }
}

/**
 * The call was cancelled before it finished. `partial` is the last partial output the tool reported through
 * `Tool.progress`, if any, so a host can keep what was already produced.
 *
 * @example
 * ```ts
 * import { ToolError } from "effect-agent-tools"
 *
 * const error = new ToolError.ToolInterrupted({ tool: "bash" })
 * console.log(error.message) // the call was cancelled before it finished
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolInterrupted extends Schema.TaggedError<ToolInterrupted>("effect-agent-tools/ToolInterrupted")(
  "ToolInterrupted",
  {
    tool: Schema.String,
    partial: Schema.optional(Schema.Unknown)
  }
) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  /** @since 0.1.0 */
  override get message(): string {
    return "the call was cancelled before it finished"
  }
}

/**
 * The call was running when the process running it stopped (a crash, a kill, a lost machine), and a resumed run
 * (see `Journal`) cannot tell whether it took effect: its handler had started, no outcome was recorded, and its
 * tool does not say that running it again is safe (`replay` is `"unknown"`, the default, or the tool is no longer
 * the one that started it). So it is not run again; the model reads that its effect must be checked first.
 * `idempotencyKey` is the key the call ran with (`Tool.currentCall`), for a program that can look its effect up.
 *
 * @example
 * ```ts
 * import { ToolError } from "effect-agent-tools"
 *
 * const error = new ToolError.ToolOutcomeUnknown({ tool: "send_email" })
 * console.log(ToolError.toModelText(error))
 * // Error: the call was running when its process stopped, so whether it took effect is unknown: check its effect before calling it again
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolOutcomeUnknown
  extends Schema.TaggedError<ToolOutcomeUnknown>("effect-agent-tools/ToolOutcomeUnknown")("ToolOutcomeUnknown", {
    tool: Schema.String,
    idempotencyKey: Schema.optional(Schema.String)
  })
{
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  /** @since 0.1.0 */
  override get message(): string {
    return "the call was running when its process stopped, so whether it took effect is unknown: " +
      "check its effect before calling it again"
  }
}

/**
 * Every way a call can fail.
 *
 * @since 0.1.0
 * @category models
 */
export type ToolError =
  | ToolNotFound
  | InvalidArguments
  | ToolFailure
  | ToolDefect
  | ToolTimeout
  | PermissionDenied
  | ToolInterrupted
  | ToolOutcomeUnknown

/**
 * The union as a schema, so errors survive a wire (a durable record, a queue between processes).
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { ToolError } from "effect-agent-tools"
 *
 * const encoded = Schema.encodeSync(ToolError.ToolError)(new ToolError.ToolInterrupted({ tool: "bash" }))
 * console.log(encoded) // { _tag: "ToolInterrupted", tool: "bash" }
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const ToolError: Schema.Union<[
  typeof ToolNotFound,
  typeof InvalidArguments,
  typeof ToolFailure,
  typeof ToolDefect,
  typeof ToolTimeout,
  typeof PermissionDenied,
  typeof ToolInterrupted,
  typeof ToolOutcomeUnknown
]> = Schema.Union(
  ToolNotFound,
  InvalidArguments,
  ToolFailure,
  ToolDefect,
  ToolTimeout,
  PermissionDenied,
  ToolInterrupted,
  ToolOutcomeUnknown
)

/**
 * Whether a value is one of the tool errors.
 *
 * @example
 * ```ts
 * import { ToolError } from "effect-agent-tools"
 *
 * console.log(ToolError.isToolError(new ToolError.ToolInterrupted({ tool: "x" }))) // true
 * console.log(ToolError.isToolError(new Error("x"))) // false
 * ```
 *
 * @since 0.1.0
 * @category guards
 */
export const isToolError = (u: unknown): u is ToolError => Predicate.hasProperty(u, TypeId)

/**
 * What the model sees for an error: `Error: ` followed by the message. Apply it once, at the model boundary; an
 * error that crossed MCP carries its message without the prefix, so it still reads `Error:` once.
 *
 * @example
 * ```ts
 * import { ToolError } from "effect-agent-tools"
 *
 * const text = ToolError.toModelText(new ToolError.ToolNotFound({ tool: "x", available: ["a", "b"] }))
 * console.log(text) // Error: unknown tool "x"; available tools: a, b
 * ```
 *
 * @since 0.1.0
 * @category conversions
 */
export const toModelText = (error: ToolError): string => MODEL_PREFIX + error.message
