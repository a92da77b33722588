/**
 * A tool: an Effect program whose parameters come from an Effect `Schema`.
 *
 * From the one schema a tool serves JSON Schema to every provider (see `ToolSchema`) and checks the model's
 * arguments, with error text a model can act on (see `ToolError`). The decoder, the validator and the JSON Schema
 * are built once, when the tool is made; a call only parses, decodes and runs.
 *
 * @since 0.1.0
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FiberRef from "effect/FiberRef"
import * as Inspectable from "effect/Inspectable"
import * as Option from "effect/Option"
import type { Pipeable } from "effect/Pipeable"
import { pipeArguments } from "effect/Pipeable"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import type * as Types from "effect/Types"
import type * as Elicitation from "./Elicitation.js"
import type * as Executor from "./Executor.js"
import * as Call from "./internal/call.js"
import type * as Context from "./internal/context.js"
import { currentCall as currentCallRef } from "./internal/context.js"
import * as Elicit from "./internal/elicitation.js"
import * as JsonSchemas from "./internal/jsonSchema.js"
import { reasonOf } from "./internal/reason.js"
import * as Internal from "./internal/tool.js"
import type * as Permission from "./Permission.js"
import type { ToolError } from "./ToolError.js"
import type * as ToolResult from "./ToolResult.js"

/**
 * @since 0.1.0
 * @category type ids
 */
export const TypeId: unique symbol = Symbol.for("effect-agent-tools/Tool")

/**
 * @since 0.1.0
 * @category type ids
 */
export type TypeId = typeof TypeId

/**
 * Where a tool keeps its call machinery (decoder, handler, output mapping). Not part of the public surface.
 *
 * @since 0.1.0
 * @category type ids
 */
export const KernelId: unique symbol = Symbol.for("effect-agent-tools/Tool/Kernel")

/**
 * Where a tool keeps the options it was made with, so {@link wrap} derives what an override changes by the rule
 * that made it. Not part of the public surface.
 *
 * @since 0.1.0
 * @category type ids
 */
export const OptionsId: unique symbol = Symbol.for("effect-agent-tools/Tool/Options")

/**
 * A JSON Schema document, as served to a provider.
 *
 * @since 0.1.0
 * @category models
 */
export type JsonSchema = { readonly [key: string]: unknown }

/**
 * Behavioural hints, as in MCP. `undefined` means unstated, which is not the same as `false`: MCP's defaults for an
 * unstated hint are `readOnly: false`, `destructive: true`, `idempotent: false`, `openWorld: true`. Hints inform a
 * policy; they never allow a call on their own (see `Permission`).
 *
 * @since 0.1.0
 * @category models
 */
export type Annotations = Context.Annotations

/**
 * What a tool reports while it runs. `progress`/`total` are numbers in any unit; `partial` is output produced so
 * far (kept on `ToolInterrupted` if the call is cancelled).
 *
 * @since 0.1.0
 * @category models
 */
export type Progress = Context.Progress

/**
 * What running a call again is safe for, as the tool's author states it (the Go design's "running a call again"):
 *
 * - `"safe"`: running a call twice has the effect of running it once (a read, a pure computation, a PUT of a whole
 *   value): a call cut short by a crash is simply run again;
 * - `"keyed"`: the tool passes the call's idempotency key (`Tool.currentCall`) to what it changes, and promises
 *   that a second call with a completed call's key has no further effect: a call cut short is run again with its
 *   original key;
 * - `"unknown"` (the default): nothing is promised; a call cut short is never run again on its own, its outcome is
 *   unknown.
 *
 * Annotations (`idempotent`, `readOnly`) are hints from the tool's author or a remote server and never stand in
 * for it.
 *
 * @since 0.1.0
 * @category models
 */
export type Replay = "safe" | "keyed" | "unknown"

/**
 * The call a handler is running for: its id (the model's), its tool's name, and its idempotency key.
 *
 * The key is minted once per model call and is the same on every run of that call: a middleware that runs the
 * handler again, and a resumed run that runs a `keyed` call again after its process died. Pass it to what the call
 * changes (an `Idempotency-Key` header, a client token), so a second call with a completed call's key has no further
 * effect: that is what `replay: "keyed"` promises. In a journaled run it is `Journal.idempotencyKey({ runId, step,
 * callId })`; elsewhere (no journal, `Tool.execute`, a call served over MCP) it is a random UUID, unique per call.
 *
 * @since 0.1.0
 * @category models
 */
export interface CallInfo {
  readonly id: string
  readonly name: string
  readonly idempotencyKey: string
}

/**
 * A tool: its name, what its calls take and give, and the services its handler needs. The type parameters, in order:
 *
 * - `Name`: the name, as a literal type;
 * - `Parameters`: the decoded parameters its handler takes (the parameters schema's `Type`); what a program passes
 *   to {@link call} and `Toolkit.call`;
 * - `Success`: what its handler succeeds with (the `success` schema's `Type`, else what the handler gives); what
 *   {@link call} gives;
 * - `Failure`: the typed errors a call fails with (the `failure` schema's `Type`, else the handler's error type,
 *   with a permission preview's); `ToolError`s a handler fails with are not in it, they stay what they are;
 * - `R`: the services its handler (and its permission preview) needs;
 * - `Structured`: the `structured` value of its results, what a program reads after a batch (see
 *   `Executor.Outcome`): the success value encoded through the `success` schema, `undefined` for a text or content
 *   parts. Derived by {@link make}; rarely written by hand, hence last: the first five read as an Effect's
 *   `A, E, R` do, after what the tool takes.
 *
 * `Tool<Name>` is a tool by that name needing no services, whatever it takes and gives; {@link Any} is any tool.
 * `Parameters` is contravariant (a handler consumes them) and the rest covariant, so every tool is a `Tool.Any`
 * and a tool is assignable to a type that asks less of it.
 *
 * `toJSON`, `toString` and `util.inspect` show what the tool is (name, description, annotations, options, schemas),
 * never its call machinery.
 *
 * @since 0.1.0
 * @category models
 */
