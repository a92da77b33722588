/**
 * Effect Schema AST -> JSON Schema, the way tool parameters are served to models.
 *
 * Our own walker rather than `effect/JSONSchema` because the rules differ: named sub-schemas are inlined (only
 * recursion keeps `$ref`), no `$id`/`$schema`/auto titles, enums are flat, dates carry `format: "date-time"`, and
 * every refusal names the path of the offending field. It honours Effect's `jsonSchema` annotation (built-in
 * refinements put their constraints there; users may override a node wholesale with it).
 *
 * @internal
 */
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"
import * as Targets from "./jsonSchemaTargets.js"

/** A JSON Schema document or fragment. */
export type JsonSchema = { [key: string]: unknown }

/** Where a projection is served. */
export type Target = "standard" | "openai-strict" | "gemini"

/** A schema that cannot be served for a target: a programmer error, thrown at construction. */
export class UnsupportedSchemaError extends Error {
  constructor(readonly path: string, readonly reason: string) {
    super(path === "" ? reason : `at ${path}: ${reason}`)
    this.name = "UnsupportedSchemaError"
  }
}

// ---------------------------------------------------------------------------------------------------------------
// paths
// ---------------------------------------------------------------------------------------------------------------

const identifierLike = /^[A-Za-z_$][A-Za-z0-9_$-]*$/

