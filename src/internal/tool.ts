/**
 * The machinery behind a tool, built once at construction: its decoder or validator, its output mapping, its
 * failure messages, and the classification of how a handler ended. A call is checked here (`prepare`: synchronous
 * parse, guard and decode; `resourcesOf`) and then run by `call.ts`, the one pipeline around a handler; the
 * schedulers put their waiting in between.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import type * as AST from "effect/SchemaAST"
import type * as Permission from "../Permission.js"
import type { ToolError } from "../ToolError.js"
import {
  ArgumentProblem,
  InvalidArguments,
  isToolError,
  ToolDefect,
  ToolError as ToolErrorUnion,
  ToolFailure,
  ToolInterrupted,
  TypeId
} from "../ToolError.js"
import * as ToolResult from "../ToolResult.js"
import * as Ajv from "./ajv.js"
import type { Problem } from "./argumentProblems.js"
import { flatDecoder, fromIssue } from "./argumentProblems.js"
import * as Arguments from "./arguments.js"
import type { Annotations } from "./context.js"
import type { JsonSchema } from "./jsonSchema.js"
import * as NullAsAbsent from "./nullAsAbsent.js"
import { reasonOf } from "./reason.js"

/** Everything a call needs from its tool, with the types erased (the public `Tool` carries them). */
export interface Kernel {
  readonly name: string
  readonly annotations: Annotations
  readonly strict: boolean
  readonly timeout: Duration.Duration | undefined
  /**
   * Arguments object -> decoded parameters, or the problems. Never throws. `owned`: the object was parsed from the
   * model's text and nobody else holds it, so a decoder that would copy it unchanged may hand it over instead.
   */
  readonly decode: (args: Record<string, unknown>, owned?: boolean) => Either.Either<unknown, Array<Problem>>
  /**
   * A program's parameters (the decoded side) -> arguments as a model would write them, for `Tool.call`. Never
   * throws: parameters the schema cannot encode are handed over as they are, for `decode` to refuse.
   */
  readonly encode: (params: unknown) => unknown
  readonly handle: (params: unknown) => Effect.Effect<unknown, unknown, any>
  /** Handler output -> result (or a defect, naming the tool, when it cannot be rendered). */
  readonly toResult: (output: unknown, tool: string) => Either.Either<ToolResult.ToolResult, ToolError>
  readonly failureMessage: (error: unknown) => string
  /** Resource keys of a call; empty for none. */
  readonly resources: (params: unknown) => ReadonlyArray<string>
  readonly permission: Permission.Spec<unknown, any> | undefined
  /** What a call says it runs confined by (`"workspace:/abs/root"`), for its permission request; a claim. */
  readonly confined: ((params: unknown) => string | undefined) | undefined
}

// ---------------------------------------------------------------------------------------------------------------
// the name rule
// ---------------------------------------------------------------------------------------------------------------

/** A tool name: 1 to 64 letters, digits, `_` or `-` (what every provider accepts). */
export const NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/

/** The rule in words, for messages. */
export const NAME_RULE = "a tool name is 1 to 64 letters, digits, \"_\" or \"-\""

/** Throws for a name that breaks the rule: a programmer error, found where the tool or toolkit is made. */
export const checkName = (name: string): void => {
  if (!NAME_PATTERN.test(name)) throw new Error(`invalid tool name ${JSON.stringify(name)}: ${NAME_RULE}`)
}

// ---------------------------------------------------------------------------------------------------------------
// errors as values
// ---------------------------------------------------------------------------------------------------------------

/** Where `Data.Error` keeps the arguments it was made with (its `toJSON` starts from them); a registered symbol. */
const plainArgs = Symbol.for("effect/Data/Error/plainArgs")

/** A `Schema.TaggedError` class of ours: its constructor and its tag. */
type ErrorClass = (new(fields: any, options?: any) => Error) & { readonly _tag: string }

