/**
 * Validation of arguments against a raw JSON Schema (remote tools, `Tool.fromJsonSchema`), with the same problem
 * lines as Schema-backed tools.
 *
 * One Ajv instance per draft for the whole process: compiling is the expensive part and happens once per tool, at
 * construction; validating a call is a compiled function call.
 *
 * @internal
 */
import type { ErrorObject, ValidateFunction } from "ajv"
import { Ajv } from "ajv"
import * as AjvFormats from "ajv-formats"
import { Ajv2020 } from "ajv/dist/2020.js"
import type { Problem } from "./argumentProblems.js"
import { MAX_PROBLEMS, preview } from "./argumentProblems.js"
import { formatPath } from "./jsonSchema.js"

type FormatsPlugin = (ajv: Ajv | Ajv2020) => unknown
const addFormats: FormatsPlugin = (AjvFormats as unknown as { default?: FormatsPlugin }).default ??
  (AjvFormats as unknown as FormatsPlugin)

const options = { allErrors: true, strict: false, validateFormats: true, addUsedSchema: false, verbose: true }

let draft2020: Ajv2020 | undefined
let draft07: Ajv | undefined

const instanceFor = (schema: Record<string, unknown>): Ajv | Ajv2020 => {
  const meta = typeof schema.$schema === "string" ? schema.$schema : ""
  if (/draft-0[4-7]/.test(meta)) {
    if (draft07 === undefined) {
      draft07 = new Ajv(options)
      addFormats(draft07)
    }
    return draft07
  }
  if (draft2020 === undefined) {
    draft2020 = new Ajv2020(options)
    addFormats(draft2020)
  }
  return draft2020
}

/** A compiled validator: `undefined` for valid arguments, else the problems. */
export type Validator = (value: unknown) => Array<Problem> | undefined

/**
 * Compiles a JSON Schema into a validator. Throws when the schema itself is invalid (a programmer error at
 * construction, or a server that sent a broken schema, which the caller reports).
 */
export const compile = (schema: Record<string, unknown>): Validator => {
  const ajv = instanceFor(schema)
  // `$id` would register the schema globally and make a second tool with the same id fail to compile.
  const { $id: _id, $schema: _schema, ...rest } = schema
  const validate: ValidateFunction = ajv.compile(rest)
  return (value) => (validate(value) ? undefined : fromErrors(validate.errors ?? []))
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