export interface Tool<
  out Name extends string,
  in Parameters = never,
  out Success = unknown,
  out Failure = unknown,
  out R = never,
  out Structured = unknown
> extends Pipeable, Inspectable.Inspectable {
  readonly [TypeId]: Tool.Variance<Parameters, Success, Failure, R, Structured>
  /** Matches `^[a-zA-Z0-9_-]{1,64}$`. */
  readonly name: Name
  readonly description: string
  readonly title: string | undefined
  readonly annotations: Annotations
  /** Served with OpenAI strict mode (every property required, optional ones nullable). */
  readonly strict: boolean
  /** A batch containing this tool runs one call at a time, in order. */
  readonly sequential: boolean
  /** What running a call of this tool again is safe for (see {@link Replay}); `"unknown"` unless the tool says. */
  readonly replay: Replay
  /** This tool's own timeout; when undefined the executor's default applies. */
  readonly timeout: Duration.Duration | undefined
  /** Whether arguments are checked before the handler runs. */
  readonly validate: boolean
  /** The declared permission's action, when calls of this tool are asked about before they run. */
  readonly permissionAction: string | undefined
  /** The parameters as standard JSON Schema (draft 2020-12), what MCP serves. */
  readonly inputSchema: JsonSchema
  /** The output as JSON Schema, for tools that declare an object-shaped `success` schema. */
  readonly outputSchema: JsonSchema | undefined
  /** @internal */
  readonly [KernelId]: Internal.Kernel
  /** @internal */
  readonly projections: Map<JsonSchemas.Target, JsonSchema>
  /** The options the tool was made with, for {@link wrap}'s overrides. @internal */
  readonly [OptionsId]: CommonOptions<any, any, any>
}

/**
 * @since 0.1.0
 * @category models
 */