/**
 * Makes one of our error values as `new Class(fields, true)` does, for a small part of the cost: the same
 * prototype, the same own properties in the same order (the fields, `_tag`, the type id; a `message` or `cause`
 * field not enumerable, as `Error` makes it), so the same `message`, `toJSON`, equality and schema.
 *
 * What it leaves out is what the constructor spends its time on: validating fields that are ours and known to
 * match, and capturing a stack trace, which costs more than a no-op call even when empty (4 of the constructor's
 * 5 µs on this project's machine) and would point into the executor, never at what went wrong: that is in the
 * fields, or the `cause`. Such an error's `stack` is `<name>: <message>`, worded when it is read.
 * test/ToolError.make.test.ts holds both ways of making each error to the same value.
 */
export const makeError = <C extends ErrorClass>(Class: C, fields: ConstructorParameters<C>[0]): InstanceType<C> => {
  const error = makeErrorValue(Class, fields)
  ;(error as unknown as Record<symbol, unknown>)[TypeId] = TypeId
  return error
}

/**
 * {@link makeError} for an error class of ours that is not a `ToolError` (no `ToolError` type id): an
 * `McpClientError`, say.
 */
export const makeErrorValue = <C extends ErrorClass>(
  Class: C,
  fields: ConstructorParameters<C>[0]
): InstanceType<C> => {
  const error = Object.create(Class.prototype)
  const own = fields as Record<string, unknown>
  // what `Error` itself defines, first and not enumerable: a `message` field, a `cause` (as `Data.Error` passes it)
  const message = own.message !== undefined
  const cause = Boolean(own.cause)
  if (message) hide(error, "message", String(own.message))
  if (cause) hide(error, "cause", own.cause)
  Object.assign(error, fields)
  error._tag = Class._tag
  // `Data.Error`'s `toJSON` starts from the arguments it was made with, then the enumerable fields: only hidden
  // fields need them (defining a symbol property costs more than the rest of the error)
  if (message || cause) Object.defineProperty(error, plainArgs, { value: { ...fields, _tag: Class._tag } })
  return error
}

const hide = (target: object, key: string, value: unknown): void => {
  Object.defineProperty(target, key, { value, writable: true, enumerable: false, configurable: true })
}

/** An `ArgumentProblem` as its constructor makes it (own `path` and `message`), without the constructor's work. */
export const makeProblem = (problem: Problem): ArgumentProblem => {
  const made = Object.create(ArgumentProblem.prototype)
  made.path = problem.path
  made.message = problem.message
  return made
}

// An error made by `makeError` has no stack of its own: it reads as an error made with an empty stack trace would.
for (const Class of ToolErrorUnion.members) {
  Object.defineProperty(Class.prototype, "stack", {
    get(this: Error) {
      return `${this.name}: ${this.message}`
    },
    configurable: true
  })
}

// ---------------------------------------------------------------------------------------------------------------
// decoding
// ---------------------------------------------------------------------------------------------------------------

const tooDeep: Array<Problem> = [{ path: "", message: "arguments are nested too deeply to check" }]

const parseOptions: AST.ParseOptions = { errors: "all", onExcessProperty: "error" }

