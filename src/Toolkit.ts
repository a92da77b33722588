/**
 * A named set of tools: what a model is offered and what the executor looks calls up in.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { dual } from "effect/Function"
import * as Inspectable from "effect/Inspectable"
import * as Option from "effect/Option"
import type { Pipeable } from "effect/Pipeable"
import { pipeArguments } from "effect/Pipeable"
import * as Predicate from "effect/Predicate"
import * as Call from "./internal/call.js"
import { checkName } from "./internal/tool.js"
import { requireNames } from "./internal/toolkit.js"
import * as Tool from "./Tool.js"
import { KernelId } from "./Tool.js"
import * as ToolDefinition from "./ToolDefinition.js"
import type { ToolError } from "./ToolError.js"
import { ToolNotFound } from "./ToolError.js"

/**
 * @since 0.1.0
 * @category type ids
 */
export const TypeId: unique symbol = Symbol.for("effect-agent-tools/Toolkit")

/**
 * @since 0.1.0
 * @category type ids
 */
export type TypeId = typeof TypeId

/**
 * A set of tools with distinct names, in the order they were given. `toJSON`, `toString` and `util.inspect` show
 * the tools' names.
 *
 * @since 0.1.0
 * @category models
 */
export interface Toolkit<out Tools extends Tool.Any = Tool.Any> extends Pipeable, Inspectable.Inspectable {
  readonly [TypeId]: TypeId
  readonly tools: ReadonlyArray<Tools>
  /** @internal */
  readonly byName: ReadonlyMap<string, Tools>
}

/**
 * The services the handlers of a toolkit need.
 *
 * @example
 * ```ts
 * import { Context, Effect } from "effect"
 * import { Tool, Toolkit } from "effect-agent-tools"
 *
 * class Db extends Context.Tag("Db")<Db, { readonly count: Effect.Effect<number> }>() {}
 *
 * const Count = Tool.make("count", { description: "Count rows", handler: () => Effect.flatMap(Db, (db) => db.count) })
 * const Ping = Tool.make("ping", { description: "Answer pong", handler: () => Effect.succeed("pong") })
 * const kit = Toolkit.make(Count, Ping)
 * type KitRequirements = Toolkit.Requirements<typeof kit> // Db
 * ```
 *
 * @since 0.1.0
 * @category type-level
 */
export type Requirements<K> = K extends Toolkit<infer T> ? Tool.Requirements<T> : never

/**
 * The tools of a toolkit, as a union.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Tool, Toolkit } from "effect-agent-tools"
 *
 * const Ping = Tool.make("ping", { description: "Answer pong", handler: () => Effect.succeed("pong") })
 * const Now = Tool.make("now", { description: "The time", handler: () => Effect.succeed(Date.now()) })
 * const kit = Toolkit.make(Ping, Now)
 * type KitTools = Toolkit.Tools<typeof kit> // typeof Ping | typeof Now
 * type KitNames = Tool.Name<Toolkit.Tools<typeof kit>> // "ping" | "now"
 * ```
 *
 * @since 0.1.0
 * @category type-level
 */
export type Tools<K> = K extends Toolkit<infer T> ? T : never

/**
 * The tools of `Tools` a call naming `N` can reach: the tool by that name, or a tool whose name type admits it
 * (a remote tool's `string`).
 *
 * @since 0.1.0
 * @category type-level
 */
export type ToolNamed<Tools extends Tool.Any, N extends string> = Tools extends unknown
  ? N extends Tool.Name<Tools> ? Tools : never
  : never

/**
 * A tool renamed with a prefix: the same types under the name `p__name`.
 *
 * @since 0.1.0
 * @category type-level
 */
export type Prefixed<T, P extends string> = T extends
  Tool.Tool<infer N, infer Parameters, infer Success, infer Failure, infer R, infer Structured>
  ? Tool.Tool<`${P}__${N}`, Parameters, Success, Failure, R, Structured>
  : never

const Proto = {
  [TypeId]: TypeId,
  pipe() {
    // eslint-disable-next-line prefer-rest-params
    return pipeArguments(this, arguments)
  },
  toJSON(this: Toolkit) {
    return { _id: "Toolkit", tools: this.tools.map((t) => t.name) }
  },
  toString(this: Toolkit) {
    return Inspectable.format(this.toJSON())
  },
  [Inspectable.NodeInspectSymbol](this: Toolkit) {
    return this.toJSON()
  }
}

const fromTools = <Tools extends Tool.Any>(tools: ReadonlyArray<Tools>): Toolkit<Tools> => {
  const byName = new Map<string, Tools>()
  for (const tool of tools) {
    checkName(tool.name)
    if (byName.has(tool.name)) throw new Error(`duplicate tool name ${JSON.stringify(tool.name)} in a toolkit`)
    byName.set(tool.name, tool)
  }
  const self = Object.create(Proto)
  self.tools = tools
  self.byName = byName
  return self
}

/**
 * Whether a value is a toolkit.
 *
 * @example
 * ```ts
 * import { Toolkit } from "effect-agent-tools"
 *
 * console.log(Toolkit.isToolkit(Toolkit.make())) // true
 * ```
 *
 * @since 0.1.0
 * @category guards
 */
