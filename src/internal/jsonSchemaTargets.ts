/**
 * The `"openai-strict"` and `"gemini"` projections, from a tool's standard JSON Schema: ours (an Effect Schema
 * served by `jsonSchema.ts`) or anyone's (`Tool.fromJsonSchema`: what MCP servers and stdio providers serve, in
 * draft-07 or 2020-12, with `$ref`s, type arrays, `oneOf`, `allOf`, formats and keywords no provider reads).
 *
 * Whatever comes in, what comes out is in the subset the provider accepts, or the projection refuses with an
 * `UnsupportedSchemaError` naming the path and the reason. The subsets, as the providers document them (and as
 * test/fixtures/providerSubsets.ts checks them):
 *
 * OpenAI structured outputs (`strict: true`):
 * - the root is an object (not a union); every object lists all its properties in `required` and has
 *   `additionalProperties: false` (an optional property is served nullable: a type array `[T, "null"]`, or
 *   `anyOf [T, {type: "null"}]`);
 * - keywords: `type` (a name or an array of names), `properties`, `required`, `additionalProperties`, `items`,
 *   `anyOf`, `enum`, `description`, `title`, `$defs`/`$ref` (to `#` or `#/$defs/...`), and the constraints
 *   `pattern`, `format` (date-time, time, date, duration, email, hostname, ipv4, ipv6, uuid), `multipleOf`,
 *   `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `minItems`, `maxItems`; nothing else (no
 *   `$schema`, `oneOf`, `allOf`, `not`, `const`, `default`, `minLength`, `patternProperties`...);
 * - at most 10 levels of nested objects, 5,000 properties, 1,000 enum values.
 *
 * Gemini function declarations (a select subset of the OpenAPI 3.0 schema object):
 * - `type` one of `string`, `number`, `integer`, `boolean`, `array`, `object`, a single value (null is
 *   `nullable: true`), or `anyOf` of such schemas;
 * - keywords: `type`, `format` (strings: `enum`, `date-time`; integers: `int32`, `int64`; numbers: `float`,
 *   `double`), `description`, `nullable`, `enum` (strings only), `properties`, `required`, `items`, `anyOf`,
 *   `minimum`, `maximum`, `minItems`, `maxItems`, `minLength`, `maxLength`, `pattern`, `minProperties`,
 *   `maxProperties`; no `$ref`, no `additionalProperties`;
 * - an object has at least one property (the root of a tool without parameters is left out altogether, see
 *   `ToolDefinition.gemini`), an array has `items`.
 *
 * How a schema gets there, in order:
 * 1. local `$ref`s (`#/$defs/x`, `#/definitions/x`, any JSON pointer into the schema) are inlined; only a
 *    recursive one stays, as `#/$defs/<name>` (refused for Gemini). The inlined result is bounded
 *    ({@link MAX_NODES}), so a schema that references itself into a billion copies is refused, not built;
 * 2. draft-07 spellings become 2020-12 ones (`definitions`, tuple `items`, `dependencies`), OpenAPI's
 *    `nullable: true` becomes a type with `null`, `allOf` is merged into one schema, `oneOf` is read as `anyOf`,
 *    `const` as a one-value `enum`, a type array as a union;
 * 3. the target's own rules: constraints it does not take are left out (the tool's decoder still checks them: the
 *    model gets an `invalid arguments` line for what the served schema let through), what it cannot express at
 *    all is refused: an unconstrained value, a record (an object with arbitrary keys), a tuple, `never`, and for
 *    Gemini recursion and an object without properties.
 *
 * A strict projection makes optional properties nullable: the decoder of every tool maps a `null` sent for an
 * optional property that does not itself admit null back to "absent" (Schema-backed strict tools in `tool.ts`,
 * JSON-Schema tools in `ajv.ts`).
 *
 * @internal
 */
import type { JsonSchema } from "./jsonSchema.js"
import { formatPath, UnsupportedSchemaError } from "./jsonSchema.js"

/** The most schema nodes a projection builds once `$ref`s are inlined; a larger schema is refused. */
export const MAX_NODES = 10_000