/** A decoder for a Schema-backed tool: all problems listed, unknown properties refused (as the schema says). */
export const schemaDecoder = (
  schema: Schema.Schema<any, any, never>,
  strict: boolean
): (args: Record<string, unknown>, owned?: boolean) => Either.Either<unknown, Array<Problem>> => {
  const decode = ParseResult.decodeUnknownEither(schema, parseOptions)
  const flat = flatDecoder(schema.ast, parseOptions)
  // the schema's own AST, not `AST.encodedAST`: that builds new nodes on every `Suspend`, which would defeat the
  // memo that stops the walk on a recursive schema (`nullToAbsent` follows transformations to their encoded side)
  const normalize = strict ? nullToAbsent(schema.ast) : undefined
  return (args, owned = false) => {
    try {
      const input = normalize === undefined ? args : normalize(args)
      if (flat !== undefined && typeof input === "object" && input !== null) {
        // a copy made by `normalize` is ours as well
        const verdict = flat(input as Record<string, unknown>, owned || input !== args)
        if (verdict !== undefined) return Array.isArray(verdict) ? Either.left(verdict) : Either.right(verdict)
      }
      const result = decode(input)
      // a Right is returned as is (no allocation on the hot path); only a failure is formatted
      return Either.isRight(result)
        ? result as unknown as Either.Either<unknown, Array<Problem>>
        : Either.left(fromIssue(result.left))
    } catch (error) {
      // A decoder recursing through a value deeper than the stack: the guard in `Arguments.parse` makes this rare.
      if (error instanceof RangeError) return Either.left(tooDeep)
      throw error
    }
  }
}

/**
 * An encoder for a Schema-backed tool's parameters, compiled on first use (most tools are only ever called by a
 * model). What does not encode is returned as it is: the decoder then says what is wrong with it, in the words a
 * model's call would get. Properties the schema does not know are kept, not dropped, so the decoder refuses them
 * as it refuses a model's.
 */
export const parametersEncoder = (schema: Schema.Schema<any, any, never>): (params: unknown) => unknown => {
  let encode: ((u: unknown) => Either.Either<unknown, ParseResult.ParseIssue>) | undefined
  return (params) => {
    encode ??= ParseResult.encodeUnknownEither(schema, { onExcessProperty: "preserve" })
    try {
      const encoded = encode(params)
      return Either.isRight(encoded) ? encoded.right : params
    } catch {
      // a transformation that throws, a value too deep: the decoder reports it as it would for a model
      return params
    }
  }
}

/**
 * Whether JSON-Schema tools made now check their schema on their first call rather than at construction (see
 * {@link withSchemaCheckOnFirstCall}).
 */
let schemaCheckOnFirstCall = false

/**
 * Makes JSON-Schema tools (`Tool.fromJsonSchema`) inside `make` check their schema against its meta-schema on their
 * first call, not at construction: a remote server's listing, which should cost no Ajv work (a schema that is not
 * valid then fails each call of its tool, as one that cannot be compiled does). `Tool.fromJsonSchema` called by a
 * program still refuses a broken schema at once.
 */
export const withSchemaCheckOnFirstCall = <A>(make: () => A): A => {
  const before = schemaCheckOnFirstCall
  schemaCheckOnFirstCall = true
  try {
    return make()
  } finally {
    schemaCheckOnFirstCall = before
  }
}

/** A validator for a JSON-Schema tool: Ajv, the handler then gets the arguments object (`null` read as absent). */
export const jsonSchemaDecoder = (
  schema: JsonSchema
): (args: Record<string, unknown>) => Either.Either<unknown, Array<Problem>> => {
  const decode = Ajv.decoder(schema, { checkOnFirstUse: schemaCheckOnFirstCall })
  return (args) => {
    try {
      return decode(args)
    } catch (error) {
      if (error instanceof RangeError) return Either.left(tooDeep)
      throw error
    }
  }
}

const admitsNull = (ast: AST.AST): boolean => {
  switch (ast._tag) {
    case "Literal":
      return ast.literal === null
    case "Union":
      return ast.types.some(admitsNull)
    case "Refinement":
    case "Transformation":
      return admitsNull(ast.from)
    case "Suspend":
      return admitsNull(ast.f())
    case "UnknownKeyword":
    case "AnyKeyword":
      return true
    default:
      return false
  }
}

/**
 * Under OpenAI strict mode every property is required and optional ones are sent as `null`; this maps such a
 * `null` back to "absent" before decoding, for optional properties whose type does not itself admit null.
 * Objects are copied where a key is dropped, never mutated (the arguments may be the caller's).
 */