export declare namespace Tool {
  /**
   * The variance of a tool's type parameters.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Variance<in Parameters, out Success, out Failure, out R, out Structured> {
    readonly _Parameters: Types.Contravariant<Parameters>
    readonly _Success: Types.Covariant<Success>
    readonly _Failure: Types.Covariant<Failure>
    readonly _R: Types.Covariant<R>
    readonly _Structured: Types.Covariant<Structured>
  }
}

/**
 * Any tool: every tool is assignable to it. Its parameters are `never` (nothing is known a call could pass), the
 * rest `unknown`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Any extends Tool<string, never, unknown, unknown, unknown, unknown> {}

/**
 * A tool whose schema is known only at run time: a remote MCP server's (`McpClient`), a stdio provider's
 * (`StdioProvider.connect`). Its parameters are a JSON object, checked against the served JSON Schema; it succeeds
 * with the `ToolResult` the far end gave; it fails with `Failure` (a stdio provider's `StdioProviderError`) or a
 * `ToolError` (every failure of an MCP server's tool).
 *
 * @since 0.1.0
 * @category models
 */
export interface Dynamic<out Failure = never>
  extends Tool<string, Record<string, unknown>, ToolResult.ToolResult, Failure, never, unknown>
{}

/**
 * The decoded parameters a tool's handler takes: what {@link call} and `Toolkit.call` take for it. For a union of
 * tools, what every one of them takes (their intersection): parameters go in, so a value that one of the tools
 * would refuse is no parameter of the union.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { Tool } from "effect-agent-tools"
 *
 * const Resize = Tool.make("resize", {
 *   description: "Resize an image",
 *   parameters: { path: Schema.String, width: Schema.optional(Schema.Int) },
 *   handler: ({ path }) => Effect.succeed(path)
 * })
 * type ResizeParameters = Tool.Parameters<typeof Resize> // { readonly path: string; readonly width?: number }
 * ```
 *
 * @since 0.1.0
 * @category type-level
 */
export type Parameters<T> = [T] extends [Tool<string, infer P, infer _S, infer _F, infer _R, infer _St>] ? P : never

/**
 * What a tool's handler succeeds with: the `success` schema's `Type`, else what the handler gives. What
 * {@link call} and `Toolkit.call` give.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { Tool } from "effect-agent-tools"
 *
 * const Stat = Tool.make("stat", {
 *   description: "Size and modification time of a file",
 *   parameters: { path: Schema.String },
 *   success: Schema.Struct({ size: Schema.Int, modified: Schema.Date }),
 *   handler: () => Effect.succeed({ size: 12, modified: new Date(0) })
 * })
 * type StatSuccess = Tool.Success<typeof Stat> // { readonly size: number; readonly modified: Date }
 * ```
 *
 * @since 0.1.0
 * @category type-level
 */
export type Success<T> = T extends Tool<string, infer _P, infer S, infer _F, infer _R, infer _St> ? S : never

/**
 * The typed errors a call of a tool fails with: the `failure` schema's `Type`, else the handler's error type (with
 * a permission preview's). `ToolError`s are not in it: {@link call} fails with `Failure | ToolError`.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { Tool } from "effect-agent-tools"
 *
 * class FileNotFound extends Schema.TaggedError<FileNotFound>()("FileNotFound", { path: Schema.String }) {}
 *
 * const ReadFile = Tool.make("read_file", {
 *   description: "Read a file",
 *   parameters: { path: Schema.String },
 *   handler: ({ path }) => Effect.fail(new FileNotFound({ path }))
 * })
 * type ReadFileFailure = Tool.Failure<typeof ReadFile> // FileNotFound
 * ```
 *
 * @since 0.1.0
 * @category type-level
 */
export type Failure<T> = T extends Tool<string, infer _P, infer _S, infer F, infer _R, infer _St> ? F : never

/**
 * The services a tool's handler (and its permission preview) needs.
 *
 * @example
 * ```ts
 * import { Context, Effect } from "effect"
 * import { Tool } from "effect-agent-tools"
 *
 * class Clock extends Context.Tag("Clock")<Clock, { readonly now: Effect.Effect<number> }>() {}
 *
 * const Now = Tool.make("now", {
 *   description: "The time",
 *   handler: () => Effect.flatMap(Clock, (clock) => clock.now)
 * })
 * type NowRequirements = Tool.Requirements<typeof Now> // Clock
 * ```
 *
 * @since 0.1.0
 * @category type-level
 */
export type Requirements<T> = T extends Tool<string, infer _P, infer _S, infer _F, infer R, infer _St> ? R : never

/**
 * The `structured` value of a tool's results: the success value encoded through its `success` schema (or the
 * handler's value itself without one), `undefined` when the output is a text, nothing or content parts, and a
 * handler-made `ToolResult`'s own. With `toModelOutput`, the encoded value whatever it is.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { Tool } from "effect-agent-tools"
 *
 * const Stat = Tool.make("stat", {
 *   description: "Size and modification time of a file",
 *   parameters: { path: Schema.String },
 *   success: Schema.Struct({ size: Schema.Int, modified: Schema.Date }),
 *   handler: () => Effect.succeed({ size: 12, modified: new Date(0) })
 * })
 * type StatStructured = Tool.Structured<typeof Stat> // { readonly size: number; readonly modified: string }
 * ```
 *
 * @since 0.1.0
 * @category type-level
 */
export type Structured<T> = T extends Tool<string, infer _P, infer _S, infer _F, infer _R, infer St> ? St : never

/**
 * A tool's name as a literal type.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Tool } from "effect-agent-tools"
 *
 * const Ping = Tool.make("ping", { description: "Answer pong", handler: () => Effect.succeed("pong") })
 * type PingName = Tool.Name<typeof Ping> // "ping"
 * ```
 *
 * @since 0.1.0
 * @category type-level
 */
export type Name<T> = T extends Tool<infer N, infer _P, infer _S, infer _F, infer _R, infer _St> ? N : never

/**
 * The `structured` value of a result made from a handler's output `I` (encoded through the `success` schema when
 * there is one), by the output rule of {@link make}: a handler-made `ToolResult` keeps its own; a string,
 * `undefined` or `null` is text with none; a non-empty array of content parts is those parts with none; anything
 * else is JSON whose `structured` is the value.
 *
 * @since 0.1.0
 * @category type-level
 */
export type StructuredOf<I> = I extends ToolResult.ToolResult<infer S> ? S
  : I extends string | null | undefined | void ? undefined
  : I extends ReadonlyArray<ToolResult.Content> ? I | undefined
  : I

/**
 * Parameters as a tool takes them: Struct fields, or any Schema of an object (a Struct, a Class).
 *
 * @since 0.1.0
 * @category models
 */
export type ParametersInput = Schema.Struct.Fields | Schema.Schema.AnyNoContext

/**
 * The decoded parameters a handler receives.
 *
 * @since 0.1.0
 * @category type-level
 */
export type ParametersType<P> = P extends Schema.Schema.AnyNoContext ? Schema.Schema.Type<P>
  : P extends Schema.Struct.Fields ? Schema.Struct.Type<P>
  : never

/**
 * Resource keys of a call: a fixed key, or a function of the decoded parameters giving a key, several keys, or
 * none. Calls sharing a key run one after another in the model's order; the rest run alongside.
 *
 * @since 0.1.0
 * @category models
 */
export type Resource<P> = string | ((params: P) => string | ReadonlyArray<string> | undefined)

/**
 * Options shared by {@link make} and {@link fromJsonSchema}. `P` is the decoded parameters, `RP` and `EP` the
 * services and errors of the permission preview.
 *
 * @since 0.1.0
 * @category models
 */
export interface CommonOptions<P, RP, EP = unknown> {
  readonly description: string
  readonly title?: string | undefined
  readonly strict?: boolean | undefined
  readonly sequential?: boolean | undefined
  /** What running a call again is safe for (see {@link Replay}); default `"unknown"`. */
  readonly replay?: Replay | undefined
  readonly resource?: Resource<P> | undefined
  readonly annotations?: Annotations | undefined
  readonly timeout?: Duration.DurationInput | undefined
  readonly permission?: Permission.Spec<P, RP, EP> | undefined
  /**
   * What a call says it runs confined by, as a function of its decoded parameters: `"workspace:/abs/root"` (every
   * path checked against that root), `"container:abc"`; `undefined` for a call that is not confined. It reaches
   * the permission request (`PermissionRequest.confined`), so a policy can let confined calls through and ask about
   * the rest. A claim the tool's author makes, never checked by the executor; a tool that says nothing is
   * unconfined.
   */
  readonly confined?: ((params: P) => string | undefined) | undefined
  /** Default true. False hands the parsed JSON to the handler untouched (for tools that check it themselves). */
  readonly validate?: boolean | undefined
}

/**
 * What the model sees of a success, made from the typed success value: a text, or content parts. See
 * {@link make}'s `toModelOutput`.
 *
 * @since 0.1.0
 * @category models
 */
export type ToModelOutput<A> = (value: A) => string | ReadonlyArray<ToolResult.Content>

/**
 * The name rule: 1 to 64 letters, digits, `_` or `-`.
 *
 * @since 0.1.0
 * @category constants
 */
export const NAME_PATTERN: RegExp = Internal.NAME_PATTERN

const variance: Tool.Variance<never, never, never, never, never> = {
  _Parameters: (_: never) => _,
  _Success: (_: never) => _,
  _Failure: (_: never) => _,
  _R: (_: never) => _,
  _Structured: (_: never) => _
}

const Proto = {
  [TypeId]: variance,
  pipe() {
    // eslint-disable-next-line prefer-rest-params
    return pipeArguments(this, arguments)
  },
  toJSON(this: Any) {
    return {
      _id: "Tool",
      name: this.name,
      ...(this.title === undefined ? {} : { title: this.title }),
      description: this.description,
      annotations: this.annotations,
      strict: this.strict,
      sequential: this.sequential,
      replay: this.replay,
      ...(this.timeout === undefined ? {} : { timeout: Inspectable.toJSON(this.timeout) }),
      validate: this.validate,
      ...(this.permissionAction === undefined ? {} : { permissionAction: this.permissionAction }),
      inputSchema: this.inputSchema,
      ...(this.outputSchema === undefined ? {} : { outputSchema: this.outputSchema })
    }
  },
  toString(this: Any) {
    return Inspectable.format(this.toJSON())
  },
  [Inspectable.NodeInspectSymbol](this: Any) {
    return this.toJSON()
  }
}

const constructionError = (name: string, error: unknown): Error => {
  return new Error(`tool ${JSON.stringify(name)}: parameters cannot be served as JSON Schema: ${reasonOf(error)}`)
}

const resourceFunction = (resource: Resource<any> | undefined): (params: unknown) => ReadonlyArray<string> => {
  if (resource === undefined) return () => []
  if (typeof resource === "string") {
    const keys = [resource]
    return () => keys
  }
  return (params) => {
    const keys = resource(params)
    if (keys === undefined) return []
    return typeof keys === "string" ? [keys] : keys
  }
}

/** The kernel's parts that come from the schemas and the handler, not from the options {@link wrap} overrides. */
type KernelBase = Omit<Internal.Kernel, OptionKernelFields>
type OptionKernelFields = "annotations" | "timeout" | "resources" | "permission" | "confined"

const build = <T extends Any>(fields: {
  readonly name: string
  readonly options: CommonOptions<any, any, any>
  readonly standard: JsonSchema
  readonly strictSchema: JsonSchema | undefined
  readonly outputSchema: JsonSchema | undefined
  readonly kernel: Omit<KernelBase, "name" | "strict">
}): T => {
  const { name, options } = fields
  const self = Object.create(Proto)
  self.name = name
  self.strict = options.strict === true
  self.validate = options.validate !== false
  self.inputSchema = fields.standard
  self.outputSchema = fields.outputSchema
  self.projections = new Map<JsonSchemas.Target, JsonSchema>([["standard", fields.standard]])
  if (fields.strictSchema !== undefined) self.projections.set("openai-strict", fields.strictSchema)
  // Object.assign, not a spread followed by more properties: V8 (Node 20) takes a slow path for those, 1 µs each,
  // which was most of the cost of making a tool (a remote server's listing makes one per tool)
  applyOptions(self, Object.assign({}, fields.kernel, { name, strict: self.strict }), options)
  return self
}

/**
 * Sets what a tool's options say of it beyond its schemas and handler (description, title, hints, scheduling,
 * timeout, permission, confinement), on the tool and on its kernel: the one rule for {@link make},
 * {@link fromJsonSchema} and {@link wrap}'s overrides, so a wrap derives each field as the original did.
 */
const applyOptions = (
  self: { -readonly [K in keyof Any]: Any[K] },
  kernel: KernelBase,
  options: CommonOptions<any, any, any>
): void => {
  const annotations = options.annotations ?? {}
  const timeout = options.timeout === undefined ? undefined : Duration.decode(options.timeout)
  self.description = options.description
  self.title = options.title ?? annotations.title
  self.annotations = annotations
  self.sequential = options.sequential === true
  self.replay = options.replay ?? "unknown"
  self.timeout = timeout
  self.permissionAction = options.permission?.action
  self[OptionsId] = options
  self[KernelId] = Object.assign({}, kernel, {
    annotations,
    timeout,
    resources: resourceFunction(options.resource),
    permission: options.permission,
    confined: options.confined
  }) satisfies Internal.Kernel
}

/**
 * Makes a tool from a Schema of its parameters and an Effect handler.
 *
 * `parameters` are Struct fields or any Schema of an object. `success` (optional) is the output's schema: the
 * handler's value is encoded through it and, when it is an object, served as MCP `outputSchema` and
 * `structuredContent`. `failure` (optional) types the handler's errors; a typed failure reaches the model as its
 * `message` (or its JSON). Throws at construction for a bad name or parameters that cannot be JSON Schema (a
 * programmer error, like a bad regexp literal).
 *
 * The tool's type says what its calls take and give (see {@link Tool}): the parameters' `Type`; the `success`
 * schema's `Type`, else what the handler gives; the `failure` schema's `Type`, else the handler's error type. With
 * a `failure` schema the handler may also fail with a `ToolError` (`Permission.require` does), which stays what it
 * is.
 *
 * Handler output becomes a `ToolResult`: a string is text; a `ToolResult` is used as is; an array of content parts
 * is those parts; `undefined`/`null` is empty text; anything else is JSON (text = its JSON, `structured` = the
 * value). Output that cannot become JSON (a cycle, a `BigInt`) is that call's `ToolDefect`.
 *
 * `toModelOutput` (optional) says what the model sees instead: it gets the typed success value (before encoding)
 * and gives a text or content parts, while `structured` keeps the encoded value for the program (and for MCP's
 * `structuredContent`, so a client reading that gets the whole value and a model reading `content` gets the
 * shaped one). A handler-made `ToolResult` is used as is, without it.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { Tool } from "effect-agent-tools"
 *
 * class FileNotFound extends Schema.TaggedError<FileNotFound>()("FileNotFound", { path: Schema.String }) {
 *   override get message() {
 *     return `no such file: ${this.path}`
 *   }
 * }
 *
 * const ReadFile = Tool.make("read_file", {
 *   description: "Read a file from disk",
 *   parameters: {
 *     path: Schema.String.annotations({ description: "Absolute path to read" }),
 *     max_bytes: Schema.optional(Schema.Int)
 *   },
 *   success: Schema.String,
 *   failure: FileNotFound,
 *   annotations: { readOnly: true },
 *   handler: ({ path }) =>
 *     path === "/etc/hostname" ? Effect.succeed("example\n") : Effect.fail(new FileNotFound({ path }))
 * })
 * // : Tool<"read_file", { readonly path: string } & { readonly max_bytes?: number | undefined }, string,
 * //        FileNotFound, never, undefined>
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <
  const Name extends string,
  Parameters extends ParametersInput = {},
  Success extends Schema.Schema.AnyNoContext = never,
  Failure extends Schema.Schema.AnyNoContext = never,
  A = never,
  E = never,
  R = never,
  RP = never,
  EP = never
>(
  name: Name,
  options: CommonOptions<ParametersType<Parameters>, RP, EP> & {
    readonly parameters?: Parameters | undefined
    readonly success?: Success | undefined
    readonly failure?: Failure | undefined
    readonly toModelOutput?: ToModelOutput<SuccessOf<Success, A>> | undefined
    readonly handler: (
      params: ParametersType<Parameters>
    ) => Effect.Effect<
      SuccessOf<Success, A>,
      [Failure] extends [never] ? E : Schema.Schema.Type<Failure> | ToolError,
      R
    >
  }
): Tool<
  Name,
  ParametersType<Parameters>,
  SuccessOf<Success, A>,
  ([Failure] extends [never] ? Exclude<E, ToolError> : Schema.Schema.Type<Failure>) | Exclude<EP, ToolError>,
  R | RP,
  StructuredOf<[Success] extends [never] ? A : Schema.Schema.Encoded<Success>>
> => {
  Internal.checkName(name)
  const parameters: Schema.Schema.AnyNoContext = options.parameters === undefined
    ? Schema.Struct({})
    : Schema.isSchema(options.parameters)
    ? options.parameters
    : Schema.Struct(options.parameters as Schema.Struct.Fields) as unknown as Schema.Schema.AnyNoContext
  let standard: JsonSchema
  let strictSchema: JsonSchema | undefined
  let outputSchema: JsonSchema | undefined
  try {
    standard = JsonSchemas.standard(parameters.ast)
    if (options.strict === true) strictSchema = JsonSchemas.project(standard, "openai-strict")
  } catch (error) {
    throw constructionError(name, error)
  }
  if (options.success !== undefined) {
    try {
      const output = JsonSchemas.anyValue(options.success.ast)
      if (output.type === "object") outputSchema = output
    } catch {
      // an output that has no JSON Schema is still rendered (as JSON text); it just has no outputSchema
    }
  }
  const validate = options.validate !== false
  const decode = validate
    ? Internal.schemaDecoder(parameters, options.strict === true)
    : (args: Record<string, unknown>) => Either.right(args)
  return build({
    name,
    options,
    standard,
    strictSchema,
    outputSchema,
    kernel: {
      decode,
      // without the check the handler takes what it is given: a program's parameters are handed over as they are
      encode: validate ? Internal.parametersEncoder(parameters) : identity,
      handle: options.handler as (params: unknown) => Effect.Effect<unknown, unknown, any>,
      toResult: Internal.outputMapper(options.success, options.toModelOutput as ToModelOutput<unknown> | undefined),
      failureMessage: Internal.failureMessenger(options.failure)
    }
  })
}

/** What a handler succeeds with: the `success` schema's `Type`, else the handler's own `A`. */
type SuccessOf<S, A> = [S] extends [never] ? A : Schema.Schema.Type<S>

const identity = <A>(a: A): A => a

/**
 * A schema from elsewhere as served: an object root with `properties` and `required`. A declared `$schema` is kept
 * (the dialect is part of what the schema means: a draft-07 `items` array is not a 2020-12 one); `$id` is dropped,
 * since a tool's schema is served inline, not as a document others resolve.
 */
const normalizeObjectSchema = (schema: JsonSchema | undefined): JsonSchema => {
  if (schema === undefined) return { type: "object", properties: {}, required: [] }
  // already so (what a server lists): the same object, not a copy
  if (
    schema.$id === undefined && schema.type === "object" && schema.properties !== undefined &&
    schema.required !== undefined
  ) return schema
  const { $id: _id, ...rest } = schema
  const out: Record<string, unknown> = rest
  if (out.type === undefined) out.type = "object"
  if (out.type === "object") {
    if (out.properties === undefined) out.properties = {}
    if (out.required === undefined) out.required = []
  }
  return out
}

/**
 * Makes a tool from a JSON Schema that comes from elsewhere (a remote server, a config file). The handler receives
 * the parsed JSON arguments; they are checked against the schema with Ajv first unless `validate: false`. With
 * `strict: true` the schema is served to OpenAI as given: the author vouches that it already follows strict mode.
 * Throws at construction for a bad name or a schema that is not valid JSON Schema. The schema is compiled on the
 * tool's first call (and shared with every tool of the same schema); one that is valid but cannot be compiled (a
 * `$ref` to nothing) fails each call as a `ToolDefect`. A `pattern` runs on RE2 (linear time); one RE2 cannot compile
 * is not checked. A `null` sent for an optional property whose schema does not admit null is read as absent.
 *
 * The tool takes `Record<string, unknown>` (what the schema promises is known only at run time); its success and
 * failure types are the handler's, as in {@link make} without schemas.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Tool } from "effect-agent-tools"
 *
 * const Echo = Tool.fromJsonSchema("echo", {
 *   description: "Echo a message back",
 *   parameters: { type: "object", properties: { message: { type: "string" } }, required: ["message"] },
 *   handler: (args) => Effect.succeed(String(args.message))
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromJsonSchema = <const Name extends string, A = never, E = never, R = never, RP = never, EP = never>(
  name: Name,
  options: CommonOptions<Record<string, unknown>, RP, EP> & {
    readonly parameters?: JsonSchema | undefined
    /** The output's JSON Schema, when the source declares one (MCP `outputSchema`). */
    readonly outputSchema?: JsonSchema | undefined
    readonly handler: (args: Record<string, unknown>) => Effect.Effect<A, E, R>
  }
): Tool<Name, Record<string, unknown>, A, Exclude<E | EP, ToolError>, R | RP, StructuredOf<A>> => {
  Internal.checkName(name)
  const standard = normalizeObjectSchema(options.parameters)
  let decode: Internal.Kernel["decode"] = (args) => Either.right(args)
  if (options.validate !== false) {
    try {
      decode = Internal.jsonSchemaDecoder(standard)
    } catch (error) {
      throw new Error(
        `tool ${JSON.stringify(name)}: its JSON Schema cannot be compiled: ${reasonOf(error)}`
      )
    }
  }
  return build({
    name,
    options,
    standard,
    strictSchema: options.strict === true ? standard : undefined,
    outputSchema: options.outputSchema,
    kernel: {
      decode,
      encode: identity,
      handle: options.handler as (params: unknown) => Effect.Effect<unknown, unknown, any>,
      toResult: plainOutput,
      failureMessage: plainFailureMessage
    }
  })
}