/** OpenAI's limits on a strict schema. */
export const OPENAI_MAX_DEPTH = 10
export const OPENAI_MAX_PROPERTIES = 5_000
export const OPENAI_MAX_ENUM_VALUES = 1_000

/** The string formats OpenAI strict mode takes. */
export const OPENAI_FORMATS: ReadonlySet<string> = new Set([
  "date-time",
  "time",
  "date",
  "duration",
  "email",
  "hostname",
  "ipv4",
  "ipv6",
  "uuid"
])

/** The formats Gemini takes, by type. */
export const GEMINI_FORMATS: Readonly<Record<string, ReadonlySet<string>>> = {
  string: new Set(["enum", "date-time"]),
  integer: new Set(["int32", "int64"]),
  number: new Set(["float", "double"])
}

type Path = ReadonlyArray<PropertyKey>

const refuse = (path: Path, reason: string): never => {
  throw new UnsupportedSchemaError(formatPath(path), reason)
}

const isObject = (u: unknown): u is JsonSchema => typeof u === "object" && u !== null && !Array.isArray(u)

/** Keywords whose value is a schema, a map of schemas, or an array of schemas (2020-12 and draft-07). */
const SCHEMA_KEYS = new Set([
  "items",
  "additionalItems",
  "additionalProperties",
  "not",
  "if",
  "then",
  "else",
  "contains",
  "propertyNames",
  "unevaluatedItems",
  "unevaluatedProperties"
])
const SCHEMA_MAP_KEYS = new Set(["properties", "patternProperties", "dependentSchemas"])
const SCHEMA_ARRAY_KEYS = new Set(["anyOf", "oneOf", "allOf", "prefixItems"])

/** Keywords that say nothing about which values are valid: never carried into a target. */
const DROPPED_EVERYWHERE = new Set([
  "$schema",
  "$id",
  "$anchor",
  "$dynamicAnchor",
  "$comment",
  "$vocabulary",
  "definitions",
  "$defs",
  "deprecated",
  "readOnly",
  "writeOnly",
  "examples",
  "example",
  "default",
  "contentMediaType",
  "contentEncoding",
  "contentSchema"
])

// ---------------------------------------------------------------------------------------------------------------
// step 1 and 2: one self-contained schema in 2020-12 spelling, references inlined
// ---------------------------------------------------------------------------------------------------------------

const unescapePointer = (segment: string): string => {
  let decoded = segment
  try {
    decoded = decodeURIComponent(segment)
  } catch {
    // not percent-encoded
  }
  return decoded.replace(/~1/g, "/").replace(/~0/g, "~")
}

interface Resolving {
  readonly root: JsonSchema
  /** Definitions kept for recursion, by name. */
  readonly defs: Map<string, JsonSchema>
  /** Pointers being inlined (the current chain), with the name given once one is found to recurse. */
  readonly chain: Map<string, { name: string | undefined }>
  readonly names: Set<string>
  /** Nodes built so far, against {@link MAX_NODES}. */
  nodes: number
}

const pointerTarget = (resolving: Resolving, ref: string, path: Path): unknown => {
  if (!ref.startsWith("#")) {
    return refuse(path, `a $ref to ${JSON.stringify(ref)} (outside the schema) cannot be followed`)
  }
  let target: unknown = resolving.root
  const pointer = ref.slice(1)
  if (pointer !== "") {
    if (!pointer.startsWith("/")) return refuse(path, `a $ref to ${JSON.stringify(ref)} cannot be followed`)
    for (const segment of pointer.slice(1).split("/")) {
      const key = unescapePointer(segment)
      target = Array.isArray(target) ? target[Number(key)] : isObject(target) ? target[key] : undefined
      if (target === undefined) return refuse(path, `a $ref to ${JSON.stringify(ref)} points at nothing`)
    }
  }
  return target
}

const defName = (resolving: Resolving, ref: string): string => {
  const last = ref === "#" ? "Root" : ref.slice(ref.lastIndexOf("/") + 1)
  const base = unescapePointer(last).replace(/[^A-Za-z0-9_.-]/g, "_") || "Recursive"
  let name = base
  for (let i = 2; resolving.names.has(name); i++) name = `${base}${i}`
  resolving.names.add(name)
  return name
}