export const isToolkit = (u: unknown): u is Toolkit => Predicate.hasProperty(u, TypeId)

/**
 * A toolkit of the given tools. Throws for a malformed or duplicate name (a programmer error).
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { Tool, Toolkit } from "effect-agent-tools"
 *
 * const Upper = Tool.make("upper", {
 *   description: "Uppercase a string",
 *   parameters: { text: Schema.String },
 *   handler: ({ text }) => Effect.succeed(text.toUpperCase())
 * })
 * const Lower = Tool.make("lower", {
 *   description: "Lowercase a string",
 *   parameters: { text: Schema.String },
 *   handler: ({ text }) => Effect.succeed(text.toLowerCase())
 * })
 * const kit = Toolkit.make(Upper, Lower)
 * console.log(Toolkit.names(kit)) // ["upper", "lower"]
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <const Tools extends ReadonlyArray<Tool.Any>>(...tools: Tools): Toolkit<Tools[number]> =>
  fromTools(tools)

/**
 * One toolkit of the tools of several, in order. Throws when two tools share a name (prefix one of the kits).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Tool, Toolkit } from "effect-agent-tools"
 *
 * const a = Toolkit.make(Tool.make("a", { description: "A", handler: () => Effect.void }))
 * const b = Toolkit.make(Tool.make("b", { description: "B", handler: () => Effect.void }))
 * console.log(Toolkit.names(Toolkit.merge(a, b))) // ["a", "b"]
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const merge = <const Kits extends ReadonlyArray<Toolkit<Tool.Any>>>(
  ...kits: Kits
): Toolkit<Tools<Kits[number]>> =>
  fromTools(kits.flatMap((kit) => kit.tools) as unknown as ReadonlyArray<Tools<Kits[number]>>)

const rename = <T extends Tool.Any>(tool: T, name: string): T => {
  const renamed = Object.create(Object.getPrototypeOf(tool), Object.getOwnPropertyDescriptors(tool))
  renamed.name = name
  renamed.projections = new Map(tool.projections)
  renamed[KernelId] = { ...tool[KernelId], name }
  return renamed
}

/**
 * The same tools named `p__name`, so two servers' `search` tools can sit in one toolkit. Throws when a prefixed
 * name breaks the name rule (longer than 64 characters, or a prefix with other characters).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Tool, Toolkit } from "effect-agent-tools"
 *
 * const kit = Toolkit.make(Tool.make("search", { description: "Search", handler: () => Effect.void }))
 * console.log(Toolkit.names(Toolkit.prefix(kit, "docs"))) // ["docs__search"]
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const prefix: {
  <P extends string>(prefix: P): <T extends Tool.Any>(self: Toolkit<T>) => Toolkit<Prefixed<T, P>>
  <T extends Tool.Any, P extends string>(self: Toolkit<T>, prefix: P): Toolkit<Prefixed<T, P>>
} = dual(
  2,
  <T extends Tool.Any, P extends string>(self: Toolkit<T>, prefix: P): Toolkit<Prefixed<T, P>> =>
    fromTools(self.tools.map((tool) => rename(tool, `${prefix}__${tool.name}`))) as unknown as Toolkit<
      Prefixed<T, P>
    >
)

/**
 * The tool of that name, if the toolkit has one.
 *
 * @example
 * ```ts
 * import { Effect, Option } from "effect"
 * import { Tool, Toolkit } from "effect-agent-tools"
 *
 * const kit = Toolkit.make(Tool.make("ping", { description: "Ping", handler: () => Effect.succeed("pong") }))
 * console.log(Option.isSome(Toolkit.lookup(kit, "ping"))) // true
 * ```
 *
 * @since 0.1.0
 * @category getters
 */
export const lookup: {
  (name: string): <T extends Tool.Any>(self: Toolkit<T>) => Option.Option<T>
  <T extends Tool.Any>(self: Toolkit<T>, name: string): Option.Option<T>
} = dual(
  2,
  <T extends Tool.Any>(self: Toolkit<T>, name: string): Option.Option<T> => Option.fromNullable(self.byName.get(name))
)

/**
 * The tools' names, in order.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Tool, Toolkit } from "effect-agent-tools"
 *
 * const kit = Toolkit.make(Tool.make("ping", { description: "Ping", handler: () => Effect.succeed("pong") }))
 * console.log(Toolkit.names(kit)) // ["ping"]
 * ```
 *
 * @since 0.1.0
 * @category getters
 */
export const names = (self: Toolkit<Tool.Any>): ReadonlyArray<string> => self.tools.map((tool) => tool.name)

/**
 * Every tool's definition in one format, in order: what goes into a provider request's `tools`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Tool, Toolkit } from "effect-agent-tools"
 *
 * const kit = Toolkit.make(Tool.make("ping", { description: "Ping", handler: () => Effect.succeed("pong") }))
 * const tools = Toolkit.definitions(kit, "anthropic") // [{ name: "ping", description: "Ping", input_schema }]
 * ```
 *
 * @since 0.1.0
 * @category definitions
 */
