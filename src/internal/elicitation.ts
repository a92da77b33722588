/**
 * The machinery behind `Tool.elicit` and the two MCP ends of elicitation.
 *
 * - The form: a Schema of an object as MCP's restricted `requestedSchema` (a flat object of strings, numbers,
 *   integers, booleans, choices and multi-choices of strings), derived from the standard JSON Schema projection
 *   (so a form and a tool's parameters say the same thing about one schema), with what that projection leaves out
 *   added from the AST: titles, titled choices (a union of literals annotated with `title`s, SEP-1330) and the
 *   defaults of `Schema.optionalWith(..., { default })` fields (SEP-1034). Built once per schema.
 * - The answer: a field left out of an accepted answer takes its default (what the form showed prefilled), then
 *   the schema decodes it; a mismatch is an `ElicitationError` in the words an argument check uses.
 * - MCP: `elicitation/create` params from a request and a request from params, an `ElicitResult` from a result
 *   and back, used by `McpServer` (asking a client) and `McpClient` (answering a server) alike.
 *
 * @internal
 */
import type { ElicitRequest, ElicitResult } from "@modelcontextprotocol/server"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"
import * as Elicitation from "../Elicitation.js"
import { fromIssue } from "./argumentProblems.js"
import type { JsonSchema } from "./jsonSchema.js"
import * as JsonSchemas from "./jsonSchema.js"
import { reasonOf } from "./reason.js"

/** The formats MCP allows on a string field; any other is left out of the form (the decoder still checks it). */
const FORMATS: ReadonlySet<string> = new Set(["email", "uri", "date", "date-time"])

/** What a form may say about a field of each kind, besides `type`, `title`, `description` and `default`. */
const STRING_KEYWORDS = ["minLength", "maxLength"] as const
const NUMBER_KEYWORDS = ["minimum", "maximum"] as const
const ARRAY_KEYWORDS = ["minItems", "maxItems"] as const

const FORM_SHAPE = "a form field is a string, a number, an integer, a boolean, a choice of strings (a union of " +
  "string literals) or several choices of strings (an array of string literals)"

// ---------------------------------------------------------------------------------------------------------------
// the form
// ---------------------------------------------------------------------------------------------------------------

/** What `Tool.elicit` keeps per schema: the form and the decoder of an answer. */
export interface Form {
  readonly requestedSchema: Elicitation.RequestedSchema
  readonly decode: (content: Elicitation.Content) => Either.Either<unknown, Elicitation.ElicitationError>
}

const keywordTitles: ReadonlySet<unknown> = new Set([
  AST.stringKeyword.annotations[AST.TitleAnnotationId],
  AST.numberKeyword.annotations[AST.TitleAnnotationId],
  AST.booleanKeyword.annotations[AST.TitleAnnotationId],
  AST.unknownKeyword.annotations[AST.TitleAnnotationId],
  AST.anyKeyword.annotations[AST.TitleAnnotationId],
  AST.objectKeyword.annotations[AST.TitleAnnotationId]
])

/** Effect's built-in refinements title themselves after the filter (`int`, `between(1, 5)`, `nonEmptyString`). */
const GENERATED_TITLE = /^[a-z][A-Za-z0-9]*(?:\(.*\))?$/

/**
 * The title an author gave a node: not the one every keyword carries (`"string"`), nor the one a built-in
 * refinement names itself with. An author's title on `Schema.Int` is found unless it reads like one of those.
 */
const authorTitle = (ast: AST.AST): string | undefined => {
  for (let node: AST.AST | undefined = withoutUndefined(ast); node !== undefined;) {
    const title = Option.getOrUndefined(AST.getTitleAnnotation(node))
    if (title !== undefined && !keywordTitles.has(title)) {
      const builtIn = AST.isRefinement(node) && node.annotations[AST.SchemaIdAnnotationId] !== undefined &&
        GENERATED_TITLE.test(title)
      if (!builtIn) return title
    }
    node = AST.isRefinement(node) ? node.from : AST.isSuspend(node) ? node.f() : undefined
  }
  return undefined
}