/** What every JSON-Schema tool maps its output and its failures with: made once, not once a tool. */
const plainOutput = Internal.outputMapper(undefined, undefined)
const plainFailureMessage = Internal.failureMessenger(undefined)

/**
 * What {@link wrap} may change of the tool it wraps: every option of {@link CommonOptions} but `strict` and
 * `validate`, which shape the served schema and the decoder the tool was made with. A value given replaces the
 * original's (derived as {@link make} derives it: a `title` from `annotations.title` when the original gave no
 * `title`); `undefined` keeps it. `permission` may bring services (`RP`) and typed failures (`EP`) of its
 * preview.
 *
 * @since 0.1.0
 * @category models
 */
export type WrapOptions<P, RP = never, EP = never> = Partial<Omit<CommonOptions<P, RP, EP>, "strict" | "validate">>

/**
 * A tool that runs another function but is the original in every other way: the same name, description, title,
 * schemas and their projections, annotations, resource keys, `sequential`, `replay`, timeout, `strict`, `validate`,
 * permission, confinement, output mapping (`success`, `toModelOutput`) and failure messages. Every property of the
 * original is carried over as it is (a test enumerates them, so a property added to tools later is carried over
 * too), unless `options` says otherwise (see {@link WrapOptions}).
 *
 * `handler` gets the decoded parameters and `next`, the original handler: call it (with the same parameters or
 * others of the same type), or not (answer from a cache, refuse). What it gives is mapped to a result as the
 * original's output is, so it gives what the original gives: the type parameters are the original's, with the
 * services the wrapper needs (those of `next` if it calls it) and, with an overriding `permission`, its
 * preview's services and failures.
 *
 * For one tool. To wrap every call of a toolkit or a batch (logging, budgets), see `Middleware`.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { Tool } from "effect-agent-tools"
 *
 * const Search = Tool.make("search", {
 *   description: "Search the docs",
 *   parameters: { query: Schema.String },
 *   handler: ({ query }) => Effect.succeed(`results for ${query}`)
 * })
 *
 * const cache = new Map<string, string>()
 * const CachedSearch = Tool.wrap(Search, (params, next) => {
 *   const hit = cache.get(params.query)
 *   if (hit !== undefined) return Effect.succeed(hit)
 *   return Effect.tap(next(params), (found) => Effect.sync(() => cache.set(params.query, found)))
 * }, { description: "Search the docs (answers repeated queries from a cache)" })
 * // : Tool<"search", { readonly query: string }, string, never, never, undefined>
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const wrap = <T extends Any, R = never, RP = never, EP = never>(
  tool: T,
  handler: (
    params: Parameters<T>,
    next: (params: Parameters<T>) => Effect.Effect<Success<T>, Failure<T> | ToolError, Requirements<T>>
  ) => Effect.Effect<Success<T>, Failure<T> | ToolError, R>,
  options?: WrapOptions<Parameters<T>, RP, EP>
): Tool<Name<T>, Parameters<T>, Success<T>, Failure<T> | Exclude<EP, ToolError>, R | RP, Structured<T>> => {
  // every own property of the original, as it is: what a tool has tomorrow is carried over without a change here
  const self = Object.create(Object.getPrototypeOf(tool), Object.getOwnPropertyDescriptors(tool))
  const original = tool[KernelId]
  const next = original.handle as (params: Parameters<T>) => Effect.Effect<Success<T>, Failure<T> | ToolError, any>
  const kernel: Internal.Kernel = {
    ...original,
    handle: (params) => handler(params as Parameters<T>, next)
  }
  self[KernelId] = kernel
  const overrides = options === undefined ? [] : Object.entries(options).filter(([, value]) => value !== undefined)
  if (overrides.length > 0) applyOptions(self, kernel, { ...tool[OptionsId], ...Object.fromEntries(overrides) })
  return self
}

/**
 * Whether a value is a tool.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Tool } from "effect-agent-tools"
 *
 * const Ping = Tool.make("ping", { description: "Answer pong", handler: () => Effect.succeed("pong") })
 * console.log(Tool.isTool(Ping)) // true
 * ```
 *
 * @since 0.1.0
 * @category guards
 */