/** `options.depth`, `tags[1]`, `["odd key"]`: the path notation used in every message a model reads. */
export const formatPath = (path: ReadonlyArray<PropertyKey>): string => {
  let out = ""
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`
    else if (typeof key === "string" && identifierLike.test(key)) out += out === "" ? key : `.${key}`
    else out += `[${JSON.stringify(String(key))}]`
  }
  return out
}

// ---------------------------------------------------------------------------------------------------------------
// standard projection
// ---------------------------------------------------------------------------------------------------------------

const DateFromSelfSchemaId = Symbol.for("effect/SchemaId/DateFromSelf")
const ValidDateSchemaId = Symbol.for("effect/SchemaId/ValidDate")
const ParseJsonSchemaId = Symbol.for("effect/schema/ParseJson")

/**
 * What `Number(s)` (behind `Schema.NumberFromString`) accepts, narrowed to the plain notations, and everything
 * `String(n)` writes (`"1e+21"`, `"NaN"`, `"-Infinity"`): served so a model is not told any string will do.
 */
const NUMBER_STRING_PATTERN = "^(?:[+-]?(?:[0-9]+(?:\\.[0-9]*)?|\\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?Infinity|NaN)$"

/**
 * String encodings whose decoder refuses most strings, with the constraint that says which ones it takes. Keyed
 * by the transformation itself, which `.annotations(...)` keeps, so an annotated `NumberFromString` is found too.
 */
const stringEncodings = new Map<AST.Transformation["transformation"], JsonSchema>([
  [(Schema.NumberFromString.ast as AST.Transformation).transformation, { pattern: NUMBER_STRING_PATTERN }],
  [(Schema.BigInt.ast as AST.Transformation).transformation, { pattern: "^[+-]?[0-9]+$" }]
])

const keywordDefaults = new Map<AST.AST["_tag"], unknown>([
  ["StringKeyword", AST.stringKeyword.annotations[AST.DescriptionAnnotationId]],
  ["NumberKeyword", AST.numberKeyword.annotations[AST.DescriptionAnnotationId]],
  ["BooleanKeyword", AST.booleanKeyword.annotations[AST.DescriptionAnnotationId]],
  ["UnknownKeyword", AST.unknownKeyword.annotations[AST.DescriptionAnnotationId]],
  ["AnyKeyword", AST.anyKeyword.annotations[AST.DescriptionAnnotationId]],
  ["ObjectKeyword", AST.objectKeyword.annotations[AST.DescriptionAnnotationId]],
  ["NeverKeyword", AST.neverKeyword.annotations[AST.DescriptionAnnotationId]]
])

const descriptionOf = (ast: AST.AST): string | undefined => {
  const description = Option.getOrUndefined(AST.getDescriptionAnnotation(ast))
  if (description === undefined) return undefined
  return keywordDefaults.get(ast._tag) === description ? undefined : description
}

/**
 * Adds what an annotated node (an AST node, or a property signature / tuple element carrying context annotations)
 * says about itself: its description, and `default`/`examples` when they are JSON.
 */
const withAnnotations = (schema: JsonSchema, annotated: AST.Annotated): JsonSchema => {
  const description = "_tag" in annotated
    ? descriptionOf(annotated as AST.AST)
    : Option.getOrUndefined(AST.getDescriptionAnnotation(annotated))
  const def = AST.getDefaultAnnotation(annotated)
  const examples = Option.getOrUndefined(AST.getExamplesAnnotation(annotated))
  if (description === undefined && Option.isNone(def) && examples === undefined) return schema
  const out: JsonSchema = { ...schema }
  if (description !== undefined) out.description = description
  if (Option.isSome(def) && isJsonValue(def.value)) out.default = def.value
  if (examples !== undefined) {
    const json = examples.filter(isJsonValue)
    if (json.length > 0) out.examples = json
  }
  return out
}

const isJsonValue = (u: unknown): boolean => {
  if (u === null || typeof u === "string" || typeof u === "boolean") return true
  if (typeof u === "number") return Number.isFinite(u)
  try {
    return JSON.stringify(u) !== undefined && typeof u === "object" &&
      (Array.isArray(u) || Object.getPrototypeOf(u) === Object.prototype)
  } catch {
    return false
  }
}

const isDateDeclaration = (ast: AST.AST): boolean => {
  while (AST.isRefinement(ast)) ast = ast.from
  return AST.isDeclaration(ast) && ast.annotations[AST.SchemaIdAnnotationId] === DateFromSelfSchemaId
}

/** Whether a refinement checks the decoded side of a transformation (so its constraint has no encoded form). */
const refinesDecodedSide = (ast: AST.Refinement): boolean => {
  let from: AST.AST = ast.from
  while (AST.isRefinement(from)) from = from.from
  return AST.isTransformation(from)
}

const numericMax = new Set(["minLength", "minItems", "minimum", "exclusiveMinimum", "minProperties"])
const numericMin = new Set(["maxLength", "maxItems", "maximum", "exclusiveMaximum", "maxProperties"])

/** Adds a refinement's constraints to the schema of what it refines, keeping the stricter of two bounds. */
const mergeConstraints = (base: JsonSchema, constraints: JsonSchema): JsonSchema => {
  const out: JsonSchema = { ...base }
  for (const [key, value] of Object.entries(constraints)) {
    const existing = out[key]
    if (existing !== undefined && typeof existing === "number" && typeof value === "number") {
      if (numericMax.has(key)) {
        out[key] = Math.max(existing, value)
        continue
      }
      if (numericMin.has(key)) {
        out[key] = Math.min(existing, value)
        continue
      }
    }
    if (
      (key === "pattern" || key === "multipleOf" || key === "format") && existing !== undefined && existing !== value
    ) {
      const allOf = Array.isArray(out.allOf) ? [...out.allOf] : []
      allOf.push({ [key]: existing })
      out.allOf = allOf
    }
    out[key] = value
  }
  return out
}

const isOverride = (hook: object): boolean => "type" in hook || "anyOf" in hook || "oneOf" in hook || "$ref" in hook

interface Walk {
  readonly defs: Map<string, JsonSchema>
  /** Compound nodes being walked, with the `$defs` name given to them when a recursive reference was found. */
  readonly visiting: Map<AST.AST, { name: string | undefined }>
  readonly usedNames: Set<string>
}

const defName = (walk: Walk, ast: AST.AST): string => {
  const base = Option.getOrElse(AST.getJSONIdentifier(ast), () => "Recursive").replace(/[^A-Za-z0-9_.-]/g, "_")
  let name = base
  for (let i = 2; walk.usedNames.has(name); i++) name = `${base}${i}`
  walk.usedNames.add(name)
  return name
}

const resolveSuspend = (ast: AST.AST): AST.AST => {
  while (AST.isSuspend(ast)) ast = ast.f()
  return ast
}

const go = (ast: AST.AST, path: ReadonlyArray<PropertyKey>, walk: Walk): JsonSchema => {
  ast = resolveSuspend(ast)
  const entry = walk.visiting.get(ast)
  if (entry !== undefined) {
    entry.name ??= defName(walk, ast)
    return { $ref: `#/$defs/${entry.name}` }
  }
  const compound = AST.isTypeLiteral(ast) || AST.isUnion(ast) || AST.isTupleType(ast) || AST.isTransformation(ast) ||
    AST.isRefinement(ast)
  if (!compound) return node(ast, path, walk)
  const mine = { name: undefined as string | undefined }
  walk.visiting.set(ast, mine)
  const schema = node(ast, path, walk)
  walk.visiting.delete(ast)
  if (mine.name === undefined) return schema
  walk.defs.set(mine.name, schema)
  return { $ref: `#/$defs/${mine.name}` }
}