/** An optional property's type without its `undefined` (optionality is `required`'s job). */
const withoutUndefined = (ast: AST.AST): AST.AST => {
  if (!AST.isUnion(ast) || !ast.types.some(AST.isUndefinedKeyword)) return ast
  const rest = ast.types.filter((t) => !AST.isUndefinedKeyword(t))
  return rest.length === 1 ? rest[0] : AST.Union.make(rest, ast.annotations)
}

/** A property's type as the form sees it: without `undefined` or refinements. */
const bareType = (ast: AST.AST): AST.AST => {
  for (;;) {
    const next = withoutUndefined(AST.isRefinement(ast) ? ast.from : AST.isSuspend(ast) ? ast.f() : ast)
    if (next === ast) return ast
    ast = next
  }
}

/**
 * The titles of a choice among string literals, when at least one literal carries one (`Schema.Literal("s")
 * .annotations({ title: "Small" })`); the others are titled with their value. Undefined for untitled choices.
 */
const choiceTitles = (ast: AST.AST): Map<string, string> | undefined => {
  const type = bareType(ast)
  const members = AST.isUnion(type) ? type.types.map(bareType) : [type]
  const titles = new Map<string, string>()
  let titled = false
  for (const member of members) {
    if (!AST.isLiteral(member) || typeof member.literal !== "string") return undefined
    const title = Option.getOrUndefined(AST.getTitleAnnotation(member))
    if (title !== undefined) titled = true
    titles.set(member.literal, title ?? member.literal)
  }
  return titled ? titles : undefined
}

/** The element type of an array schema (`Schema.Array(X)`), if that is what the node is. */
const arrayElement = (ast: AST.AST): AST.AST | undefined => {
  const type = bareType(ast)
  return AST.isTupleType(type) && type.elements.length === 0 && type.rest.length === 1 ? type.rest[0].type : undefined
}

/** The object node a form's fields are read from, and the defaults `optionalWith(..., { default })` gives them. */
const encodedObject = (ast: AST.AST): { readonly fields: AST.TypeLiteral; readonly defaults: Map<string, unknown> } => {
  const defaults = new Map<string, unknown>()
  for (;;) {
    if (AST.isTypeLiteral(ast)) return { fields: ast, defaults }
    if (AST.isTransformation(ast)) {
      if (AST.isTypeLiteralTransformation(ast.transformation)) {
        for (const t of ast.transformation.propertySignatureTransformations) {
          // a field missing from the encoded side decodes to its default: that value is what the form prefills
          const decoded = t.decode(Option.none())
          if (Option.isSome(decoded) && typeof t.from === "string" && !defaults.has(t.from)) {
            defaults.set(t.from, decoded.value)
          }
        }
      }
      ast = ast.from
    } else if (AST.isRefinement(ast)) ast = ast.from
    else if (AST.isSuspend(ast)) ast = ast.f()
    else if (AST.isDeclaration(ast) && Option.isSome(AST.getSurrogateAnnotation(ast))) {
      ast = Option.getOrThrow(AST.getSurrogateAnnotation(ast))
    } else return { fields: new AST.TypeLiteral([], []), defaults }
  }
}

const isStringArray = (u: unknown): u is ReadonlyArray<string> =>
  Array.isArray(u) && u.every((v) => typeof v === "string")

/** Whether a default fits the field it is the default of (an encoded value, not the decoded one of a transformation). */
const fits = (field: Elicitation.Field, value: unknown): boolean => {
  switch (field.type) {
    case "string":
      return typeof value === "string" &&
        ("enum" in field
          ? field.enum.includes(value)
          : "oneOf" in field
          ? field.oneOf.some((o) => o.const === value)
          : true)
    case "number":
      return typeof value === "number" && Number.isFinite(value)
    case "integer":
      return typeof value === "number" && Number.isInteger(value)
    case "boolean":
      return typeof value === "boolean"
    case "array":
      return isStringArray(value)
  }
}