export const isTool = (u: unknown): u is Any => Predicate.hasProperty(u, TypeId)

/**
 * Runs one call end to end, through the same pipeline as a call in a batch: parse and check the arguments, ask
 * permission if the tool declares it, run the handler (under the tool's timeout, else `options.timeout`), map the
 * output and classify any failure, and record a recordable `details` when a `Recorder` is installed; the call is a
 * span `Executor.call` when a tracer is installed and counts in the executor's metrics. The result is an `Either`,
 * typed by the tool (`Executor.Outcome`); the Effect never fails and never dies. Interrupting the fiber running it
 * interrupts the handler (the executor is what turns that into a `ToolInterrupted` outcome). For a program's own
 * call with typed parameters, see {@link call}.
 *
 * @example
 * ```ts
 * import { Effect, Either, Schema } from "effect"
 * import { Tool, ToolError, ToolResult } from "effect-agent-tools"
 *
 * const Add = Tool.make("add", {
 *   description: "Add two integers",
 *   parameters: { a: Schema.Int, b: Schema.Int },
 *   handler: ({ a, b }) => Effect.succeed({ sum: a + b })
 * })
 *
 * const program = Effect.gen(function*() {
 *   const ok = yield* Tool.execute(Add, { id: "call_1", arguments: "{\"a\":2,\"b\":3}" })
 *   console.log(Either.map(ok, ToolResult.toText)) // Right("{\"sum\":5}")
 *   const bad = yield* Tool.execute(Add, { id: "call_2", arguments: "{\"a\":2}" })
 *   console.log(Either.mapLeft(bad, ToolError.toModelText))
 *   // Left("Error: invalid arguments: b: missing required property, expected an integer")
 * })
 * ```
 *
 * @since 0.1.0
 * @category execution
 */
