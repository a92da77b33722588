/**
 * A tool's parameters as command-line flags, derived from its JSON Schema (so remote tools get them too), and a
 * command line parsed back into the tool's arguments. Pure.
 *
 * The rules, the same for every tool:
 * - a string, number, integer or boolean property is a flag: `--name value` or `--name=value`; a boolean is
 *   `--name` (true) or `--no-name` (false), or `--name=true|false`;
 * - a property with listed values (an enum, literals) takes one of them;
 * - an array of such values is a flag given once per item (`--tag a --tag b`);
 * - an object with listed properties gives a flag per field, `--object.field`, at any depth, and `--object`
 *   takes the whole object as JSON;
 * - anything else (a union, an array of objects, a record) takes JSON: `--name '{"a":1}'`;
 * - a JSON object as the last argument, or `-` to read one from standard input, gives arguments too; flags are
 *   merged into it, and a parameter given both ways is refused, naming both;
 * - `--` ends the flags.
 *
 * @internal
 */
import type { JsonSchema } from "../Tool.js"
import { cut, quoted } from "./quote.js"

/** What one flag takes. */
export type FlagKind =
  | { readonly _tag: "string" | "number" | "integer" | "boolean" | "json" }
  | { readonly _tag: "enum"; readonly values: ReadonlyArray<string | number | boolean | null> }
  | { readonly _tag: "array"; readonly item: FlagKind }

/** A flag of a tool. */
export interface Flag {
  /** The property path: `["a", "b"]` for `--a.b`. */
  readonly path: ReadonlyArray<string>
  /** How it is written, without the dashes: `a.b`. */
  readonly name: string
  readonly kind: FlagKind
  /** Always required: it and every object it is in. */
  readonly required: boolean
  /** Required whenever its object is given, when that object is optional: the object's flag name. */
  readonly requiredWith: string | undefined
  readonly description: string | undefined
  readonly default: unknown
  /** Bounds and formats, in words (`at least 1`, `a date-time`). */
  readonly constraints: ReadonlyArray<string>
  /** An object's flag (taking JSON) that also has a flag per field. */
  readonly hasFields: boolean
}

type Json = { readonly [key: string]: unknown }

const isObject = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)

/** Follows a local `$ref` (`#/$defs/X`); a recursive or foreign one is left as it is. */
const deref = (root: Json, schema: Json, seen: ReadonlySet<string>): { schema: Json; seen: ReadonlySet<string> } => {
  let current = schema
  let visited = seen
  while (typeof current.$ref === "string") {
    const ref = current.$ref
    const match = /^#\/(\$defs|definitions)\/(.+)$/.exec(ref)
    const defs = match === null ? undefined : root[match[1]]
    const target = isObject(defs) ? defs[match![2].replace(/~1/g, "/").replace(/~0/g, "~")] : undefined
    if (!isObject(target) || visited.has(ref)) return { schema: current, seen: visited }
    visited = new Set([...visited, ref])
    current = target
  }
  return { schema: current, seen: visited }
}

/** The schema less a `null` alternative (strict tools make optional properties nullable). */
const withoutNull = (schema: Json): Json => {
  const alternatives = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : []
  if (alternatives.length === 2) {
    const rest = alternatives.filter((a) => !(isObject(a) && a.type === "null"))
    if (rest.length === 1 && isObject(rest[0])) {
      const { anyOf: _a, oneOf: _o, ...outer } = schema
      return { ...outer, ...rest[0] }
    }
  }
  if (Array.isArray(schema.type)) {
    const types = schema.type.filter((t) => t !== "null")
    if (types.length === 1) return { ...schema, type: types[0] }
  }
  if (Array.isArray(schema.allOf) && schema.allOf.length === 1 && isObject(schema.allOf[0])) {
    const { allOf: _, ...outer } = schema
    return { ...outer, ...schema.allOf[0] }
  }
  return schema
}

const SCALARS = new Set(["string", "number", "integer", "boolean"])

type Scalar = string | number | boolean | null

/** The listed values of an enum, a const, or a union of them. */
const listedValues = (schema: Json): ReadonlyArray<Scalar> | undefined => {
  if (Array.isArray(schema.enum) && schema.enum.every((v) => v === null || typeof v !== "object")) {
    return schema.enum as ReadonlyArray<Scalar>
  }
  if ("const" in schema && (schema.const === null || typeof schema.const !== "object")) return [schema.const as Scalar]
  const alternatives = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : []
  if (alternatives.length === 0) return undefined
  const values: Array<Scalar> = []
  for (const alternative of alternatives) {
    if (!isObject(alternative)) return undefined
    const inner = listedValues(alternative)
    if (inner === undefined) return undefined
    values.push(...inner)
  }
  return values
}