const resolveRef = (resolving: Resolving, node: JsonSchema, path: Path): JsonSchema => {
  const ref = node.$ref as string
  const entry = resolving.chain.get(ref)
  if (entry !== undefined) {
    entry.name ??= defName(resolving, ref)
    return { $ref: `#/$defs/${entry.name}` }
  }
  const mine: { name: string | undefined } = { name: undefined }
  resolving.chain.set(ref, mine)
  const target = resolveNode(resolving, pointerTarget(resolving, ref, path), path)
  resolving.chain.delete(ref)
  if (mine.name !== undefined) {
    resolving.defs.set(mine.name, target)
    return { $ref: `#/$defs/${mine.name}` }
  }
  // siblings of a $ref (2020-12 allows them) apply too: the description of the use wins over the definition's
  const { $ref: _ref, ...siblings } = node
  return Object.keys(siblings).length === 0 ? target : resolveNode(resolving, { allOf: [target, siblings] }, path)
}

/** A schema with every local reference inlined (recursive ones kept in `defs`), in 2020-12 spelling. */
const resolveNode = (resolving: Resolving, schema: unknown, path: Path): JsonSchema => {
  if (++resolving.nodes > MAX_NODES) {
    return refuse([], `the schema is too large to serve (more than ${MAX_NODES} nodes once its $refs are inlined)`)
  }
  if (schema === true) return {}
  if (schema === false) return { not: {} }
  if (!isObject(schema)) return refuse(path, "a schema must be an object or a boolean")
  if (typeof schema.$ref === "string") return resolveRef(resolving, schema, path)
  const out: JsonSchema = {}
  for (const [key, value] of Object.entries(schema)) {
    if (key === "$defs" || key === "definitions" || key === "$ref") continue
    if (key === "items" && Array.isArray(value)) {
      // draft-07's tuple form
      out.prefixItems = value.map((item, i) => resolveNode(resolving, item, [...path, i]))
    } else if (key === "additionalItems") {
      if (Array.isArray(schema.items)) out.items = resolveNode(resolving, value, path)
    } else if (key === "dependencies" && isObject(value)) {
      const schemas: JsonSchema = {}
      for (const [name, dependency] of Object.entries(value)) {
        if (!Array.isArray(dependency)) schemas[name] = resolveNode(resolving, dependency, path)
      }
      if (Object.keys(schemas).length > 0) out.dependentSchemas = schemas
    } else if (SCHEMA_KEYS.has(key)) {
      // `additionalProperties: false` and its kin keep their boolean: it reads more plainly than `{not: {}}`
      out[key] = typeof value === "boolean"
        ? value
        : resolveNode(resolving, value, key === "items" ? [...path, 0] : path)
    } else if (SCHEMA_MAP_KEYS.has(key) && isObject(value)) {
      const map: JsonSchema = {}
      for (const [name, sub] of Object.entries(value)) {
        map[name] = resolveNode(resolving, sub, key === "properties" ? [...path, name] : path)
      }
      out[key] = map
    } else if (SCHEMA_ARRAY_KEYS.has(key) && Array.isArray(value)) {
      out[key] = value.map((sub, i) => resolveNode(resolving, sub, key === "prefixItems" ? [...path, i] : path))
    } else {
      out[key] = value
    }
  }
  if (out.nullable === true) {
    delete out.nullable
    return withNullType(out)
  }
  delete out.nullable
  return out
}

/** `nullable: true` (OpenAPI) as JSON Schema says it: `null` among the types. */
const withNullType = (schema: JsonSchema): JsonSchema => {
  const type = schema.type
  if (typeof type === "string") return type === "null" ? schema : { ...schema, type: [type, "null"] }
  if (Array.isArray(type)) return type.includes("null") ? schema : { ...schema, type: [...type, "null"] }
  return { anyOf: [schema, { type: "null" }] }
}

