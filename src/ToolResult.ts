/**
 * What a successful call gives back: content parts in MCP's shapes (so nothing is lost at that edge), optional
 * structured output, application-only `details`, and a `terminate` hint.
 *
 * @since 0.1.0
 */
import * as Encoding from "effect/Encoding"
import * as Equal from "effect/Equal"
import { dual } from "effect/Function"
import * as Hash from "effect/Hash"
import * as Inspectable from "effect/Inspectable"
import type { Pipeable } from "effect/Pipeable"
import { pipeArguments } from "effect/Pipeable"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"

/**
 * @since 0.1.0
 * @category type ids
 */
export const TypeId: unique symbol = Symbol.for("effect-agent-tools/ToolResult")

/**
 * @since 0.1.0
 * @category type ids
 */
export type TypeId = typeof TypeId

const Meta = Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }))

/**
 * MCP's content annotations: who a part is for and how much it matters.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ContentAnnotations = Schema.Struct({
  audience: Schema.optional(Schema.Array(Schema.Literal("user", "assistant"))),
  priority: Schema.optional(Schema.Number),
  lastModified: Schema.optional(Schema.String)
})

/**
 * Plain text.
 *
 * @since 0.1.0
 * @category schemas
 */
export const TextContent = Schema.Struct({
  type: Schema.Literal("text"),
  text: Schema.String,
  annotations: Schema.optional(ContentAnnotations),
  _meta: Meta
})

/**
 * An image, base64 encoded.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ImageContent = Schema.Struct({
  type: Schema.Literal("image"),
  data: Schema.String,
  mimeType: Schema.String,
  annotations: Schema.optional(ContentAnnotations),
  _meta: Meta
})

/**
 * Audio, base64 encoded.
 *
 * @since 0.1.0
 * @category schemas
 */
export const AudioContent = Schema.Struct({
  type: Schema.Literal("audio"),
  data: Schema.String,
  mimeType: Schema.String,
  annotations: Schema.optional(ContentAnnotations),
  _meta: Meta
})

/**
 * The contents of a resource embedded in a result: text or a base64 blob.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ResourceContents = Schema.Struct({
  uri: Schema.String,
  mimeType: Schema.optional(Schema.String),
  text: Schema.optional(Schema.String),
  blob: Schema.optional(Schema.String),
  _meta: Meta
})

/**
 * A resource embedded in a result.
 *
 * @since 0.1.0
 * @category schemas
 */
export const EmbeddedResource = Schema.Struct({
  type: Schema.Literal("resource"),
  resource: ResourceContents,
  annotations: Schema.optional(ContentAnnotations),
  _meta: Meta
})

/**
 * A link to a resource the client may read later.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ResourceLink = Schema.Struct({
  type: Schema.Literal("resource_link"),
  uri: Schema.String,
  name: Schema.String,
  title: Schema.optional(Schema.String),
  description: Schema.optional(Schema.String),
  mimeType: Schema.optional(Schema.String),
  size: Schema.optional(Schema.Number),
  annotations: Schema.optional(ContentAnnotations),
  _meta: Meta
})

/**
 * One content part, in MCP's shapes.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Content = Schema.Union(TextContent, ImageContent, AudioContent, EmbeddedResource, ResourceLink)

/**
 * One content part, in MCP's shapes.
 *
 * @since 0.1.0
 * @category models
 */
export type Content = typeof Content.Type

/**
 * What an output budget (`Middleware.outputBudget`) cut from a result's content, for the program:
 *
 * - `content`: the content as the tool gave it, whole;
 * - `cut`: how many characters (UTF-16 code units) of its text the model does not see;
 * - `location`: where the whole text was written (a file's path, or what the host's sink answered), the place the
 *   model's text names; `undefined` when it was not kept (spilling turned off, or it failed).
 *
 * @since 0.1.0
 * @category models
 */
export interface Truncation {
  readonly content: ReadonlyArray<Content>
  readonly cut: number
  readonly location: string | undefined
}