const scalarKind = (schema: Json): FlagKind | undefined => {
  const values = listedValues(schema)
  if (values !== undefined) return { _tag: "enum", values }
  if (typeof schema.type === "string" && SCALARS.has(schema.type)) {
    return { _tag: schema.type as "string" | "number" | "integer" | "boolean" }
  }
  return undefined
}

const constraintsOf = (schema: Json): Array<string> => {
  const words: Array<string> = []
  const num = (key: string) => (typeof schema[key] === "number" ? (schema[key] as number) : undefined)
  const min = num("minimum")
  const max = num("maximum")
  if (min !== undefined && max !== undefined) words.push(`from ${min} to ${max}`)
  else if (min !== undefined) words.push(`at least ${min}`)
  else if (max !== undefined) words.push(`at most ${max}`)
  if (num("exclusiveMinimum") !== undefined) words.push(`more than ${num("exclusiveMinimum")}`)
  if (num("exclusiveMaximum") !== undefined) words.push(`less than ${num("exclusiveMaximum")}`)
  const minLength = num("minLength")
  const maxLength = num("maxLength")
  if (minLength !== undefined && maxLength !== undefined) words.push(`${minLength} to ${maxLength} characters`)
  else if (minLength !== undefined) words.push(`at least ${minLength} character${minLength === 1 ? "" : "s"}`)
  else if (maxLength !== undefined) words.push(`at most ${maxLength} characters`)
  if (typeof schema.pattern === "string") words.push(`matching /${schema.pattern}/`)
  if (typeof schema.format === "string") words.push(`format ${schema.format}`)
  const minItems = num("minItems")
  if (minItems !== undefined && minItems > 0) words.push(`at least ${minItems} item${minItems === 1 ? "" : "s"}`)
  const maxItems = num("maxItems")
  if (maxItems !== undefined) words.push(`at most ${maxItems} items`)
  return words
}

/** How deep `--a.b.c` flags go: deeper fields are given through their object's JSON flag. */
const MAX_DEPTH = 4

/** The flags of a tool, from its input schema, in the schema's property order. */
export const flagsOf = (inputSchema: JsonSchema): ReadonlyArray<Flag> => {
  const flags: Array<Flag> = []
  const visit = (object: Json, prefix: ReadonlyArray<string>, parentRequired: boolean, seen: ReadonlySet<string>) => {
    const properties = isObject(object.properties) ? object.properties : {}
    const required = new Set(Array.isArray(object.required) ? object.required : [])
    for (const [key, raw] of Object.entries(properties)) {
      if (!isObject(raw)) continue
      const { schema: resolved, seen: inner } = deref(inputSchema, raw, seen)
      const schema = withoutNull(resolved)
      const path = [...prefix, key]
      const base = {
        path,
        name: path.join("."),
        required: parentRequired && required.has(key),
        requiredWith: !parentRequired && required.has(key) ? prefix.join(".") : undefined,
        description: typeof schema.description === "string" ? schema.description : undefined,
        default: schema.default,
        constraints: constraintsOf(schema)
      }
      const scalar = scalarKind(schema)
      if (scalar !== undefined) {
        flags.push({ ...base, kind: scalar, hasFields: false })
        continue
      }
      if (schema.type === "array" && isObject(schema.items)) {
        const item = scalarKind(withoutNull(deref(inputSchema, schema.items, inner).schema))
        flags.push({ ...base, kind: item === undefined ? { _tag: "json" } : { _tag: "array", item }, hasFields: false })
        continue
      }
      const fields = schema.type === "object" && isObject(schema.properties) &&
        Object.keys(schema.properties).length > 0 && path.length < MAX_DEPTH
      flags.push({ ...base, kind: { _tag: "json" }, hasFields: fields })
      if (fields) visit(schema, path, base.required, inner)
    }
  }
  visit(inputSchema, [], true, new Set())
  return flags
}

// ---------------------------------------------------------------------------------------------------------------
// a command line, parsed
// ---------------------------------------------------------------------------------------------------------------

/** A command line that cannot be a call: what is wrong, in words for whoever typed it. */
export interface UsageProblem {
  readonly _tag: "UsageProblem"
  readonly message: string
}

const problem = (message: string): UsageProblem => ({ _tag: "UsageProblem", message })

/** What a command line asks for: the tool's help, or a call with these arguments (stdin still to be read). */
export type Parsed =
  | { readonly _tag: "Help" }
  | {
    readonly _tag: "Call"
    /** Set by flags, by property path. */
    readonly flags: ReadonlyArray<{ readonly flag: Flag; readonly value: unknown }>
    /** The positional JSON argument, as text; `-` means standard input. */
    readonly json: string | undefined
  }