const nullToAbsent = (encoded: AST.AST): (u: unknown) => unknown => {
  const memo = new Map<AST.AST, (u: unknown) => unknown>()
  const build = (ast: AST.AST): ((u: unknown) => unknown) | undefined => {
    switch (ast._tag) {
      case "Refinement":
        return build(ast.from)
      case "Transformation":
        return build(ast.from)
      case "Suspend": {
        const target = ast.f()
        const cached = memo.get(target)
        if (cached !== undefined) return cached
        // recursion: the function for the target is filled in after the walk that may refer back to it
        const ref: { inner?: ((u: unknown) => unknown) | undefined } = {}
        const lazy = (u: unknown) => (ref.inner === undefined ? u : ref.inner(u))
        memo.set(target, lazy)
        ref.inner = build(target)
        return lazy
      }
      case "TypeLiteral": {
        const optional = new Set<string>()
        const nested: Array<[string, (u: unknown) => unknown]> = []
        for (const ps of ast.propertySignatures) {
          if (typeof ps.name !== "string") continue
          if (ps.isOptional && !admitsNull(ps.type)) optional.add(ps.name)
          const inner = build(ps.type)
          if (inner !== undefined) nested.push([ps.name, inner])
        }
        if (optional.size === 0 && nested.length === 0) return undefined
        return NullAsAbsent.objectMapper(optional, nested)
      }
      case "TupleType": {
        const rest = ast.rest.length > 0 ? build(ast.rest[0].type) : undefined
        return rest === undefined ? undefined : NullAsAbsent.arrayMapper(rest)
      }
      case "Union":
        // Only objects are rewritten, and only keys that are optional-and-not-nullable in some member: a null
        // there cannot have been meant as null by any member that declares the key that way.
        return NullAsAbsent.allOf(ast.types.map(build).filter((f): f is NullAsAbsent.Mapper => f !== undefined))
      default:
        return undefined
    }
  }
  return build(encoded) ?? ((u) => u)
}

// ---------------------------------------------------------------------------------------------------------------
// output mapping
// ---------------------------------------------------------------------------------------------------------------

/** A defect of the call, naming the tool, with one line of reason; the thrown value stays in the `Cause`. */
export const defect = (tool: string, reason: string, error: unknown): ToolError =>
  makeError(ToolDefect, { tool, reason, cause: Cause.die(error) })

/** The result of a handler that gave nothing: one for all, as results are immutable values. */
const emptyResult: Either.Either<ToolResult.ToolResult, ToolError> = Either.right(ToolResult.text(""))

/**
 * Output mapping as DESIGN states: string, ToolResult, content parts, nothing, or JSON. With `toModelOutput` the
 * content is what it makes of the handler's value (before encoding) and `structured` the encoded value, by the
 * same rule (none for a string or nothing), so a result's `structured` has the type `Tool.StructuredOf` says.
 */