const resolve = (schema: JsonSchema): { readonly root: JsonSchema; readonly defs: Map<string, JsonSchema> } => {
  const resolving: Resolving = { root: schema, defs: new Map(), chain: new Map(), names: new Set(), nodes: 0 }
  let root = resolveNode(resolving, schema, [])
  if (typeof root.$ref === "string") {
    // the root itself recurses: its body is served at the root, the definition kept for the inner references
    root = { ...resolving.defs.get(root.$ref.slice("#/$defs/".length))! }
  }
  return { root, defs: resolving.defs }
}

// ---------------------------------------------------------------------------------------------------------------
// shared readings of a resolved schema
// ---------------------------------------------------------------------------------------------------------------

const isAnnotationOnly = (schema: JsonSchema): boolean =>
  Object.keys(schema).every((key) => key === "description" || key === "title" || DROPPED_EVERYWHERE.has(key))

const isNever = (schema: JsonSchema): boolean => isObject(schema.not) && Object.keys(schema.not).length === 0

const isNullSchema = (schema: JsonSchema): boolean => schema.type === "null" && Object.keys(schema).length === 1

const typesOf = (schema: JsonSchema): Array<string> | undefined =>
  typeof schema.type === "string" ? [schema.type] : Array.isArray(schema.type) ? schema.type.map(String) : undefined

/** Whether a resolved schema takes `null` (so an optional property of it needs no `null` added). */
export const admitsNull = (schema: JsonSchema): boolean => {
  if (isAnnotationOnly(schema)) return true
  const types = typesOf(schema)
  if (types !== undefined) return types.includes("null")
  if (Array.isArray(schema.enum)) return schema.enum.includes(null)
  if ("const" in schema) return schema.const === null
  for (const key of ["anyOf", "oneOf"] as const) {
    const members = schema[key]
    if (Array.isArray(members) && members.some((m) => isObject(m) && admitsNull(m))) return true
  }
  return false
}

const TYPE_KEYWORDS: Readonly<Record<string, ReadonlyArray<string>>> = {
  string: ["minLength", "maxLength", "pattern", "format"],
  number: ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "format"],
  integer: ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "format"],
  array: ["items", "prefixItems", "minItems", "maxItems", "uniqueItems", "contains"],
  object: [
    "properties",
    "required",
    "additionalProperties",
    "patternProperties",
    "propertyNames",
    "minProperties",
    "maxProperties"
  ]
}

const ALL_TYPE_KEYWORDS = new Set(Object.values(TYPE_KEYWORDS).flat())

/** A schema with several types (`type: [A, B]`, or none but keywords of several) as a union of one type each. */
const splitTypes = (schema: JsonSchema, types: ReadonlyArray<string>): JsonSchema => {
  const shared: JsonSchema = {}
  for (const [key, value] of Object.entries(schema)) {
    if (key !== "type" && !ALL_TYPE_KEYWORDS.has(key) && key !== "enum") shared[key] = value
  }
  const members = types.map((type) => {
    const member: JsonSchema = { type }
    for (const key of TYPE_KEYWORDS[type] ?? []) if (key in schema) member[key] = schema[key]
    if (Array.isArray(schema.enum)) {
      const values = schema.enum.filter((v) => jsonTypeOf(v) === type || (type === "number" && Number.isInteger(v)))
      if (values.length > 0) member.enum = values
    }
    return member
  })
  return { ...shared, anyOf: members }
}

const jsonTypeOf = (value: unknown): string =>
  value === null
    ? "null"
    : Array.isArray(value)
    ? "array"
    : typeof value === "number"
    ? (Number.isInteger(value) ? "integer" : "number")
    : typeof value

/** The type of an `enum` (or `const`) without one: from its values. */
const enumTypes = (values: ReadonlyArray<unknown>): Array<string> => {
  const types = [...new Set(values.map(jsonTypeOf))]
  // an integer is a number too: one `number` where both occur
  return types.includes("number") ? types.filter((t) => t !== "integer") : types
}

/** A union member that constrains an object without saying what it is (no type, no properties). */
const isConstraintOnly = (member: unknown): boolean =>
  isObject(member) && member.type === undefined && member.properties === undefined && member.$ref === undefined &&
  member.enum === undefined && member.const === undefined && member.anyOf === undefined