const describeKind = (kind: FlagKind): string => {
  switch (kind._tag) {
    case "enum":
      return `one of ${kind.values.map((v) => (typeof v === "string" ? v : JSON.stringify(v))).join(", ")}`
    case "array":
      return describeKind(kind.item)
    case "integer":
      return "a whole number"
    case "number":
      return "a number"
    case "boolean":
      return "true or false"
    case "json":
      return "JSON"
    case "string":
      return "text"
  }
}

/** A flag's text as its value, or why it is not one. */
const valueOf = (flag: Flag, kind: FlagKind, text: string): { readonly value: unknown } | UsageProblem => {
  const bad = () => problem(`--${flag.name} takes ${describeKind(kind)}; got ${quoted(text)}`)
  switch (kind._tag) {
    case "string":
      return { value: text }
    case "number":
    case "integer": {
      const n = Number(text)
      if (text.trim() === "" || !Number.isFinite(n) || (kind._tag === "integer" && !Number.isInteger(n))) return bad()
      return { value: n }
    }
    case "boolean":
      if (text === "true") return { value: true }
      if (text === "false") return { value: false }
      return bad()
    case "enum": {
      const found = kind.values.find((v) => (typeof v === "string" ? v : JSON.stringify(v)) === text)
      return found === undefined && !kind.values.includes(text) ? bad() : { value: found ?? text }
    }
    case "array":
      return valueOf(flag, kind.item, text)
    case "json":
      try {
        return { value: JSON.parse(text) }
      } catch {
        return problem(`--${flag.name} takes JSON; got ${quoted(text)}, which is not JSON`)
      }
  }
}

/** The edit distance of two short strings (for "did you mean"). */
const distance = (a: string, b: string): number => {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    let previous = row[0]
    row[0] = i
    for (let j = 1; j <= b.length; j++) {
      const saved = row[j]
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1] === b[j - 1] ? 0 : 1))
      previous = saved
    }
  }
  return row[b.length]
}

const unknownFlag = (tool: string, given: string, flags: ReadonlyArray<Flag>, program: string): UsageProblem => {
  const normal = (s: string) => s.replace(/[-_]/g, "").toLowerCase()
  const near = flags.find((f) => normal(f.name) === normal(given)) ??
    flags.map((f) => ({ f, d: distance(f.name, given) })).filter(({ d }) => d <= 2).sort((x, y) => x.d - y.d)[0]?.f
  const list = flags.length === 0 ? "it takes no flags" : `its flags: ${flags.map((f) => `--${f.name}`).join(", ")}`
  return problem(
    `${tool} has no flag --${cut(given)}${near === undefined ? "" : `; did you mean --${near.name}?`} (${list}; ` +
      `${program} help ${tool} shows them)`
  )
}

/** Parses the words after the tool's name. */
export const parse = (
  tool: string,
  flags: ReadonlyArray<Flag>,
  words: ReadonlyArray<string>,
  program: string
): Parsed | UsageProblem => {
  const byName = new Map(flags.map((f) => [f.name, f]))
  const set: Array<{ readonly flag: Flag; readonly value: unknown }> = []
  const given = new Map<string, string>()
  const positional: Array<string> = []
  let onlyPositional = false
  const record = (flag: Flag, value: unknown, spelled: string): UsageProblem | undefined => {
    if (flag.kind._tag !== "array") {
      const before = given.get(flag.name)
      if (before !== undefined) {
        return problem(`--${flag.name} is given twice (${cut(before)} and ${cut(spelled)}); give it once`)
      }
    }
    given.set(flag.name, spelled)
    set.push({ flag, value })
    return undefined
  }
  for (let i = 0; i < words.length; i++) {
    const word = words[i]
    if (onlyPositional || word === "-" || !word.startsWith("-")) {
      positional.push(word)
      continue
    }
    if (word === "--") {
      onlyPositional = true
      continue
    }
    if (word === "-h" || word === "--help") return { _tag: "Help" }
    if (!word.startsWith("--")) {
      return problem(`${quoted(word)} is not a flag; flags start with -- (${program} help ${tool})`)
    }
    const equals = word.indexOf("=")
    const name = word.slice(2, equals < 0 ? undefined : equals)
    const inline = equals < 0 ? undefined : word.slice(equals + 1)
    const flag = byName.get(name)
    if (flag === undefined && name.startsWith("no-") && inline === undefined) {
      const negated = byName.get(name.slice(3))
      if (negated !== undefined && negated.kind._tag === "boolean") {
        const failed = record(negated, false, word)
        if (failed !== undefined) return failed
        continue
      }
    }
    if (flag === undefined) return unknownFlag(tool, name, flags, program)
    if (flag.kind._tag === "boolean" && inline === undefined) {
      const failed = record(flag, true, word)
      if (failed !== undefined) return failed
      continue
    }
    let text = inline
    if (text === undefined) {
      if (i + 1 >= words.length) {
        return problem(`--${flag.name} needs a value (${describeKind(flag.kind)}): --${flag.name} <value>`)
      }
      text = words[++i]
    }
    const parsed = valueOf(flag, flag.kind, text)
    if ("_tag" in parsed) return parsed
    const failed = record(flag, parsed.value, word === `--${flag.name}` ? `--${flag.name} ${text}` : word)
    if (failed !== undefined) return failed
  }
  if (positional.length > 1) {
    return problem(
      `${tool} takes at most one argument besides its flags (a JSON object, or - to read one from standard ` +
        `input); got ${positional.length}: ${positional.slice(0, 3).map(quoted).join(" ")}` +
        (positional.length > 3 ? " …" : "")
    )
  }
  return { _tag: "Call", flags: set, json: positional[0] }
}