export const execute = <T extends Any>(
  tool: T,
  call: { readonly id: string; readonly arguments: unknown },
  options?: {
    readonly timeout?: Duration.DurationInput | undefined
    readonly onProgress?: ((progress: Progress) => Effect.Effect<void>) | undefined
  }
): Effect.Effect<Executor.Outcome<T>, never, Requirements<T>> =>
  Call.execute(tool, tool[KernelId], { id: call.id, name: tool.name, arguments: call.arguments }, {
    timeout: options?.timeout === undefined ? undefined : Duration.decode(options.timeout),
    onProgress: options?.onProgress
  }) as Effect.Effect<Executor.Outcome<T>, never, Requirements<T>>

/**
 * Options of {@link call} and `Toolkit.call`.
 *
 * - `id`: the call's id, what `Tool.currentCall` gives and records carry (default: a new `call_<uuid>`).
 * - `timeout`: the timeout when the tool sets none.
 * - `onProgress`: where the handler's `Tool.progress` reports go.
 *
 * @since 0.1.0
 * @category models
 */
export interface CallOptions {
  readonly id?: string | undefined
  readonly timeout?: Duration.DurationInput | undefined
  readonly onProgress?: ((progress: Progress) => Effect.Effect<void>) | undefined
}

/**
 * Calls a tool from a program, typed: `parameters` are the decoded parameters (`Tool.Parameters`), the Effect
 * succeeds with the handler's value (`Tool.Success`, not encoded, not rendered) and fails with the tool's own
 * typed failure as itself (`Tool.Failure`, not wrapped in a `ToolFailure`) or with the `ToolError` of any other
 * way the call ended: `InvalidArguments`, `PermissionDenied`, `ToolTimeout`, `ToolDefect`, `ToolInterrupted` (the
 * handler interrupted itself).
 *
 * It is a model's call in every other way. The parameters are encoded through the parameters schema and the call
 * runs the pipeline of {@link execute}: the arguments are checked (parameters that came through `any` and break
 * the schema give `InvalidArguments`), permission is asked, the timeout applies, the output is mapped (an output
 * that breaks the `success` schema is a `ToolDefect`), `details` are recorded, the span and the metrics are made.
 * Interrupting the fiber running it interrupts the handler, as in {@link execute}.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { Tool } from "effect-agent-tools"
 *
 * class FileNotFound extends Schema.TaggedError<FileNotFound>()("FileNotFound", { path: Schema.String }) {}
 *
 * const ReadFile = Tool.make("read_file", {
 *   description: "Read a file",
 *   parameters: { path: Schema.String },
 *   failure: FileNotFound,
 *   handler: ({ path }) => path === "a.txt" ? Effect.succeed("hello") : Effect.fail(new FileNotFound({ path }))
 * })
 *
 * // Effect<string, ToolError, never>: the tool's own failure handled by its tag
 * const program = Tool.call(ReadFile, { path: "b.txt" }).pipe(
 *   Effect.catchTag("FileNotFound", ({ path }) => Effect.succeed(`(${path} is missing)`))
 * )
 * ```
 *
 * @since 0.1.0
 * @category execution
 */