const strictest = (key: string, a: number, b: number): number =>
  key.startsWith("min") || key === "exclusiveMinimum" ? Math.max(a, b) : Math.min(a, b)

const NUMERIC_BOUNDS = new Set([
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "minLength",
  "maxLength",
  "minItems",
  "maxItems",
  "minProperties",
  "maxProperties"
])

/**
 * `allOf` as one schema: properties merged (a property in several members is the merge of its schemas), `required`
 * joined, types intersected, bounds made the strictest; where two members say different things a target cannot
 * say both (two patterns), the first is kept and the decoder checks the rest.
 */
const mergeAll = (members: ReadonlyArray<JsonSchema>, path: Path): JsonSchema => {
  const out: JsonSchema = {}
  for (const member of members) {
    for (const [key, value] of Object.entries(member)) {
      const existing = out[key]
      if (existing === undefined) {
        out[key] = value
      } else if (key === "properties" && isObject(existing) && isObject(value)) {
        const properties: JsonSchema = { ...existing }
        for (const [name, sub] of Object.entries(value)) {
          properties[name] = properties[name] === undefined
            ? sub
            : mergeAll([properties[name] as JsonSchema, sub as JsonSchema], [...path, name])
        }
        out.properties = properties
      } else if (key === "required" && Array.isArray(existing) && Array.isArray(value)) {
        out.required = [...new Set([...existing, ...value])]
      } else if (key === "type") {
        const a = typesOf({ type: existing })!
        const b = typesOf({ type: value })!
        const both = a.filter((t) => b.includes(t) || (t === "integer" && b.includes("number")))
          .concat(b.filter((t) => t === "integer" && a.includes("number") && !b.includes("number")))
        if (both.length === 0) return refuse(path, "an allOf of types no value has at once cannot be served")
        out.type = both.length === 1 ? both[0] : both
      } else if (key === "enum" && Array.isArray(existing) && Array.isArray(value)) {
        const common = existing.filter((v) => value.some((w) => JSON.stringify(w) === JSON.stringify(v)))
        if (common.length === 0) return refuse(path, "an allOf of enums with no value in common cannot be served")
        out.enum = common
      } else if (NUMERIC_BOUNDS.has(key) && typeof existing === "number" && typeof value === "number") {
        out[key] = strictest(key, existing, value)
      } else if (key === "allOf" && Array.isArray(existing) && Array.isArray(value)) {
        out.allOf = [...existing, ...value]
      }
      // anything else said twice: the first member's word is served, the decoder checks both
    }
  }
  return out
}

/**
 * The keyword forms every target reads the same way: `allOf` merged, `oneOf` as `anyOf`, `const` as a one-value
 * `enum`, an enum's type read from its values, several types as a union of one each.
 */
const canonicalForm = (schema: JsonSchema, path: Path): JsonSchema => {
  let node = schema
  while (Array.isArray(node.allOf)) {
    const { allOf, ...rest } = node
    node = mergeAll([rest, ...(allOf as Array<JsonSchema>)], path)
  }
  if (Array.isArray(node.oneOf)) {
    const { oneOf, ...rest } = node
    node = Array.isArray(rest.anyOf)
      ? mergeAll([rest, { anyOf: oneOf }], path)
      : { ...rest, anyOf: oneOf }
  }
  if (isObject(node.properties) && Array.isArray(node.anyOf) && node.anyOf.every(isConstraintOnly)) {
    // `oneOf: [{required: ["a"]}, {required: ["b"]}]` beside the properties: which ones must come, not what they
    // are; no target can say it, the decoder checks it
    const { anyOf: _anyOf, ...rest } = node
    node = rest
  }
  if ("const" in node) {
    const { const: value, ...rest } = node
    node = { ...rest, enum: [value] }
  }
  if (Array.isArray(node.enum) && node.type === undefined) {
    const types = enumTypes(node.enum)
    node = { ...node, type: types.length === 1 ? types[0] : types }
  }
  const types = typesOf(node)
  if (types !== undefined && types.filter((t) => t !== "null").length > 1) {
    node = splitTypes(node, types)
  } else if (types === undefined && !Array.isArray(node.anyOf)) {
    // no type, but keywords of one (a `properties` alone is an object)
    const implied = Object.keys(TYPE_KEYWORDS).filter((type) =>
      TYPE_KEYWORDS[type].some((key) => key !== "format" && key in node)
    )
    const distinct = implied.includes("number") ? implied.filter((t) => t !== "integer") : implied
    if (distinct.length === 1) node = { ...node, type: distinct[0] }
  }
  return node
}