const node = (ast: AST.AST, path: ReadonlyArray<PropertyKey>, walk: Walk): JsonSchema => {
  const hook = Option.getOrUndefined(AST.getJSONSchemaAnnotation(ast)) as JsonSchema | undefined
  if (hook !== undefined) {
    if (AST.isRefinement(ast)) {
      const base = go(ast.from, path, walk)
      // A constraint on the decoded side of a transformation has no encoded form: served without it, enforced by
      // the decoder (documented in docs/tools.md and pinned by a test).
      if (refinesDecodedSide(ast)) return base
      return withAnnotations(mergeConstraints(base, hook), ast)
    }
    if (isOverride(hook)) return withAnnotations({ ...hook }, ast)
    return { ...nodeWithoutHook(ast, path, walk), ...hook }
  }
  return nodeWithoutHook(ast, path, walk)
}

const unsupported = (path: ReadonlyArray<PropertyKey>, what: string): never => {
  throw new UnsupportedSchemaError(
    formatPath(path),
    `${what} cannot be expressed as JSON Schema; give the parameter a JSON-encodable schema (for example a ` +
      "transformation from a string) or a `jsonSchema` annotation"
  )
}

const literalSchema = (literal: AST.LiteralValue, path: ReadonlyArray<PropertyKey>): JsonSchema => {
  if (literal === null) return { type: "null" }
  switch (typeof literal) {
    case "string":
      return { type: "string", enum: [literal] }
    case "number":
      return { type: Number.isInteger(literal) ? "integer" : "number", enum: [literal] }
    case "boolean":
      return { type: "boolean", enum: [literal] }
    default:
      return unsupported(path, "a bigint literal")
  }
}

const nodeWithoutHook = (ast: AST.AST, path: ReadonlyArray<PropertyKey>, walk: Walk): JsonSchema => {
  const surrogate = Option.getOrUndefined(AST.getSurrogateAnnotation(ast))
  if (surrogate !== undefined) return go(surrogate, path, walk)
  switch (ast._tag) {
    case "Declaration":
      return unsupported(path, `a value of type ${String(ast)}`)
    case "UndefinedKeyword":
    case "VoidKeyword":
      return unsupported(path, "undefined")
    case "BigIntKeyword":
      return unsupported(path, "a bigint (use Schema.BigInt, which is encoded as a string)")
    case "UniqueSymbol":
    case "SymbolKeyword":
      return unsupported(path, "a symbol")
    case "NeverKeyword":
      return withAnnotations({ not: {} }, ast)
    case "UnknownKeyword":
    case "AnyKeyword":
      return withAnnotations({}, ast)
    case "ObjectKeyword":
      return withAnnotations({ type: "object" }, ast)
    case "StringKeyword":
      return withAnnotations({ type: "string" }, ast)
    case "NumberKeyword":
      return withAnnotations({ type: "number" }, ast)
    case "BooleanKeyword":
      return withAnnotations({ type: "boolean" }, ast)
    case "Literal":
      return withAnnotations(literalSchema(ast.literal, path), ast)
    case "Enums": {
      const values = ast.enums.map(([, value]) => value)
      return withAnnotations(enumSchema(values), ast)
    }
    case "TemplateLiteral":
      return withAnnotations({ type: "string", pattern: AST.getTemplateLiteralRegExp(ast).source }, ast)
    case "TupleType":
      return withAnnotations(tupleSchema(ast, path, walk), ast)
    case "TypeLiteral":
      return withAnnotations(objectSchema(ast, path, walk), ast)
    case "Union":
      return withAnnotations(unionSchema(ast, path, walk), ast)
    case "Suspend":
      return go(ast.f(), path, walk)
    case "Refinement":
      // `Schema.Date`'s "a valid Date" says nothing `format: "date-time"` does not; a description of the author's
      // own on the refinement is kept.
      if (ast.annotations[AST.SchemaIdAnnotationId] === ValidDateSchemaId && descriptionOf(ast) === "a valid Date") {
        return go(ast.from, path, walk)
      }
      // A refinement without a JSON Schema hook (a user `Schema.filter`) is served as what it refines, with the
      // refinement's description when it has one; the decoder enforces the predicate.
      return withAnnotations(go(ast.from, path, walk), ast)
    case "Transformation":
      return transformationSchema(ast, path, walk)
  }
}