export const outputMapper = (
  success: Schema.Schema<any, any, never> | undefined,
  toModelOutput: ((value: unknown) => string | ReadonlyArray<ToolResult.Content>) | undefined
): (output: unknown, tool: string) => Either.Either<ToolResult.ToolResult, ToolError> => {
  const encode = success === undefined ? undefined : ParseResult.encodeUnknownEither(success, { errors: "all" })
  const shaped = (output: unknown, encoded: unknown, tool: string): Either.Either<ToolResult.ToolResult, ToolError> => {
    let content: string | ReadonlyArray<ToolResult.Content>
    try {
      content = toModelOutput!(output)
    } catch (error) {
      return Either.left(defect(tool, `shaping the output for the model failed: ${reasonOf(error)}`, error))
    }
    const parts = typeof content === "string" ? [{ type: "text" as const, text: content }] : content
    const structured = typeof encoded === "string" || encoded === null ? undefined : encoded
    return Either.right(ToolResult.make({ content: parts, structured }))
  }
  const mapValue = (value: unknown, tool: string): Either.Either<ToolResult.ToolResult, ToolError> => {
    if (typeof value === "string") return Either.right(ToolResult.text(value))
    if (value === undefined || value === null) return emptyResult
    if (Array.isArray(value) && value.length > 0 && value.every(ToolResult.isContent)) {
      return Either.right(ToolResult.parts(value))
    }
    let text: string | undefined
    try {
      text = JSON.stringify(value)
    } catch (error) {
      return Either.left(
        defect(tool, `output cannot be converted to JSON: ${reasonOf(error)}`, error)
      )
    }
    if (text === undefined) {
      return Either.left(defect(tool, `output cannot be converted to JSON: it is a ${typeof value}`, value))
    }
    return Either.right(ToolResult.make({ content: [{ type: "text", text }], structured: value }))
  }
  return (output, tool) => {
    if (ToolResult.isToolResult(output)) return Either.right(output)
    if (encode === undefined) return toModelOutput === undefined ? mapValue(output, tool) : shaped(output, output, tool)
    let encoded: Either.Either<unknown, ParseResult.ParseIssue>
    try {
      encoded = encode(output)
    } catch (error) {
      // a transformation in the success schema that throws
      return Either.left(
        defect(tool, `encoding the output with the tool's success schema failed: ${reasonOf(error)}`, error)
      )
    }
    if (Either.isLeft(encoded)) {
      const problems = fromIssue(encoded.left).map((p) => (p.path === "" ? p.message : `${p.path}: ${p.message}`))
      return Either.left(
        defect(tool, `output does not match the tool's success schema: ${problems.join("; ")}`, encoded.left)
      )
    }
    return toModelOutput === undefined ? mapValue(encoded.right, tool) : shaped(output, encoded.right, tool)
  }
}

/**
 * Whether a result's content is its `structured` value as JSON text, one part, as the output rule renders a value:
 * then an edge that carries one JSON value may send the value instead of the text, and the model reads the same.
 * A result shaped by `toModelOutput` (or made by hand) reads otherwise, and its text is what the model must get.
 */
export const rendersStructured = (result: ToolResult.ToolResult): boolean => {
  if (result.structured === undefined || result.content.length !== 1) return false
  const part = result.content[0]
  if (part.type !== "text") return false
  try {
    return JSON.stringify(result.structured) === part.text
  } catch {
    return false
  }
}

/**
 * The class of a `Schema.TaggedError` whose `message` is the one Effect generates for a class declared without a
 * `message` field: it prints the fields (`{ path: "a.txt" }`) and drops the tag, so it is not a message anyone
 * wrote, and the error reads better as its encoded JSON (`{"path":"a.txt","_tag":"FileNotFound"}`). Effect defines
 * that getter on the class `Schema.TaggedError` returns, the one class of the chain with its own static `_tag`; a
 * subclass that overrides `message` defines its own getter first.
 */
const generatedMessageClass = (error: object): Schema.Schema<any, any, never> | undefined => {
  if (Object.hasOwn(error, "message")) return undefined
  let proto: object | null = Object.getPrototypeOf(error)
  while (proto !== null && !Object.hasOwn(proto, "message")) proto = Object.getPrototypeOf(proto)
  const owner: unknown = proto === null ? undefined : (proto as { constructor?: unknown }).constructor
  return Schema.isSchema(owner) && Object.hasOwn(owner, "_tag") ? owner as Schema.Schema<any, any, never> : undefined
}

/**
 * A typed failure's message: its own `message`, else its JSON (encoded through the failure schema when there is
 * one, or through its own class for a `Schema.TaggedError`). May throw for a hostile error value (a throwing
 * `message` getter); `classify` turns that into the call's defect.
 */