// ---------------------------------------------------------------------------------------------------------------
// openai-strict
// ---------------------------------------------------------------------------------------------------------------

const STRICT_KEYS = new Set([
  "type",
  "properties",
  "required",
  "additionalProperties",
  "items",
  "anyOf",
  "enum",
  "description",
  "title",
  "$ref",
  "pattern",
  "format",
  "multipleOf",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "minItems",
  "maxItems"
])

/** An optional property, nullable: `null` last, in `enum` too (an assertion of its own). */
const withNull = (schema: JsonSchema): JsonSchema => {
  if (admitsNull(schema)) return schema
  const { description, ...rest } = schema
  let out: JsonSchema
  if (Array.isArray(rest.enum) && typeof rest.type === "string") {
    out = { ...rest, type: [rest.type, "null"], enum: [...rest.enum, null] }
  } else if (Array.isArray(rest.anyOf)) {
    out = { ...rest, anyOf: [...rest.anyOf, { type: "null" }] }
  } else {
    out = { anyOf: [rest, { type: "null" }] }
  }
  if (description !== undefined) out.description = description
  return out
}

interface StrictWalk {
  /** Objects nested in the current one, for OpenAI's depth limit. */
  depth: number
  properties: number
  enumValues: number
}

const toStrict = (input: JsonSchema, path: Path, walk: StrictWalk): JsonSchema => {
  if (typeof input.$ref === "string") return { $ref: input.$ref }
  const schema = canonicalForm(input, path)
  if (isAnnotationOnly(schema)) {
    return refuse(path, "an unconstrained value (Schema.Unknown) is refused under strict mode")
  }
  if (isNever(schema)) return refuse(path, "`never` is refused under strict mode")
  if ("prefixItems" in schema) return refuse(path, "a tuple is refused under strict mode; use an array or a struct")
  const types = typesOf(schema) ?? []
  const object = types.includes("object")
  if (object) checkObject(schema, path, walk)
  // keys in the order the schema has them (what a golden file of ours pins)
  const out: JsonSchema = {}
  for (const [key, value] of Object.entries(schema)) {
    if (!STRICT_KEYS.has(key)) continue
    switch (key) {
      case "properties":
        if (object) strictProperties(schema, out, path, walk)
        break
      case "required":
        break
      case "additionalProperties":
        if (object) out.additionalProperties = false
        break
      case "items":
        if (isObject(value)) out.items = toStrict(value, [...path, 0], walk)
        break
      case "anyOf":
        out.anyOf = (value as Array<JsonSchema>).map((member) => toStrict(member, path, walk))
        break
      case "format":
        if (typeof value === "string" && OPENAI_FORMATS.has(value)) out.format = value
        break
      case "enum":
        walk.enumValues += (value as Array<unknown>).length
        out.enum = value
        break
      default:
        out[key] = value
    }
  }
  if (object) {
    if (out.properties === undefined) strictProperties(schema, out, path, walk)
    out.additionalProperties = false
    walk.depth--
  }
  if (types.includes("array") && !isObject(out.items)) {
    return refuse(path, "an array whose items are unconstrained is refused under strict mode")
  }
  if (out.type === undefined && out.anyOf === undefined && out.enum === undefined) {
    return refuse(path, "a value of no stated type is refused under strict mode")
  }
  return out
}

