/**
 * The model's arguments, from what it wrote to a JSON object, safely.
 *
 * A model writes a JSON string (or a host hands over an already-parsed value). Whatever it wrote, the outcome is
 * an object or a list of problems, never a throw. Refused, each with a line that says so:
 * - not JSON, or not an object;
 * - nested deeper than any tool needs (which would overflow the stack of a recursive decoder);
 * - a `__proto__` key, which an `Object.assign` in a handler would turn into a prototype change;
 * - a `constructor` key holding an object with a `prototype` key: the other path a naive deep merge
 *   (`merge(target, args)`, lodash's `merge` before 4.17.5) follows into `Object.prototype`. A `constructor`
 *   property of any other value (a string, an object without `prototype`) is an ordinary property;
 * - a number that is not finite. JSON has no `Infinity`: `JSON.parse` gives it for a literal too large for a
 *   double (`1e400`), an overflow the model did not mean, which `Schema.Number` (and JSON Schema's `number`) would
 *   take. No schema can ask for it, since what a model writes is JSON; a schema that wants the words `Infinity` or
 *   `NaN` reads them from a string (`Schema.NumberFromString`).
 *
 * @internal
 */
import type { Problem } from "./argumentProblems.js"
import { MAX_PROBLEMS, preview } from "./argumentProblems.js"
import { formatPath } from "./jsonSchema.js"
import { reasonOf } from "./reason.js"

/** Arguments nested deeper than this are refused before any decoder walks them. */
export const MAX_DEPTH = 256

const problem = (message: string): Array<Problem> => [{ path: "", message }]

const PROTO = `"__proto__" is not allowed as a property name`
const CONSTRUCTOR_PROTOTYPE = `"constructor.prototype" is not allowed as a property path`

const isPrototypePath = (key: string, item: unknown): boolean =>
  key === "constructor" && typeof item === "object" && item !== null &&
  Object.prototype.hasOwnProperty.call(item, "prototype")

/**
 * Walks a parsed value without recursion, refusing depth over {@link MAX_DEPTH}, `__proto__` keys, a
 * `constructor.prototype` path and numbers that are not finite. Returns the problems, or undefined when the value
 * is fine. `text` is the JSON the value was parsed from, if any, to show an overflowing number as it was written.
 */
const guard = (root: unknown, text: string | undefined): Array<Problem> | undefined => {
  const stack: Array<unknown> = [root]
  const depths: Array<number> = [0]
  let nonFinite = false
  while (stack.length > 0) {
    const value = stack.pop()
    const depth = depths.pop()!
    if (typeof value !== "object" || value === null) continue
    if (depth >= MAX_DEPTH) return problem(`arguments are nested deeper than ${MAX_DEPTH} levels`)
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const item = value[i]
        if (typeof item === "object" && item !== null) {
          stack.push(item)
          depths.push(depth + 1)
        } else if (typeof item === "number" && !Number.isFinite(item)) nonFinite = true
      }
      continue
    }
    for (const key of Object.keys(value)) {
      if (key === "__proto__") return problem(PROTO)
      const item = (value as Record<string, unknown>)[key]
      if (typeof item === "object" && item !== null) {
        if (isPrototypePath(key, item)) return problem(CONSTRUCTOR_PROTOTYPE)
        stack.push(item)
        depths.push(depth + 1)
      } else if (typeof item === "number" && !Number.isFinite(item)) nonFinite = true
    }
  }
  return nonFinite ? nonFiniteProblems(root, text) : undefined
}

/**
 * One line per number that is not finite, at its path, showing the literal the model wrote when the value was
 * parsed here (`1e400`); parsed elsewhere (an MCP message), an infinity can only have been such a literal, and reads
 * `a number out of range (Infinity)`. Only built when there is one; the walk is safe to recurse
 * because {@link guard} has checked the depth.
 */
const nonFiniteProblems = (root: unknown, text: string | undefined): Array<Problem> => {
  const literals = text === undefined ? [] : overflowingLiterals(text)
  const out: Array<Problem> = []
  let found = 0
  const walk = (value: unknown, path: Array<PropertyKey>): void => {
    if (typeof value === "number" && !Number.isFinite(value)) {
      const written = literals[found++]
      if (out.length >= MAX_PROBLEMS) return
      const shown = written !== undefined
        ? (written.length > 40 ? cut(written) : written)
        : Number.isNaN(value)
        ? "NaN"
        : `a number out of range (${preview(value)})`
      out.push({ path: formatPath(path), message: `expected a finite number, got ${shown}` })
      return
    }
    if (typeof value !== "object" || value === null) return
    if (Array.isArray(value)) value.forEach((item, i) => walk(item, [...path, i]))
    else for (const key of Object.keys(value)) walk((value as Record<string, unknown>)[key], [...path, key])
  }
  walk(root, [])
  const dropped = found - out.length
  if (dropped > 0) out.push({ path: "", message: `…and ${dropped} more problem${dropped === 1 ? "" : "s"}` })
  return out
}

const cut = (literal: string): string => `${literal.slice(0, 24)}… (${literal.length} characters)`

/** The number literals of a JSON text, outside strings, that overflow a double, in the order they are written. */
const overflowingLiterals = (text: string): Array<string> => {
  const out: Array<string> = []
  const number = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x22) {
      // a string: skip to its closing quote, past escapes
      for (i++; i < text.length && text.charCodeAt(i) !== 0x22; i++) if (text.charCodeAt(i) === 0x5c) i++
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      number.lastIndex = i
      const match = number.exec(text)
      if (match === null) continue
      if (!Number.isFinite(Number(match[0]))) out.push(match[0])
      i += match[0].length - 1
    }
  }
  return out
}

/** An exponent of three digits or more: the only way a short JSON text can hold a number that overflows. */
const bigExponent = /[eE]\+?[0-9]{3}/

const isPlainObject = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

const notAnObject = (value: unknown): Array<Problem> =>
  problem(`expected a JSON object, got ${Array.isArray(value) ? "an array" : preview(value)}`)

/**
 * The arguments as a JSON object, or the problems that stop them being one.
 *
 * - a string is JSON text (empty or blank means `{}`);
 * - `undefined` means `{}`; any other value is taken as already parsed.
 */
export const parse = (raw: unknown): Record<string, unknown> | Array<Problem> => {
  if (typeof raw === "string") {
    let value: unknown
    try {
      value = JSON.parse(raw)
    } catch (error) {
      if (raw.trim() === "") return {}
      return problem(`not valid JSON (${reasonOf(error)}); send the arguments as one JSON object`)
    }
    if (!isPlainObject(value)) return notAnObject(value)
    // A short text cannot nest deep, a key can only spell __proto__ or prototype (both hold "proto") literally or
    // through an escape, and a short number can only overflow through its exponent.
    if (raw.length > MAX_DEPTH || raw.includes("proto") || raw.includes("\\u") || bigExponent.test(raw)) {
      const refused = guard(value, raw)
      if (refused !== undefined) return refused
    }
    return value
  }
  if (raw === undefined) return {}
  if (!isPlainObject(raw)) return notAnObject(raw)
  return guard(raw, undefined) ?? raw
}

/** Whether {@link parse} refused the arguments. */
export const isProblems = (u: Record<string, unknown> | Array<Problem>): u is Array<Problem> => Array.isArray(u)
