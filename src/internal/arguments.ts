/**
 * The model's arguments, from what it wrote to a JSON object, safely.
 *
 * A model writes a JSON string (or a host hands over an already-parsed value). Whatever it wrote, the outcome is
 * an object or a list of problems, never a throw: not JSON, not an object, nested deeper than any tool needs
 * (which would overflow the stack of a recursive decoder), or carrying a `__proto__` key (which an
 * `Object.assign` in a handler would turn into a prototype change) are all refused with a line that says so.
 *
 * @internal
 */
import type { Problem } from "./argumentProblems.js"
import { preview } from "./argumentProblems.js"
import { reasonOf } from "./reason.js"

/** Arguments nested deeper than this are refused before any decoder walks them. */
export const MAX_DEPTH = 256

const problem = (message: string): Array<Problem> => [{ path: "", message }]

/**
 * Walks a parsed value without recursion, refusing depth over {@link MAX_DEPTH} and `__proto__` keys.
 * Returns the problem, or undefined when the value is fine.
 */
const guard = (root: unknown): Array<Problem> | undefined => {
  const stack: Array<unknown> = [root]
  const depths: Array<number> = [0]
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
        }
      }
      continue
    }
    for (const key of Object.keys(value)) {
      if (key === "__proto__") return problem(`"__proto__" is not allowed as a property name`)
      const item = (value as Record<string, unknown>)[key]
      if (typeof item === "object" && item !== null) {
        stack.push(item)
        depths.push(depth + 1)
      }
    }
  }
  return undefined
}

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
    // A short text cannot nest deep, and a key can only spell __proto__ literally or through an escape.
    if (raw.length > MAX_DEPTH || raw.includes("__proto__") || raw.includes("\\u")) {
      const refused = guard(value)
      if (refused !== undefined) return refused
    }
    return value
  }
  if (raw === undefined) return {}
  if (!isPlainObject(raw)) return notAnObject(raw)
  return guard(raw) ?? raw
}

/** Whether {@link parse} refused the arguments. */
export const isProblems = (u: Record<string, unknown> | Array<Problem>): u is Array<Problem> => Array.isArray(u)