export const call = <T extends Any>(
  tool: T,
  parameters: Parameters<T>,
  options?: CallOptions
): Effect.Effect<Success<T>, Failure<T> | ToolError, Requirements<T>> =>
  Call.callTyped(tool, tool[KernelId], parameters, {
    id: options?.id,
    timeout: options?.timeout === undefined ? undefined : Duration.decode(options.timeout),
    onProgress: options?.onProgress
  }) as Effect.Effect<Success<T>, Failure<T> | ToolError, Requirements<T>>

/**
 * Reports progress from inside a handler: the executor turns it into a `Progress` event, the MCP server into
 * `notifications/progress`. A no-op outside a call, so a handler can call it unconditionally.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Tool } from "effect-agent-tools"
 *
 * const Download = Tool.make("download", {
 *   description: "Download ten chunks",
 *   handler: () =>
 *     Effect.forEach([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], (i) =>
 *       Tool.progress({ progress: i, total: 10, message: `chunk ${i}` }), { discard: true })
 * })
 * ```
 *
 * @since 0.1.0
 * @category in a call
 */
export const progress = (progress: Progress): Effect.Effect<void> =>
  Effect.flatMap(FiberRef.get(currentCallRef), (call) => (call === undefined ? Effect.void : call.report(progress)))

/**
 * The call the current fiber is working for, if any: its id, its tool's name and its idempotency key (see
 * {@link CallInfo}).
 *
 * @example
 * ```ts
 * import { Effect, Option } from "effect"
 * import { Tool } from "effect-agent-tools"
 *
 * const WhoAmI = Tool.make("who_am_i", {
 *   description: "Say which call this is",
 *   handler: () =>
 *     Effect.map(Tool.currentCall, Option.match({ onNone: () => "no call", onSome: (call) => call.id }))
 * })
 * ```
 *
 * @since 0.1.0
 * @category in a call
 */