class FormError extends Error {}

const refuse = (name: string, reason: string): never => {
  throw new FormError(`${JSON.stringify(name)}: ${reason}`)
}

const copy = (from: JsonSchema, keys: ReadonlyArray<string>): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  for (const key of keys) if (typeof from[key] === "number") out[key] = from[key]
  return out
}

/** One property of the standard projection as a form field, or a refusal naming it. */
const field = (
  name: string,
  json: JsonSchema,
  ps: AST.PropertySignature | undefined,
  fallbackDefault: unknown
): Elicitation.Field => {
  const title = (ps === undefined ? undefined : Option.getOrUndefined(AST.getTitleAnnotation(ps))) ??
    (ps === undefined ? undefined : authorTitle(ps.type))
  // `type` first, then what a person reads, then the constraints: the order a reader of the JSON expects
  const common: Record<string, unknown> = { type: json.type }
  if (title !== undefined) common.title = title
  if (typeof json.description === "string") common.description = json.description
  let built: Elicitation.Field
  switch (json.type) {
    case "string": {
      if (Array.isArray(json.enum)) {
        if (!isStringArray(json.enum)) return refuse(name, FORM_SHAPE)
        if (isStringArray(json.enumNames)) {
          built = { ...common, type: "string", enum: json.enum, enumNames: json.enumNames } as Elicitation.Field
          break
        }
        const titles = ps === undefined ? undefined : choiceTitles(ps.type)
        built = (titles === undefined
          ? { ...common, type: "string", enum: json.enum }
          : {
            ...common,
            type: "string",
            oneOf: json.enum.map((value) => ({ const: value, title: titles.get(value) ?? value }))
          }) as Elicitation.Field
        break
      }
      const format = typeof json.format === "string" && FORMATS.has(json.format) ? { format: json.format } : {}
      built = { ...common, type: "string", ...copy(json, STRING_KEYWORDS), ...format } as Elicitation.Field
      break
    }
    case "number":
    case "integer":
      if (json.enum !== undefined) return refuse(name, `numeric choices cannot be asked; ${FORM_SHAPE}`)
      built = { ...common, type: json.type, ...copy(json, NUMBER_KEYWORDS) } as Elicitation.Field
      break
    case "boolean":
      if (json.enum !== undefined) return refuse(name, `a boolean literal cannot be asked; ${FORM_SHAPE}`)
      built = { ...common, type: "boolean" } as Elicitation.Field
      break
    case "array": {
      const items = json.items as JsonSchema | undefined
      if (items === undefined || items.type !== "string" || !isStringArray(items.enum)) {
        return refuse(name, `an array is asked only as several choices of strings; ${FORM_SHAPE}`)
      }
      const element = ps === undefined ? undefined : arrayElement(ps.type)
      const titles = element === undefined ? undefined : choiceTitles(element)
      built = {
        ...common,
        type: "array",
        ...copy(json, ARRAY_KEYWORDS),
        items: titles === undefined
          ? { type: "string", enum: items.enum }
          : { anyOf: items.enum.map((value) => ({ const: value, title: titles.get(value) ?? value })) }
      } as Elicitation.Field
      break
    }
    default:
      return refuse(
        name,
        json.type === "object"
          ? `a form is flat: nested objects cannot be asked; ${FORM_SHAPE}`
          : json.anyOf !== undefined
          ? `a union other than a choice of string literals cannot be asked; ${FORM_SHAPE}`
          : FORM_SHAPE
      )
  }
  const def = json.default !== undefined ? json.default : fallbackDefault
  if (def !== undefined && fits(built, def)) return { ...built, default: def } as Elicitation.Field
  return built
}

const formCache = new WeakMap<object, Either.Either<Form, string>>()

/**
 * The form for a schema (Struct fields or a Schema of an object), built once per schema; `Left` is the reason it
 * cannot be a form (a programmer error, which `Tool.elicit` turns into a defect).
 */