/**
 * A successful call's output. `A` is the type of `structured`: `unknown` for a result nothing is known about, the
 * tool's `Tool.Structured` for the results of a typed tool (see `Executor.Outcome`).
 *
 * - `content`: what the model reads.
 * - `structured`: the output as a value for programs: the handler's value, encoded through the tool's `success`
 *   schema when it has one; MCP's `structuredContent` when the tool declares an object-shaped `success` schema.
 *   `undefined` for a result that has none (a text, content parts).
 * - `details`: for the application only; never reaches a model.
 * - `terminate`: a hint that the loop should stop after this batch (see `Executor.shouldTerminate`).
 * - `truncation`: set when an output budget cut `content` to what the model may read: the whole content is there
 *   for the program (see {@link Truncation}); like `details`, it never reaches a model.
 *
 * A result is a value: two results with the same content, structured output, details, `terminate` and truncation
 * are `Equal.equals` (arrays and plain objects compared by their items, anything else with `Equal.equals`), with
 * the same `Hash.hash`; `toJSON`, `toString` and `util.inspect` show those fields (of a truncation, what was cut and
 * where it went, not the whole content).
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolResult<out A = unknown> extends Pipeable, Equal.Equal, Inspectable.Inspectable {
  readonly [TypeId]: TypeId
  readonly content: ReadonlyArray<Content>
  readonly structured: A
  readonly details?: unknown
  readonly terminate: boolean
  readonly truncation?: Truncation | undefined
}

const Proto = {
  [TypeId]: TypeId,
  pipe() {
    // eslint-disable-next-line prefer-rest-params
    return pipeArguments(this, arguments)
  },
  toJSON(this: ToolResult) {
    return {
      _id: "ToolResult",
      content: this.content,
      ...(this.structured === undefined ? {} : { structured: Inspectable.toJSON(this.structured) }),
      ...(this.details === undefined ? {} : { details: Inspectable.toJSON(this.details) }),
      terminate: this.terminate,
      ...(this.truncation === undefined
        ? {}
        : { truncation: { cut: this.truncation.cut, location: this.truncation.location } })
    }
  },
  toString(this: ToolResult) {
    return Inspectable.format(this.toJSON())
  },
  [Inspectable.NodeInspectSymbol](this: ToolResult) {
    return this.toJSON()
  },
  [Equal.symbol](this: ToolResult, that: unknown): boolean {
    return isToolResult(that)
      && this.terminate === that.terminate
      && equalValues(this.content, that.content)
      && equalValues(this.structured, that.structured)
      && equalValues(this.details, that.details)
      && equalValues(this.truncation, that.truncation)
  },
  [Hash.symbol](this: ToolResult): number {
    // a truncation is left out: its whole content can be megabytes, and equal results still hash the same
    const budget = { nodes: HASH_BUDGET }
    return Hash.cached(
      this,
      Hash.combine(hashValue(this.details, budget))(
        Hash.combine(hashValue(this.structured, budget))(
          Hash.combine(hashValue(this.content, budget))(Hash.hash(this.terminate))
        )
      )
    )
  }
}

// Structural equality of what a result holds: arrays and plain objects by their items, anything else (a string, a
// `Data` value, a `Date`) by `Equal.equals`. Results can come from a remote server, so neither walk may be made to
// overflow the stack or to take exponential time: equality walks with a stack of its own and visits each pair of
// objects once (a cycle compares equal to the same cycle), and the hash stops descending after `HASH_BUDGET` nodes
// (equal values are walked in the same order, so they stop at the same place and hash the same).

const isPlainObject = (u: unknown): u is Record<string, unknown> => {
  if (typeof u !== "object" || u === null || Array.isArray(u)) return false
  const proto = Object.getPrototypeOf(u)
  return proto === Object.prototype || proto === null
}

const equalValues = (a: unknown, b: unknown): boolean => {
  const pending: Array<unknown> = [a, b]
  let visited: Map<object, Set<object>> | undefined
  const firstVisit = (x: object, y: object): boolean => {
    visited ??= new Map()
    let seen = visited.get(x)
    if (seen === undefined) visited.set(x, seen = new Set())
    if (seen.has(y)) return false
    seen.add(y)
    return true
  }
  while (pending.length > 0) {
    const y = pending.pop()
    const x = pending.pop()
    if (x === y) continue
    if (Array.isArray(x) || Array.isArray(y)) {
      if (!Array.isArray(x) || !Array.isArray(y) || x.length !== y.length) return false
      if (!firstVisit(x, y)) continue
      for (let i = 0; i < x.length; i++) pending.push(x[i], y[i])
      continue
    }
    if (isPlainObject(x) && isPlainObject(y)) {
      const keys = Object.keys(x)
      if (keys.length !== Object.keys(y).length) return false
      if (!firstVisit(x, y)) continue
      for (const key of keys) {
        if (!Object.hasOwn(y, key)) return false
        pending.push(x[key], y[key])
      }
      continue
    }
    if (!Equal.equals(x, y)) return false
  }
  return true
}

/** How many arrays and plain objects the hash of one result descends into, at most. */
const HASH_BUDGET = 4096

