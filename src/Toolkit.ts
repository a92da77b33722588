/**
 * A named set of tools: what a model is offered and what the executor looks calls up in.
 *
 * @since 0.1.0
 */
import { dual } from "effect/Function"
import * as Inspectable from "effect/Inspectable"
import * as Option from "effect/Option"
import type { Pipeable } from "effect/Pipeable"
import { pipeArguments } from "effect/Pipeable"
import * as Predicate from "effect/Predicate"
import { checkName } from "./internal/tool.js"
import type * as Tool from "./Tool.js"
import { KernelId } from "./Tool.js"
import * as ToolDefinition from "./ToolDefinition.js"

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
 * @since 0.1.0
 * @category type-level
 */
export type Requirements<K> = K extends Toolkit<infer T> ? Tool.Requirements<T> : never

/**
 * The tools of a toolkit, as a union.
 *
 * @since 0.1.0
 * @category type-level
 */
export type Tools<K> = K extends Toolkit<infer T> ? T : never

/**
 * A tool renamed with a prefix.
 *
 * @since 0.1.0
 * @category type-level
 */
export type Prefixed<T, P extends string> = T extends Tool.Tool<infer N, infer R> ? Tool.Tool<`${P}__${N}`, R> : never

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