const enumSchema = (values: ReadonlyArray<string | number>): JsonSchema => {
  const strings = values.filter((v): v is string => typeof v === "string")
  const numbers = values.filter((v): v is number => typeof v === "number")
  if (numbers.length === 0) return { type: "string", enum: strings }
  const numberType = numbers.every(Number.isInteger) ? "integer" : "number"
  if (strings.length === 0) return { type: numberType, enum: numbers }
  return { anyOf: [{ type: "string", enum: strings }, { type: numberType, enum: numbers }] }
}

const tupleSchema = (ast: AST.TupleType, path: ReadonlyArray<PropertyKey>, walk: Walk): JsonSchema => {
  if (ast.rest.length > 1) return unsupported(path, "a tuple with elements after its rest element")
  const out: JsonSchema = { type: "array" }
  const elements = ast.elements.map((e, i) => withAnnotations(go(e.type, path.concat(i), walk), e))
  if (elements.length > 0) {
    out.prefixItems = elements
    out.minItems = ast.elements.filter((e) => !e.isOptional).length
  }
  if (ast.rest.length === 1) {
    const rest = withAnnotations(go(ast.rest[0].type, path.concat(elements.length), walk), ast.rest[0])
    out.items = rest
  } else if (elements.length > 0) {
    out.items = false
  } else {
    out.maxItems = 0
  }
  return out
}

/** The property's type without `undefined` (optionality is `required`'s job), and whether undefined was there. */
const withoutUndefined = (ast: AST.AST): { readonly type: AST.AST; readonly hadUndefined: boolean } => {
  if (AST.isUndefinedKeyword(ast)) return { type: AST.neverKeyword, hadUndefined: true }
  if (AST.isUnion(ast)) {
    const types = ast.types.filter((t) => !AST.isUndefinedKeyword(t))
    if (types.length !== ast.types.length) {
      return { type: types.length === 1 ? types[0] : AST.Union.make(types, ast.annotations), hadUndefined: true }
    }
  }
  return { type: ast, hadUndefined: false }
}

const objectSchema = (ast: AST.TypeLiteral, path: ReadonlyArray<PropertyKey>, walk: Walk): JsonSchema => {
  const properties: JsonSchema = {}
  const required: Array<string> = []
  const out: JsonSchema = { type: "object", properties, required, additionalProperties: false }
  for (const ps of ast.propertySignatures) {
    if (typeof ps.name !== "string") return unsupported(path.concat(ps.name), "a symbol or number key")
    const { hadUndefined, type } = withoutUndefined(ps.type)
    const propertyPath = path.concat(ps.name)
    properties[ps.name] = withAnnotations(go(type, propertyPath, walk), ps)
    if (!ps.isOptional && !hadUndefined) required.push(ps.name)
  }
  for (const is of ast.indexSignatures) {
    const value = go(withoutUndefined(is.type).type, path.concat("*"), walk)
    const parameter = is.parameter
    switch (parameter._tag) {
      case "StringKeyword":
        out.additionalProperties = value
        break
      case "TemplateLiteral":
        delete out.additionalProperties
        out.patternProperties = { [AST.getTemplateLiteralRegExp(parameter).source]: value }
        out.additionalProperties = false
        break
      case "Refinement":
        out.additionalProperties = value
        out.propertyNames = go(parameter, path, walk)
        break
      default:
        return unsupported(path, "a record with symbol keys")
    }
  }
  return out
}

const isNullSchema = (s: JsonSchema): boolean => s.type === "null" && Object.keys(s).length === 1

const unionSchema = (ast: AST.Union, path: ReadonlyArray<PropertyKey>, walk: Walk): JsonSchema => {
  const members: Array<JsonSchema> = []
  for (const type of ast.types) {
    const member = go(type, path, walk)
    if (isNever(member)) continue
    if (Object.keys(member).length === 0) return {}
    const last = members[members.length - 1]
    // Consecutive literals of one type become one enum: `"a" | "b"` is served as `{ type, enum: [a, b] }`.
    if (last !== undefined && isPlainEnum(last) && isPlainEnum(member) && last.type === member.type) {
      members[members.length - 1] = {
        type: last.type,
        enum: [...(last.enum as Array<unknown>), ...(member.enum as Array<unknown>)]
      }
      continue
    }
    members.push(member)
  }
  if (members.length === 0) return { not: {} }
  if (members.length === 1) return members[0]
  // null last, so a nullable value reads `anyOf [T, {type: "null"}]` whatever order it was declared in
  const nulls = members.filter(isNullSchema)
  return { anyOf: [...members.filter((m) => !isNullSchema(m)), ...nulls.slice(0, 1)] }
}