/**
 * The arguments of a call: the JSON object (if any) with the flags merged in. A flag and the JSON giving the same
 * parameter, or two flags giving one (`--a` and `--a.b`), is refused naming both; so is a missing required flag
 * when no JSON was given.
 */
export const merge = (
  tool: string,
  flags: ReadonlyArray<Flag>,
  parsed: Extract<Parsed, { readonly _tag: "Call" }>,
  jsonText: string | undefined,
  program: string
): { readonly arguments: Json } | UsageProblem => {
  let base: Record<string, unknown> = {}
  const fromJson = jsonText !== undefined
  if (jsonText !== undefined) {
    let value: unknown
    try {
      value = JSON.parse(jsonText)
    } catch (error) {
      const source = parsed.json === "-" ? "standard input" : "the argument"
      return problem(
        `${source} is not JSON (${(error as Error).message}); give the arguments as one JSON object, e.g. ` +
          `'{"path":"a.txt"}', or as flags (${program} help ${tool})`
      )
    }
    if (!isObject(value)) {
      return problem(
        `the JSON argument must be an object of the tool's parameters, not ${
          Array.isArray(value) ? "an array" : value === null ? "null" : typeof value
        }; a boolean flag is --<flag> or --no-<flag> (${program} help ${tool})`
      )
    }
    base = structuredClone(value) as Record<string, unknown>
  }
  // two flags for one place: `--a '{...}'` and `--a.b`
  for (const a of parsed.flags) {
    for (const b of parsed.flags) {
      if (a === b || a.flag.path.length >= b.flag.path.length) continue
      if (a.flag.path.every((key, i) => b.flag.path[i] === key)) {
        return problem(`--${a.flag.name} and --${b.flag.name} both give ${b.flag.name}; give it one way`)
      }
    }
  }
  // the places the flags made: a list a flag started takes the next items of that flag
  const made = new Set<string>()
  for (const { flag, value } of parsed.flags) {
    let at: Record<string, unknown> = base
    for (let i = 0; i < flag.path.length; i++) {
      const key = flag.path[i]
      const place = flag.path.slice(0, i + 1).join(".")
      if (i === flag.path.length - 1) {
        if (Object.hasOwn(at, key) && !made.has(place)) return conflict(flag, place)
        at[key] = flag.kind._tag === "array" ? [...(made.has(place) ? (at[key] as Array<unknown>) : []), value] : value
        made.add(place)
        continue
      }
      const next = at[key]
      if (next === undefined) {
        const created: Record<string, unknown> = {}
        at[key] = created
        made.add(place)
        at = created
      } else if (isObject(next)) {
        at = next as Record<string, unknown>
      } else {
        return conflict(flag, place)
      }
    }
  }
  if (!fromJson) {
    const missing = flags.filter((f) =>
      (f.required || f.requiredWith !== undefined) && !hasPath(base, f.path) && parentPresent(base, f.path)
    )
    if (missing.length > 0) {
      return problem(
        `${tool} needs ${missing.map((f) => `--${f.name}`).join(", ")} (${program} help ${tool} shows its flags)`
      )
    }
  }
  return { arguments: base }
}

const conflict = (flag: Flag, place: string): UsageProblem =>
  problem(
    `--${flag.name} conflicts with "${place}" in the JSON argument; give ${flag.name} one way, as a flag or in ` +
      "the JSON"
  )

const hasPath = (value: Json, path: ReadonlyArray<string>): boolean => {
  let at: unknown = value
  for (const key of path) {
    if (!isObject(at) || !Object.hasOwn(at, key)) return false
    at = at[key]
  }
  return true
}

const parentPresent = (value: Json, path: ReadonlyArray<string>): boolean =>
  path.length === 1 || hasPath(value, path.slice(0, -1))

export { describeKind }