export const definitions: {
  <F extends ToolDefinition.Format>(
    format: F
  ): (self: Toolkit<Tool.Any>) => ReadonlyArray<ToolDefinition.Definitions[F]>
  <F extends ToolDefinition.Format>(
    self: Toolkit<Tool.Any>,
    format: F
  ): ReadonlyArray<ToolDefinition.Definitions[F]>
} = dual(
  2,
  <F extends ToolDefinition.Format>(
    self: Toolkit<Tool.Any>,
    format: F
  ): ReadonlyArray<ToolDefinition.Definitions[F]> => self.tools.map((tool) => ToolDefinition.make(tool, format))
)

/**
 * Calls a toolkit's tool from a program, typed: `name` must be one of the toolkit's names and `parameters` that
 * tool's decoded parameters; it gives the tool's `Tool.Success` and fails with its own `Tool.Failure` as itself or
 * a `ToolError`, exactly as `Tool.call` on that tool (the same checks, permission, timeout, records, span and
 * metrics as a model's call). A name that is not in the toolkit at run time (it came through `any`) fails with
 * `ToolNotFound`, as a model's would.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { Tool, Toolkit } from "effect-agent-tools"
 *
 * class FileNotFound extends Schema.TaggedError<FileNotFound>()("FileNotFound", { path: Schema.String }) {}
 *
 * const ReadFile = Tool.make("read_file", {
 *   description: "Read a file",
 *   parameters: { path: Schema.String },
 *   failure: FileNotFound,
 *   handler: ({ path }) => path === "a.txt" ? Effect.succeed("hello") : Effect.fail(new FileNotFound({ path }))
 * })
 * const kit = Toolkit.make(ReadFile)
 *
 * // Effect<string, ToolError, never>
 * const program = Toolkit.call(kit, "read_file", { path: "b.txt" }).pipe(
 *   Effect.catchTag("FileNotFound", () => Effect.succeed(""))
 * )
 * ```
 *
 * @since 0.1.0
 * @category calling
 */
export const call = <Tools extends Tool.Any, const N extends Tool.Name<Tools>>(
  self: Toolkit<Tools>,
  name: N,
  parameters: Tool.Parameters<ToolNamed<Tools, N>>,
  options?: Tool.CallOptions
): Effect.Effect<
  Tool.Success<ToolNamed<Tools, N>>,
  Tool.Failure<ToolNamed<Tools, N>> | ToolError,
  Tool.Requirements<ToolNamed<Tools, N>>
> => {
  const tool = self.byName.get(name)
  if (tool === undefined) {
    return Effect.suspend(() => {
      const error = new ToolNotFound({ tool: name, available: names(self) })
      Call.finished(name, Either.left(error), undefined)
      return Effect.fail(error)
    })
  }
  return Tool.call(tool, parameters as Tool.Parameters<typeof tool>, options) as Effect.Effect<
    Tool.Success<ToolNamed<Tools, N>>,
    Tool.Failure<ToolNamed<Tools, N>> | ToolError,
    Tool.Requirements<ToolNamed<Tools, N>>
  >
}

/**
 * The toolkit of only the named tools, in the toolkit's order: "these tools for this step". A name that is not
 * the toolkit's is a type error (and a throw, for a name that came through `any`).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Tool, Toolkit } from "effect-agent-tools"
 *
 * const kit = Toolkit.make(
 *   Tool.make("read", { description: "Read", handler: () => Effect.void }),
 *   Tool.make("write", { description: "Write", handler: () => Effect.void }),
 *   Tool.make("search", { description: "Search", handler: () => Effect.void })
 * )
 * console.log(Toolkit.names(Toolkit.pick(kit, "search", "read"))) // ["read", "search"]
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const pick = <Tools extends Tool.Any, const N extends ReadonlyArray<Tool.Name<Tools>>>(
  self: Toolkit<Tools>,
  ...names: N
): Toolkit<ToolNamed<Tools, N[number]>> => {
  const wanted = requireNames(self, names)
  return fromTools(self.tools.filter((tool) => wanted.has(tool.name))) as Toolkit<ToolNamed<Tools, N[number]>>
}

/**
 * The toolkit without the named tools, in the toolkit's order. A name that is not the toolkit's is a type error
 * (and a throw, for a name that came through `any`).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Tool, Toolkit } from "effect-agent-tools"
 *
 * const kit = Toolkit.make(
 *   Tool.make("read", { description: "Read", handler: () => Effect.void }),
 *   Tool.make("write", { description: "Write", handler: () => Effect.void }),
 *   Tool.make("search", { description: "Search", handler: () => Effect.void })
 * )
 * console.log(Toolkit.names(Toolkit.omit(kit, "write"))) // ["read", "search"]
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const omit = <Tools extends Tool.Any, const N extends ReadonlyArray<Tool.Name<Tools>>>(
  self: Toolkit<Tools>,
  ...names: N
): Toolkit<Exclude<Tools, { readonly name: N[number] }>> => {
  const unwanted = requireNames(self, names)
  return fromTools(self.tools.filter((tool) => !unwanted.has(tool.name))) as Toolkit<
    Exclude<Tools, { readonly name: N[number] }>
  >
}