export const currentCall: Effect.Effect<Option.Option<CallInfo>> = Effect.map(
  FiberRef.get(currentCallRef),
  (call) =>
    call === undefined
      ? Option.none()
      : Option.some({ id: call.id, name: call.name, idempotencyKey: call.keys.of(call.index) })
)

/**
 * Asks the user mid-call, and gives their answer: `Accept` with the answer decoded by `schema`, `Decline` (they
 * said no) or `Cancel` (they dismissed it, or nobody could be asked).
 *
 * - `{ message, schema }` asks for a form: `schema` is Struct fields or a Schema of a flat object whose fields are
 *   strings, numbers, integers, booleans, a choice of string literals (titled when the literals carry `title`
 *   annotations) or an array of string literals (several choices). A field's `default` annotation, or the default
 *   of `Schema.optionalWith(..., { default })`, is shown prefilled, and a field left out of an accepted answer takes
 *   it. A schema that cannot be a form (a nested object, a numeric choice) is a defect, like a bad regexp literal.
 * - `{ message, url }` asks the user to open a page (to sign in, to pay); accepting means they went there.
 * - `{ message }` asks for a confirmation.
 * - `key` (optional) names the question for an MCP 2026-07-28 client, which gets it as an entry of `inputRequests`
 *   in an `input_required` result and answers it under that key (a client may answer ahead, on its first call).
 *   Without one, the question goes by a digest of itself, numbered when the same question comes again in a call.
 *   Over MCP 2026 a call of a tool whose `replay` is `"safe"` runs again with the answers so far, each given back
 *   to the question of its key; any other call waits, parked, for its answers (see docs/mcp-server.md).
 *
 * It asks the `Elicitation.Elicitor` the host provided: served over MCP, the calling client (when it declared the
 * elicitation capability for that mode); in `agent-tools call`, the terminal. With none the answer is `Cancel`,
 * never `Decline`. Fails with `ElicitationError` when the answer does not decode or the question could not reach
 * the user. Needs nothing in `R`, like `Tool.progress`.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { Tool } from "effect-agent-tools"
 *
 * const Deploy = Tool.make("deploy", {
 *   description: "Deploy the current build",
 *   handler: () =>
 *     Effect.gen(function*() {
 *       const answer = yield* Tool.elicit({
 *         message: "Where to?",
 *         schema: {
 *           target: Schema.Literal("staging", "production"),
 *           notify: Schema.optionalWith(Schema.Boolean, { default: () => true })
 *         }
 *       })
 *       switch (answer._tag) {
 *         case "Accept":
 *           return `deploying to ${answer.content.target}${answer.content.notify ? ", telling the team" : ""}`
 *         case "Decline":
 *           return "not deployed: the user said no"
 *         case "Cancel":
 *           return "not deployed: nobody answered"
 *       }
 *     })
 * })
 * ```
 *
 * @since 0.1.0
 * @category in a call
 */
export const elicit: {
  <const P extends ParametersInput>(options: {
    readonly message: string
    readonly schema: P
    readonly key?: string | undefined
  }): Effect.Effect<Elicitation.Result<ParametersType<P>>, Elicitation.ElicitationError>
  (options: {
    readonly message: string
    readonly url?: string | undefined
    readonly key?: string | undefined
  }): Effect.Effect<Elicitation.Result<void>, Elicitation.ElicitationError>
} = Elicit.elicit
