/**
 * Validation of arguments against a raw JSON Schema (remote tools, `Tool.fromJsonSchema`), with the same problem
 * lines as Schema-backed tools.
 *
 * Ajv holds on to what it compiled: its cache is keyed by schema object (a refreshed tool list is new objects with
 * the same content, compiled again and kept again), and its generated code reads every schema and validator from
 * a scope that only grows. So that memory follows the tools alive, not every tool list ever seen:
 * - each tool owns its compiled validator, and the validator goes with the tool;
 * - identical schemas (same draft, same canonical JSON) share one validator through a cache of at most
 *   {@link MAX_CACHED_VALIDATORS}, least recently used dropped first, so a refresh recompiles nothing;
 * - Ajv's cache by object is emptied after each compilation, and an instance compiles at most
 *   {@link COMPILATIONS_PER_INSTANCE} schemas before a new one takes over, the old one going with its last
 *   validator.
 *
 * Compiling is the expensive part (about 4 ms for a small schema, 60 times what checking it against its
 * meta-schema costs; a fresh Ajv per schema would cost 30 ms): a tool checks its schema against the meta-schema
 * when it is made, so a broken schema is still refused at construction, and compiles it on its first call.
 *
 * `pattern` and `patternProperties` run on RE2 (re2js), in time linear in the input: a remote server's
 * `^(a+)+$` cannot freeze the host, where JavaScript's backtracking engine takes minutes. A pattern RE2 cannot
 * compile (a lookahead, a backreference) is not checked: the server that wrote it still checks its own input.
 *
 * @internal
 */
import type { ErrorObject, ValidateFunction } from "ajv"
import { Ajv } from "ajv"
import * as AjvFormats from "ajv-formats"
import { Ajv2020 } from "ajv/dist/2020.js"
import type { RegExpEngine, RegExpLike } from "ajv/dist/types/index.js"
import * as Either from "effect/Either"
import { RE2JS } from "re2js"
import type { Problem } from "./argumentProblems.js"
import { MAX_PROBLEMS, preview } from "./argumentProblems.js"
import { formatPath } from "./jsonSchema.js"
import { admitsNull } from "./jsonSchemaTargets.js"
import type { Mapper } from "./nullAsAbsent.js"
import * as NullAsAbsent from "./nullAsAbsent.js"

type FormatsPlugin = (ajv: Ajv | Ajv2020) => unknown
const addFormats: FormatsPlugin = (AjvFormats as unknown as { default?: FormatsPlugin }).default ??
  (AjvFormats as unknown as FormatsPlugin)

/** Compiled validators kept for schemas made again (a refreshed tool list): at most this many. */
export const MAX_CACHED_VALIDATORS = 512

/**
 * Ajv's regular expressions on RE2: JavaScript syntax translated (`\u00e9`, named groups), matched unanchored as
 * JSON Schema says. A pattern RE2 refuses matches anything (see above). Ajv tells patterns apart by `toString`
 * (and would otherwise use the first for all): each says its own source, as a `RegExp` does.
 */
const linearTime: RegExpEngine = Object.assign((pattern: string, flags: string): RegExpLike => {
  const source = `/${pattern}/${flags}`
  let test: (s: string) => boolean
  try {
    const compiled = RE2JS.compile(RE2JS.translateRegExp(pattern))
    test = (s) => compiled.test(s)
  } catch {
    test = () => true
  }
  const matcher: RegExpLike & { toString(): string } = { test, toString: () => source }
  return matcher
}, { code: "re2js" })

const options = {
  allErrors: true,
  strict: false,
  validateFormats: true,
  addUsedSchema: false,
  verbose: true,
  code: { regExp: linearTime }
}

/**
 * How many schemas one Ajv instance compiles before the next takes over. Ajv keeps a reference to every schema
 * and validator it ever compiled (its generated code reads them from an append-only scope), 5.7 kB each, for as
 * long as the instance lives, whatever `removeSchema` is told: an instance is let go after this many, and is
 * collected once the last of its validators is. A new instance costs about 30 ms (its formats, its meta-schema),
 * a compilation about 4 ms: this is about 3% more per compilation.
 */
export const COMPILATIONS_PER_INSTANCE = 256

type Draft = "07" | "2020"