/** An object strict mode can take: declared properties (or none at the root), no others; within the limits. */
const checkObject = (schema: JsonSchema, path: Path, walk: StrictWalk): void => {
  const declared = isObject(schema.properties) ? Object.keys(schema.properties).length : 0
  const open = (schema.additionalProperties !== undefined && schema.additionalProperties !== false) ||
    "patternProperties" in schema || "propertyNames" in schema
  // `{type: "object"}` alone under a property is any object: a record as much as one with additionalProperties
  if (declared === 0 && (open || (path.length > 0 && schema.additionalProperties !== false))) {
    return refuse(
      path,
      "a record (an object with arbitrary keys) is refused under strict mode; use a struct or an array of entries"
    )
  }
  if (++walk.depth > OPENAI_MAX_DEPTH) {
    return refuse(path, `objects nested more than ${OPENAI_MAX_DEPTH} deep are refused under strict mode`)
  }
}

/** Every property, each in `required`; the optional ones nullable. */
const strictProperties = (schema: JsonSchema, out: JsonSchema, path: Path, walk: StrictWalk): void => {
  const declared = isObject(schema.properties) ? schema.properties : {}
  const required = new Set(Array.isArray(schema.required) ? schema.required : [])
  const properties: JsonSchema = {}
  for (const [name, property] of Object.entries(declared)) {
    if (++walk.properties > OPENAI_MAX_PROPERTIES) {
      return refuse([], `more than ${OPENAI_MAX_PROPERTIES} properties are refused under strict mode`)
    }
    const strict = toStrict(property as JsonSchema, [...path, name], walk)
    properties[name] = required.has(name) ? strict : withNull(strict)
  }
  out.properties = properties
  out.required = Object.keys(properties)
}

const projectStrict = (standard: JsonSchema): JsonSchema => {
  const { defs, root } = resolve(standard)
  if (!typesOf(root)?.includes("object") && !isObject(root.properties)) {
    return refuse([], "the root of a strict schema must be one object schema")
  }
  const walk: StrictWalk = { depth: 0, properties: 0, enumValues: 0 }
  const out = toStrict(root, [], walk)
  if (defs.size > 0) {
    out.$defs = Object.fromEntries([...defs].map(([name, def]) => [name, toStrict(def, [], walk)]))
  }
  if (walk.enumValues > OPENAI_MAX_ENUM_VALUES) {
    return refuse([], `more than ${OPENAI_MAX_ENUM_VALUES} enum values in all are refused under strict mode`)
  }
  return out
}

// ---------------------------------------------------------------------------------------------------------------
// gemini
// ---------------------------------------------------------------------------------------------------------------

const GEMINI_KEYS = new Set([
  "type",
  "format",
  "description",
  "nullable",
  "enum",
  "maxItems",
  "minItems",
  "properties",
  "required",
  "minLength",
  "maxLength",
  "pattern",
  "anyOf",
  "items",
  "minimum",
  "maximum",
  "minProperties",
  "maxProperties"
])

const GEMINI_TYPES = new Set(["string", "number", "integer", "boolean", "array", "object"])