export const form = (input: Schema.Struct.Fields | Schema.Schema.AnyNoContext): Either.Either<Form, string> => {
  const cached = formCache.get(input)
  if (cached !== undefined) return cached
  const built = buildForm(input)
  formCache.set(input, built)
  return built
}

const buildForm = (input: Schema.Struct.Fields | Schema.Schema.AnyNoContext): Either.Either<Form, string> => {
  const schema: Schema.Schema.AnyNoContext = Schema.isSchema(input)
    ? input
    : Schema.Struct(input as Schema.Struct.Fields) as unknown as Schema.Schema.AnyNoContext
  let requestedSchema: Elicitation.RequestedSchema
  try {
    const standard = JsonSchemas.standard(schema.ast)
    if (standard.$defs !== undefined) throw new FormError("a recursive schema cannot be asked as a form")
    const { defaults, fields } = encodedObject(schema.ast)
    const properties: Record<string, Elicitation.Field> = {}
    for (const [name, json] of Object.entries(standard.properties as Record<string, JsonSchema>)) {
      const ps = fields.propertySignatures.find((p) => p.name === name)
      properties[name] = field(name, json, ps, defaults.get(name))
    }
    if (standard.patternProperties !== undefined || typeof standard.additionalProperties === "object") {
      throw new FormError("a record cannot be asked as a form: a form has a fixed set of fields")
    }
    requestedSchema = { type: "object", properties, required: standard.required as ReadonlyArray<string> }
  } catch (error) {
    return Either.left(reasonOf(error))
  }
  const decode = ParseResult.decodeUnknownEither(schema, { errors: "all" })
  return Either.right({
    requestedSchema,
    decode: (content) =>
      Either.mapLeft(decode(withDefaults(requestedSchema, content)), (issue) =>
        new Elicitation.ElicitationError({
          message: `the answer does not match the form: ${
            fromIssue(issue).map((p) => (p.path === "" ? p.message : `${p.path}: ${p.message}`)).join("; ")
          }`
        }))
  })
}

/** A form of no fields: `Tool.elicit({ message })` asks for a confirmation. */
const CONFIRMATION: Elicitation.RequestedSchema = { type: "object", properties: {}, required: [] }

/**
 * An accepted answer with the form's defaults filled in for the fields it leaves out: what the user saw
 * prefilled and did not change (SEP-1034). A field given as `null` counts as left out.
 */
export const withDefaults = (
  requestedSchema: Elicitation.RequestedSchema | undefined,
  content: Elicitation.Content | undefined
): Elicitation.Content => {
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(content ?? {})) if (value !== null) out[key] = value
  if (requestedSchema === undefined) return out as Elicitation.Content
  for (const [name, field] of Object.entries(requestedSchema.properties)) {
    if (out[name] === undefined && field.default !== undefined) out[name] = field.default
  }
  return out as Elicitation.Content
}

// ---------------------------------------------------------------------------------------------------------------
// Tool.elicit
// ---------------------------------------------------------------------------------------------------------------

export interface ElicitOptions {
  readonly message: string
  readonly schema?: Schema.Struct.Fields | Schema.Schema.AnyNoContext | undefined
  readonly url?: string | undefined
  readonly key?: string | undefined
}