interface Generation {
  readonly ajv: Ajv | Ajv2020
  compiled: number
}

const generations: { [D in Draft]?: Generation } = {}

const draftOf = (schema: Record<string, unknown>): Draft =>
  typeof schema.$schema === "string" && /draft-0[4-7]/.test(schema.$schema) ? "07" : "2020"

/** The instance compiling for a draft now, a new one once the last has compiled its share. */
const generationFor = (draft: Draft): Generation => {
  const current = generations[draft]
  if (current !== undefined && current.compiled < COMPILATIONS_PER_INSTANCE) return current
  const ajv = draft === "07" ? new Ajv(options) : new Ajv2020(options)
  addFormats(ajv)
  const next: Generation = { ajv, compiled: 0 }
  generations[draft] = next
  return next
}

/** JSON with every object's keys sorted: the same text for the same schema, however its keys were ordered. */
const canonical = (value: unknown): string => {
  if (typeof value !== "object" || value === null) return JSON.stringify(value) ?? "null"
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`
  const keys = Object.keys(value).sort()
  return `{${
    keys.map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`).join(",")
  }}`
}

/** Shared validators by draft and canonical schema, in least recently used order (a `Map` keeps insertion order). */
const shared = new Map<string, ValidateFunction>()

const cached = (key: string): ValidateFunction | undefined => {
  const found = shared.get(key)
  if (found !== undefined) {
    shared.delete(key)
    shared.set(key, found)
  }
  return found
}

const remember = (key: string, validate: ValidateFunction): void => {
  shared.set(key, validate)
  if (shared.size > MAX_CACHED_VALIDATORS) shared.delete(shared.keys().next().value!)
}

/** How many validators the shared cache holds (for tests). */
export const cachedValidators = (): number => shared.size

/** A compiled validator: `undefined` for valid arguments, else the problems. */
export type Validator = (value: unknown) => Array<Problem> | undefined

/**
 * A validator for a JSON Schema, compiled on its first use. Throws at once when the schema is not valid against
 * its draft's meta-schema (a programmer error at construction, or a server that sent a broken schema, which the
 * caller reports); a schema that passes that check but still cannot be compiled (a `$ref` to nothing) throws on
 * the first call instead. With `checkOnFirstUse` the meta-schema check waits for that first call too, so making
 * the validator costs no Ajv work at all (a remote server's listing: its first check compiles the meta-schema, 35
 * to 110 ms, that no listing should pay).
 */
export const compile = (
  schema: Record<string, unknown>,
  options?: { readonly checkOnFirstUse?: boolean | undefined }
): Validator => {
  const draft = draftOf(schema)
  // `$id` would register the schema globally and make a second tool with the same id fail to compile.
  const strip = () => {
    const { $id: _id, $schema: _schema, ...rest } = schema
    return rest
  }
  // checked against its draft's meta-schema now, unless that waits for the compilation (which checks it too)
  if (options?.checkOnFirstUse !== true) generationFor(draft).ajv.validateSchema(strip(), true)
  let validate: ValidateFunction | undefined
  return (value) => {
    if (validate === undefined) {
      // copied when first needed: a listing of many tools makes many validators and uses few
      const rest = strip()
      const key = `${draft}:${canonical(rest)}`
      validate = cached(key)
      if (validate === undefined) {
        const generation = generationFor(draft)
        generation.compiled++
        try {
          validate = generation.ajv.compile(rest)
        } finally {
          // the tool holds its validator; the instance's cache by schema object must not
          generation.ajv.removeSchema(rest)
        }
        remember(key, validate)
      }
    }
    return validate(value) ? undefined : fromErrors(validate.errors ?? [])
  }
}

/**
 * The arguments a JSON-Schema tool's handler gets, or the problems: {@link compile}'s check, and when it fails, the
 * same arguments with every `null` sent for an optional property whose schema does not admit null read as absent,
 * checked again. Nothing else could have been meant by it, and it is what the `"openai-strict"` projection asks a
 * model to send for a property it leaves out. The input is never changed: a copy drops the keys.
 */
export const decoder = (
  schema: Record<string, unknown>,
  options?: { readonly checkOnFirstUse?: boolean | undefined }
): (args: Record<string, unknown>) => Either.Either<Record<string, unknown>, Array<Problem>> => {
  const validate = compile(schema, options)
  let absent: ((value: unknown) => unknown) | undefined | null = null
  return (args) => {
    const problems = validate(args)
    if (problems === undefined) return Either.right(args)
    if (absent === null) absent = nullAsAbsent(schema)
    const mapped = absent === undefined ? args : absent(args) as Record<string, unknown>
    if (mapped === args) return Either.left(problems)
    const again = validate(mapped)
    return again === undefined ? Either.right(mapped) : Either.left(again)
  }
}

const isObjectSchema = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

/** What a local `$ref` points at, or undefined. */
const target = (root: Record<string, unknown>, ref: string): unknown => {
  if (!ref.startsWith("#")) return undefined
  let at: unknown = root
  for (const segment of ref.slice(1).split("/").slice(1)) {
    const key = segment.replace(/~1/g, "/").replace(/~0/g, "~")
    at = isObjectSchema(at) ? at[key] : Array.isArray(at) ? at[Number(key)] : undefined
  }
  return at
}

/**
 * A function dropping the keys set to `null` where the schema's property is optional and does not admit null, at
 * any depth (properties, array items, union members, local `$ref`s), or undefined when the schema has no such
 * property.
 */
const nullAsAbsent = (root: Record<string, unknown>): Mapper | undefined => {
  const memo = new Map<unknown, Mapper | undefined>()
  const follow = (node: unknown): unknown => {
    const seen = new Set<unknown>()
    while (isObjectSchema(node) && typeof node.$ref === "string" && !seen.has(node)) {
      seen.add(node)
      node = target(root, node.$ref)
    }
    return node
  }
  const admits = (node: unknown): boolean => {
    const resolved = follow(node)
    if (!isObjectSchema(resolved)) return resolved !== false
    return resolved.nullable === true || admitsNull(resolved)
  }
  const build = (raw: unknown): Mapper | undefined => {
    const node = follow(raw)
    if (!isObjectSchema(node)) return undefined
    if (memo.has(node)) return memo.get(node)
    // recursion: the function for this node is filled in once the walk that may refer back to it is done
    const ref: { inner: Mapper | undefined } = { inner: undefined }
    memo.set(node, (u) => (ref.inner === undefined ? u : ref.inner(u)))
    ref.inner = buildNode(node)
    memo.set(node, ref.inner === undefined ? undefined : memo.get(node))
    return memo.get(node)
  }
  const buildNode = (node: Record<string, unknown>): Mapper | undefined => {
    const steps: Array<Mapper> = []
    if (isObjectSchema(node.properties)) {
      const required = new Set(Array.isArray(node.required) ? node.required : [])
      const optional: Array<string> = []
      const nested: Array<[string, Mapper]> = []
      for (const [name, property] of Object.entries(node.properties)) {
        if (!required.has(name) && !admits(property)) optional.push(name)
        const inner = build(property)
        if (inner !== undefined) nested.push([name, inner])
      }
      if (optional.length > 0 || nested.length > 0) steps.push(NullAsAbsent.objectMapper(optional, nested))
    }
    const items = isObjectSchema(node.items) ? build(node.items) : undefined
    if (items !== undefined) steps.push(NullAsAbsent.arrayMapper(items))
    for (const key of ["anyOf", "oneOf", "allOf"]) {
      const members = node[key]
      if (!Array.isArray(members)) continue
      for (const member of members) {
        const inner = build(member)
        if (inner !== undefined) steps.push(inner)
      }
    }
    return NullAsAbsent.allOf(steps)
  }
  return build(root)
}

const pointerToPath = (pointer: string): Array<PropertyKey> =>
  pointer === ""
    ? []
    : pointer.slice(1).split("/").map((segment) => {
      const key = segment.replace(/~1/g, "/").replace(/~0/g, "~")
      return /^(0|[1-9][0-9]*)$/.test(key) ? Number(key) : key
    })

const typeNoun = (type: string): string =>
  type === "integer" || type === "array" || type === "object" ? `an ${type}` : `a ${type}`

const expected = (error: ErrorObject): string => {
  const p = error.params as Record<string, unknown>
  switch (error.keyword) {
    case "type": {
      const types = String(p.type).split(",")
      return types.map(typeNoun).join(" or ")
    }
    case "enum":
      return `one of ${(p.allowedValues as Array<unknown>).map((v) => JSON.stringify(v)).join(", ")}`
    case "const":
      return JSON.stringify(p.allowedValue)
    case "minLength":
      return `a string of at least ${p.limit} character${p.limit === 1 ? "" : "s"}`
    case "maxLength":
      return `a string of at most ${p.limit} character${p.limit === 1 ? "" : "s"}`
    case "minimum":
    case "maximum":
    case "exclusiveMinimum":
    case "exclusiveMaximum":
      return `a number ${p.comparison} ${p.limit}`
    case "pattern":
      return `a string matching /${p.pattern}/`
    case "format":
      return `a string in ${p.format} format`
    case "minItems":
      return `an array with at least ${p.limit} item${p.limit === 1 ? "" : "s"}`
    case "maxItems":
      return `an array with at most ${p.limit} item${p.limit === 1 ? "" : "s"}`
    case "multipleOf":
      return `a multiple of ${p.multipleOf}`
    default:
      return `a value that ${error.message ?? `satisfies ${error.keyword}`}`
  }
}

/** What a property's own schema expects, for the line about it being missing. */
const expectedOf = (schema: unknown): string | undefined => {
  if (typeof schema !== "object" || schema === null) return undefined
  const s = schema as Record<string, unknown>
  if (Array.isArray(s.enum)) return `one of ${s.enum.map((v) => JSON.stringify(v)).join(", ")}`
  if ("const" in s) return JSON.stringify(s.const)
  if (typeof s.type === "string") return typeNoun(s.type)
  if (Array.isArray(s.type)) return s.type.map((t) => typeNoun(String(t))).join(" or ")
  return undefined
}

/**
 * Ajv's errors as problem lines, at most {@link MAX_PROBLEMS} formatted (a huge invalid input costs a count, not a
 * line per item). The member errors of a failed `anyOf`/`oneOf` are folded into the one line for the union.
 */
const fromErrors = (errors: ReadonlyArray<ErrorObject>): Array<Problem> => {
  const unionLocations = new Set<string>()
  for (const e of errors) {
    if (e.keyword === "anyOf" || e.keyword === "oneOf") unionLocations.add(e.schemaPath.slice(0, -e.keyword.length))
  }
  const insideUnion = (e: ErrorObject): boolean => {
    if (unionLocations.size === 0) return false
    const path = e.schemaPath
    for (let at = path.indexOf("/"); at >= 0; at = path.indexOf("/", at + 1)) {
      if (unionLocations.has(path.slice(0, at + 1)) && path.length > at + 1) return true
    }
    return false
  }
  const out: Array<Problem> = []
  const seen = new Set<string>()
  let dropped = 0
  for (const error of errors) {
    if (error.keyword !== "anyOf" && error.keyword !== "oneOf" && insideUnion(error)) continue
    if (out.length >= MAX_PROBLEMS) {
      dropped++
      continue
    }
    const path = pointerToPath(error.instancePath)
    let line: Problem
    switch (error.keyword) {
      case "required": {
        const missing = (error.params as { missingProperty: string }).missingProperty
        const properties = (error.parentSchema as { properties?: Record<string, unknown> } | undefined)?.properties
        const expected = expectedOf(properties?.[missing])
        line = {
          path: formatPath(path.concat(missing)),
          message: expected === undefined
            ? "missing required property"
            : `missing required property, expected ${expected}`
        }
        break
      }
      case "additionalProperties": {
        const extra = (error.params as { additionalProperty: string }).additionalProperty
        line = { path: formatPath(path.concat(extra)), message: "unexpected property" }
        break
      }
      case "anyOf":
      case "oneOf":
        line = { path: formatPath(path), message: `does not match any allowed shape, got ${preview(error.data)}` }
        break
      default:
        line = { path: formatPath(path), message: `expected ${expected(error)}, got ${preview(error.data)}` }
    }
    const key = `${line.path}\u0000${line.message}`
    if (seen.has(key)) continue
    seen.add(key)
    out.push(line)
  }
  if (dropped > 0) out.push({ path: "", message: `…and ${dropped} more problem${dropped === 1 ? "" : "s"}` })
  return out
}