const toGemini = (input: JsonSchema, path: Path): JsonSchema => {
  if (typeof input.$ref === "string") {
    return refuse(path, "a recursive schema is refused for Gemini, which has no $ref")
  }
  let schema = canonicalForm(input, path)
  if (isAnnotationOnly(schema)) {
    return refuse(path, "an unconstrained value (Schema.Unknown) is refused for Gemini")
  }
  if (isNever(schema)) return refuse(path, "`never` is refused for Gemini")
  if ("prefixItems" in schema) return refuse(path, "a tuple is refused for Gemini; use an array or a struct")
  // null is `nullable: true`: among the types, or as a member of a union
  let nullable = false
  const types = typesOf(schema)
  if (types !== undefined && types.includes("null") && types.length > 1) {
    nullable = true
    const rest = types.filter((t) => t !== "null")
    schema = {
      ...schema,
      type: rest[0],
      ...(Array.isArray(schema.enum) ? { enum: schema.enum.filter((v) => v !== null) } : {})
    }
  }
  if (Array.isArray(schema.anyOf)) {
    const members = (schema.anyOf as Array<JsonSchema>).map((m) => canonicalForm(m, path))
    const present = members.filter((m) => !isNullSchema(m))
    if (present.length < members.length) nullable = true
    if (present.length === 0) return refuse(path, "a value that can only be null is refused for Gemini")
    const { anyOf: _anyOf, ...outer } = schema
    // one member left, and nothing beside the union that Gemini would be served: the member itself
    if (present.length === 1 && Object.keys(outer).every((k) => k === "description" || !GEMINI_KEYS.has(k))) {
      const inner = toGemini(present[0], path)
      const out: JsonSchema = nullable ? { ...inner, nullable: true } : { ...inner }
      if (schema.description !== undefined) out.description = schema.description
      return out
    }
    schema = { ...outer, anyOf: present }
  }
  const out: JsonSchema = {}
  for (const [key, value] of Object.entries(schema)) {
    if (!GEMINI_KEYS.has(key)) continue
    switch (key) {
      case "properties":
        out.properties = Object.fromEntries(
          Object.entries(value as JsonSchema).map(([name, p]) => [name, toGemini(p as JsonSchema, [...path, name])])
        )
        break
      case "required":
        if (Array.isArray(value)) {
          const declared = isObject(schema.properties) ? schema.properties : {}
          out.required = value.filter((name): name is string => typeof name === "string" && name in declared)
        }
        break
      case "items":
        if (isObject(value)) out.items = toGemini(value, [...path, 0])
        break
      case "anyOf":
        out.anyOf = (value as Array<JsonSchema>).map((member) => toGemini(member, path))
        break
      case "format":
        break
      case "nullable":
        break
      default:
        out[key] = value
    }
  }
  if (typeof out.type === "string" && !GEMINI_TYPES.has(out.type)) {
    return refuse(path, `a value of type ${JSON.stringify(out.type)} is refused for Gemini`)
  }
  const format = schema.format
  if (typeof format === "string" && typeof out.type === "string" && GEMINI_FORMATS[out.type]?.has(format)) {
    out.format = format
  }
  if (out.type === "object") geminiObject(schema, out, path)
  if (out.type === "array" && !isObject(out.items)) {
    return refuse(path, "an array whose items are unconstrained is refused for Gemini")
  }
  if (Array.isArray(out.enum) && (out.type !== "string" || !out.enum.every((v) => typeof v === "string"))) {
    // Gemini takes `enum` on strings only and refuses the whole declaration otherwise: the allowed values move to
    // the description, and the decoder still enforces them.
    const allowed = `one of ${out.enum.map((v) => JSON.stringify(v)).join(", ")}`
    delete out.enum
    out.description = typeof out.description === "string" ? `${out.description} (${allowed})` : allowed
  }
  if (out.type === undefined && out.anyOf === undefined) {
    return refuse(path, "a value of no stated type is refused for Gemini")
  }
  return withNullable(out, nullable)
}

const withNullable = (schema: JsonSchema, nullable: boolean): JsonSchema =>
  nullable ? { ...schema, nullable: true } : schema

const geminiObject = (schema: JsonSchema, out: JsonSchema, path: Path): void => {
  const properties = isObject(out.properties) ? out.properties : {}
  const open = isObject(schema.additionalProperties) || schema.additionalProperties === true ||
    "patternProperties" in schema || "propertyNames" in schema
  if (Object.keys(properties).length === 0 && path.length > 0) {
    // Gemini has no `additionalProperties`, and refuses an object with no properties
    return refuse(
      path,
      open
        ? "a record (an object with arbitrary keys) is refused for Gemini"
        : "an object with no properties is refused for Gemini"
    )
  }
  out.properties = properties
}

const projectGemini = (standard: JsonSchema): JsonSchema => {
  const { defs, root } = resolve(standard)
  if (defs.size > 0) return refuse([], "a recursive schema is refused for Gemini, which has no $ref")
  if (!typesOf(root)?.includes("object") && !isObject(root.properties)) {
    return refuse([], "the root of a Gemini schema must be one object schema")
  }
  const out = toGemini(root, [])
  if (out.type !== "object") return refuse([], "the root of a Gemini schema must be one object schema")
  return out
}

/** The projection for a target, from the standard one. Throws `UnsupportedSchemaError` for what it refuses. */
export const project = (standard: JsonSchema, target: "openai-strict" | "gemini"): JsonSchema =>
  target === "openai-strict" ? projectStrict(standard) : projectGemini(standard)