/** `Result<any>`: `Tool.elicit`'s overloads give the decoded type, which only the schema knows. */
export const elicit = (
  options: ElicitOptions
): Effect.Effect<Elicitation.Result<any>, Elicitation.ElicitationError> =>
  Effect.suspend(() => {
    const { key, message, schema, url } = options
    if (schema !== undefined && url !== undefined) {
      return Effect.dieMessage("Tool.elicit: give a schema (a form) or a url (a page to open), not both")
    }
    let request: Elicitation.Request
    let decode: ((content: Elicitation.Content) => Either.Either<unknown, Elicitation.ElicitationError>) | undefined
    if (url !== undefined) {
      if (!URL.canParse(url)) return Effect.dieMessage(`Tool.elicit: ${JSON.stringify(url)} is not a URL`)
      request = { message, mode: "url", url, ...(key === undefined ? {} : { key }) }
    } else if (schema !== undefined) {
      const built = form(schema)
      if (Either.isLeft(built)) {
        return Effect.dieMessage(`Tool.elicit: the schema cannot be asked as a form: ${built.left}`)
      }
      request = {
        message,
        mode: "form",
        requestedSchema: built.right.requestedSchema,
        ...(key === undefined ? {} : { key })
      }
      decode = built.right.decode
    } else {
      request = { message, mode: "form", requestedSchema: CONFIRMATION, ...(key === undefined ? {} : { key }) }
    }
    // with no elicitor provided, the default one answers Cancel: nobody to ask, and nobody declined either
    return Effect.flatMap(Elicitation.Elicitor, (elicitor) =>
      Effect.flatMap(elicitor.elicit(request), (result): Effect.Effect<
        Elicitation.Result<unknown>,
        Elicitation.ElicitationError
      > => {
        if (result._tag !== "Accept") {
          return Effect.succeed(result)
        }
        if (decode === undefined) {
          return Effect.succeed(Elicitation.accept(undefined))
        }
        const decoded = decode(result.content)
        return Either.isRight(decoded) ? Effect.succeed(Elicitation.accept(decoded.right)) : Effect.fail(decoded.left)
      }))
  })

/**
 * The elicitor provided in `context`, if one is: none when only the default (which answers `Cancel`) is there.
 * For a client deciding whether to tell servers it can ask someone.
 */
export const providedIn = (context: Context.Context<never>): Option.Option<Elicitation.Elicitor["Type"]> => {
  const elicitor = Context.get(context, Elicitation.Elicitor)
  return elicitor === Elicitation.Elicitor.defaultValue() ? Option.none() : Option.some(elicitor)
}

// ---------------------------------------------------------------------------------------------------------------
// MCP: both ends use these, so what one sends is what the other reads
// ---------------------------------------------------------------------------------------------------------------

/** The `elicitation/create` params of a request; a URL question carries a fresh id, as MCP asks. */
export const toParams = (request: Elicitation.Request, elicitationId: () => string): ElicitRequest["params"] =>
  request.mode === "url"
    ? { mode: "url", message: request.message, url: request.url ?? "", elicitationId: elicitationId() }
    : {
      mode: "form",
      message: request.message,
      requestedSchema: (request.requestedSchema ?? CONFIRMATION) as ElicitRequestFormSchema
    }

type ElicitRequestFormSchema = Extract<ElicitRequest["params"], { requestedSchema: unknown }>["requestedSchema"]

/** A request from `elicitation/create` params (a missing mode is a form, as MCP says). */
export const fromParams = (params: ElicitRequest["params"]): Elicitation.Request =>
  params.mode === "url"
    ? { message: params.message, mode: "url", url: params.url }
    : {
      message: params.message,
      mode: "form",
      requestedSchema: (params as { requestedSchema: unknown }).requestedSchema as Elicitation.RequestedSchema
    }

/** A result as MCP's `ElicitResult`. */
export const toElicitResult = (result: Elicitation.Result<Elicitation.Content>): ElicitResult => {
  switch (result._tag) {
    case "Accept":
      return { action: "accept", content: result.content as ElicitResult["content"] }
    case "Decline":
      return { action: "decline" }
    case "Cancel":
      return { action: "cancel" }
  }
}

/** MCP's `ElicitResult` as a result (an accept without content is an empty answer). */
export const fromElicitResult = (result: ElicitResult): Elicitation.Result<Elicitation.Content> => {
  switch (result.action) {
    case "accept":
      return Elicitation.accept((result.content ?? {}) as Elicitation.Content)
    case "decline":
      return Elicitation.decline
    case "cancel":
      return Elicitation.cancel
  }
}