const arrayHash = Hash.string("ToolResult/array")
const objectHash = Hash.string("ToolResult/object")

const hashValue = (u: unknown, budget: { nodes: number }): number => {
  if (Array.isArray(u)) {
    if (budget.nodes-- <= 0) return arrayHash
    let h = Hash.combine(Hash.number(u.length))(arrayHash)
    for (const item of u) h = Hash.combine(hashValue(item, budget))(h)
    return Hash.optimize(h)
  }
  if (isPlainObject(u)) {
    if (budget.nodes-- <= 0) return objectHash
    let h = objectHash
    for (const key of Object.keys(u).sort()) {
      h = Hash.combine(hashValue(u[key], budget))(Hash.combine(Hash.string(key))(h))
    }
    return Hash.optimize(h)
  }
  return Hash.hash(u)
}

/**
 * Builds a result from its fields.
 *
 * @example
 * ```ts
 * import { ToolResult } from "effect-agent-tools"
 *
 * const result = ToolResult.make({ content: [{ type: "text", text: "done" }] })
 * console.log(ToolResult.toText(result)) // done
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <A = undefined>(fields: {
  readonly content: ReadonlyArray<Content>
  readonly structured?: A
  readonly details?: unknown
  readonly terminate?: boolean | undefined
  readonly truncation?: Truncation | undefined
}): ToolResult<A> => {
  const self = Object.create(Proto)
  self.content = fields.content
  if (fields.structured !== undefined) self.structured = fields.structured
  if (fields.details !== undefined) self.details = fields.details
  self.terminate = fields.terminate ?? false
  if (fields.truncation !== undefined) self.truncation = fields.truncation
  return self
}

/**
 * Whether a value is a `ToolResult`.
 *
 * @example
 * ```ts
 * import { ToolResult } from "effect-agent-tools"
 *
 * console.log(ToolResult.isToolResult(ToolResult.text("hi"))) // true
 * console.log(ToolResult.isToolResult({ content: [] })) // false
 * ```
 *
 * @since 0.1.0
 * @category guards
 */
export const isToolResult = (u: unknown): u is ToolResult => Predicate.hasProperty(u, TypeId)