const isNever = (s: JsonSchema): boolean =>
  Object.keys(s).length === 1 && typeof s.not === "object" && s.not !== null && Object.keys(s.not).length === 0

const isPlainEnum = (s: JsonSchema): boolean =>
  Array.isArray(s.enum) && typeof s.type === "string" && Object.keys(s).length === 2

/** A `Schema.Class` is a transformation to a declaration with a surrogate; its annotations sit on the declaration. */
const isClassDeclaration = (ast: AST.AST): boolean =>
  AST.isDeclaration(ast) && Option.isSome(AST.getSurrogateAnnotation(ast))

const transformationSchema = (ast: AST.Transformation, path: ReadonlyArray<PropertyKey>, walk: Walk): JsonSchema => {
  if (ast.from.annotations[AST.SchemaIdAnnotationId] === ParseJsonSchemaId) {
    return withAnnotations({ type: "string", contentMediaType: "application/json" }, ast)
  }
  let from = go(ast.from, path, walk)
  if (isDateDeclaration(ast.to) && from.type === "string") {
    from = { ...from, format: "date-time" }
    delete from.description
  }
  const encoding = stringEncodings.get(ast.transformation)
  if (encoding !== undefined && from.type === "string") from = mergeConstraints(from, encoding)
  if (ast.transformation._tag === "TypeLiteralTransformation" && typeof from.properties === "object") {
    // Descriptions written on the decoded side's properties (`optionalWith(..., { default })` fields, renamed keys)
    // belong to the encoded property the model fills in. One written on the property itself is the author's word
    // and wins over the encoded type's own (which may be a built-in one such as Int's "an integer").
    const to = AST.typeAST(ast.to)
    if (AST.isTypeLiteral(to)) {
      const properties = { ...(from.properties as JsonSchema) }
      for (const t of ast.transformation.propertySignatureTransformations) {
        const target = to.propertySignatures.find((ps) => ps.name === t.to)
        const current = properties[t.from as string] as JsonSchema | undefined
        if (target === undefined || current === undefined) continue
        const own = Option.getOrUndefined(AST.getDescriptionAnnotation(target))
        const description = own ?? (current.description === undefined ? descriptionOf(target.type) : undefined)
        if (description !== undefined) properties[t.from as string] = { ...current, description }
      }
      from = { ...from, properties }
    }
  }
  const description = descriptionOf(ast) ??
    (isClassDeclaration(ast.to) ? Option.getOrUndefined(AST.getDescriptionAnnotation(ast.to)) : undefined)
  return description === undefined ? from : { ...from, description }
}

/**
 * The standard (draft 2020-12) projection of a parameters AST: an object root with `type`, `properties` and
 * `required`, no `$schema`/`$id`/auto titles, named sub-schemas inlined and `$defs` only for recursion.
 */
export const standard = (ast: AST.AST): JsonSchema => {
  const walk: Walk = { defs: new Map(), visiting: new Map(), usedNames: new Set() }
  let root = go(ast, [], walk)
  if (typeof root.$ref === "string") {
    // the root itself is recursive: serve its body at the root and keep the definition for inner references
    const name = root.$ref.slice("#/$defs/".length)
    root = { ...walk.defs.get(name)! }
  }
  if (root.type !== "object" || typeof root.properties !== "object") {
    throw new UnsupportedSchemaError(
      "",
      "parameters must be an object schema (Struct fields, a Struct, or a Class); a union or a primitive cannot be " +
        "the root of a tool's arguments"
    )
  }
  if (walk.defs.size > 0) root.$defs = Object.fromEntries(walk.defs)
  return root
}

/** A JSON Schema of any value (for `success` schemas, which need not be objects). */
export const anyValue = (ast: AST.AST): JsonSchema => {
  const walk: Walk = { defs: new Map(), visiting: new Map(), usedNames: new Set() }
  const root = go(ast, [], walk)
  return walk.defs.size > 0 ? { ...root, $defs: Object.fromEntries(walk.defs) } : root
}

// ---------------------------------------------------------------------------------------------------------------
// target projections, derived from the standard one (jsonSchemaTargets.ts)
// ---------------------------------------------------------------------------------------------------------------

/** The projection for a target, from the standard one. Throws `UnsupportedSchemaError` for what it refuses. */
export const project = (standardSchema: JsonSchema, target: Target): JsonSchema =>
  target === "standard" ? standardSchema : Targets.project(standardSchema, target)