export const failureMessenger = (failure: Schema.Schema<any, any, never> | undefined): (error: unknown) => string => {
  const encode = failure === undefined ? undefined : ParseResult.encodeUnknownEither(failure)
  return (error) => {
    if (typeof error === "string") return error
    const generated = typeof error === "object" && error !== null ? generatedMessageClass(error) : undefined
    if (generated === undefined && typeof error === "object" && error !== null && "message" in error) {
      const message = (error as { message: unknown }).message
      if (typeof message === "string" && message !== "") return message
    }
    let value = error
    const encoder = encode ?? (generated === undefined ? undefined : ParseResult.encodeUnknownEither(generated))
    if (encoder !== undefined) {
      const encoded = encoder(error)
      if (Either.isRight(encoded)) value = encoded.right
    }
    try {
      return JSON.stringify(value) ?? String(value)
    } catch {
      return String(value)
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// one call
// ---------------------------------------------------------------------------------------------------------------

/** Parse, guard and decode. Synchronous and never throws: a throwing user refinement is the call's defect. */
export const prepare = (kernel: Kernel, args: unknown): Either.Either<unknown, ToolError> => {
  const parsed = Arguments.parse(args)
  if (Arguments.isProblems(parsed)) return Either.left(invalid(kernel.name, parsed))
  let decoded: Either.Either<unknown, Array<Problem>>
  try {
    // parsed from text (or made up for no arguments): nobody else holds it
    decoded = kernel.decode(parsed, parsed !== args)
  } catch (error) {
    return Either.left(defect(kernel.name, `checking the arguments failed: ${reasonOf(error)}`, error))
  }
  return Either.isRight(decoded)
    ? decoded as unknown as Either.Either<unknown, ToolError>
    : Either.left(invalid(kernel.name, decoded.left))
}

const invalid = (tool: string, problems: ReadonlyArray<Problem>): InvalidArguments =>
  makeError(InvalidArguments, { tool, problems: problems.map(makeProblem) })

/**
 * Keys named once each: a call that names a key twice would otherwise wait for itself. Most calls name none or
 * one, which costs nothing here.
 */
const distinct = (keys: ReadonlyArray<string>): ReadonlyArray<string> => {
  if (keys.length < 2) return keys
  for (let i = 1; i < keys.length; i++) if (keys.indexOf(keys[i]) < i) return [...new Set(keys)]
  return keys
}

/** The resource keys of a prepared call; a throwing key function is a defect of that call. */
export const resourcesOf = (kernel: Kernel, params: unknown): Either.Either<ReadonlyArray<string>, ToolError> => {
  try {
    return Either.right(distinct(kernel.resources(params)))
  } catch (error) {
    return Either.left(defect(kernel.name, `computing the resource keys failed: ${reasonOf(error)}`, error))
  }
}

/** Classifies how a handler (or a preview) ended. */
export const classify = (
  kernel: Kernel,
  exit: Exit.Exit<unknown, unknown>,
  partial: () => unknown
): Either.Either<ToolResult.ToolResult, ToolError> => {
  if (Exit.isSuccess(exit)) return kernel.toResult(exit.value, kernel.name)
  const cause = exit.cause
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure)) {
    const error = failure.value
    if (isToolError(error)) return Either.left(error)
    let message: string
    try {
      message = kernel.failureMessage(error)
    } catch (thrown) {
      return Either.left(makeError(ToolDefect, {
        tool: kernel.name,
        reason: `rendering its error failed: ${reasonOf(thrown)}`,
        cause: Cause.sequential(cause, Cause.die(thrown))
      }))
    }
    return Either.left(makeError(ToolFailure, { tool: kernel.name, message, error }))
  }
  const died = Cause.dieOption(cause)
  if (Option.isSome(died)) {
    const reason = reasonOf(died.value)
    return Either.left(makeError(ToolDefect, { tool: kernel.name, reason, cause }))
  }
  return Either.left(interruptedOutcome(kernel.name, partial()))
}

/** A call stopped before it finished, with the last partial output it reported. */
export const interruptedOutcome = (tool: string, partial: unknown): ToolInterrupted =>
  makeError(ToolInterrupted, { tool, ...(partial === undefined ? {} : { partial }) })