/**
 * A result of one text part.
 *
 * @example
 * ```ts
 * import { ToolResult } from "effect-agent-tools"
 *
 * console.log(ToolResult.text("hello").content) // [{ type: "text", text: "hello" }]
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const text = (text: string): ToolResult<undefined> => make({ content: [{ type: "text", text }] })

/**
 * A result carrying a JSON value: its JSON text for the model and the value itself as `structured`.
 * Throws when the value cannot become JSON (a cycle, a `BigInt`); a handler's output goes through the same
 * conversion and gets a `ToolDefect` instead.
 *
 * @example
 * ```ts
 * import { ToolResult } from "effect-agent-tools"
 *
 * const result = ToolResult.json({ sum: 5 })
 * console.log(ToolResult.toText(result), result.structured) // {"sum":5} { sum: 5 }
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const json = <A>(value: A): ToolResult<A> =>
  make({ content: [{ type: "text", text: JSON.stringify(value) ?? "null" }], structured: value })

/**
 * A result made of the given content parts.
 *
 * @example
 * ```ts
 * import { ToolResult } from "effect-agent-tools"
 *
 * const result = ToolResult.parts([
 *   { type: "text", text: "a chart:" },
 *   { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" }
 * ])
 * console.log(result.content.length) // 2
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const parts = (content: ReadonlyArray<Content>): ToolResult<undefined> => make({ content })

/**
 * A result of one image part, from base64 text or raw bytes.
 *
 * @example
 * ```ts
 * import { ToolResult } from "effect-agent-tools"
 *
 * const result = ToolResult.image(new Uint8Array([137, 80, 78, 71]), "image/png")
 * console.log(result.content[0]) // { type: "image", data: "iVBORw==", mimeType: "image/png" }
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const image = (data: string | Uint8Array, mimeType: string): ToolResult<undefined> =>
  make({
    content: [{ type: "image", data: typeof data === "string" ? data : Encoding.encodeBase64(data), mimeType }]
  })

/**
 * The same result with application-only `details` attached. Details never reach a model; a details value that
 * is recordable is written by the recorder when the call ends.
 *
 * @example
 * ```ts
 * import { ToolResult } from "effect-agent-tools"
 *
 * const result = ToolResult.text("started").pipe((r) => ToolResult.withDetails(r, { pid: 42 }))
 * console.log(result.details) // { pid: 42 }
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const withDetails: {
  (details: unknown): <A>(self: ToolResult<A>) => ToolResult<A>
  <A>(self: ToolResult<A>, details: unknown): ToolResult<A>
} = dual(2, <A>(self: ToolResult<A>, details: unknown): ToolResult<A> =>
  make({
    content: self.content,
    structured: self.structured,
    details,
    terminate: self.terminate,
    truncation: self.truncation
  }))

/**
 * The same result with the `terminate` hint set: the tool answered on the model's behalf and the loop may stop
 * after this batch. The batch terminates only when every call's result sets it.
 *
 * @example
 * ```ts
 * import { ToolResult } from "effect-agent-tools"
 *
 * console.log(ToolResult.withTerminate(ToolResult.text("done")).terminate) // true
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const withTerminate = <A>(self: ToolResult<A>): ToolResult<A> =>
  make({
    content: self.content,
    structured: self.structured,
    details: self.details,
    terminate: true,
    truncation: self.truncation
  })

/**
 * The result as one string for models that only take text: the text parts joined by `\n`.
 *
 * @example
 * ```ts
 * import { ToolResult } from "effect-agent-tools"
 *
 * const result = ToolResult.parts([{ type: "text", text: "a" }, { type: "text", text: "b" }])
 * console.log(ToolResult.toText(result)) // "a\nb"
 * ```
 *
 * @since 0.1.0
 * @category conversions
 */
export const toText = (self: ToolResult): string => {
  let out: string | undefined
  for (const part of self.content) {
    if (part.type === "text") out = out === undefined ? part.text : out + "\n" + part.text
  }
  return out ?? ""
}

const contentTypes: ReadonlySet<string> = new Set(["text", "image", "audio", "resource", "resource_link"])

/**
 * Whether a value looks like a content part (used to recognise handler output that is an array of parts).
 *
 * @example
 * ```ts
 * import { ToolResult } from "effect-agent-tools"
 *
 * console.log(ToolResult.isContent({ type: "text", text: "x" })) // true
 * console.log(ToolResult.isContent({ type: "text" })) // false
 * ```
 *
 * @since 0.1.0
 * @category guards
 */
export const isContent = (u: unknown): u is Content => {
  if (!Predicate.isRecord(u) || typeof u.type !== "string" || !contentTypes.has(u.type)) return false
  switch (u.type) {
    case "text":
      return typeof u.text === "string"
    case "image":
    case "audio":
      return typeof u.data === "string" && typeof u.mimeType === "string"
    case "resource":
      return Predicate.isRecord(u.resource) && typeof u.resource.uri === "string"
    default:
      return typeof u.uri === "string" && typeof u.name === "string"
  }
}
