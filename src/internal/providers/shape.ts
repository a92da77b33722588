/**
 * Reading a provider's response: the checks every `calls` makes, and the bounded description of a value that did
 * not pass them.
 *
 * A response is untrusted input (it can come from a proxy, a local model server, a test double): the checks never
 * throw, never stringify the value, and describe what came in a bounded number of characters whatever its size.
 *
 * @internal
 */
import * as Either from "effect/Either"
import type { Provider } from "../../ProviderFormat.js"
import { ProviderFormatError } from "../../ProviderFormat.js"
import type { ToolCall } from "../executor.js"

/** The most characters of a string shown in a description. */
export const STRING_PREVIEW = 40

/** The most keys of an object named in a description. */
export const KEYS_PREVIEW = 6

const KEY_PREVIEW = 30

const clip = (text: string, max: number): string => (text.length <= max ? text : text.slice(0, max) + "…")

/**
 * A short description of any value, at most a few hundred characters: `a string "abc…"`, `an array of 3 items`,
 * `an object with keys a, b, c`, `nothing` for a missing property.
 */
export const describe = (u: unknown): string => {
  if (u === undefined) return "nothing"
  if (u === null) return "null"
  switch (typeof u) {
    case "string":
      return `a string ${JSON.stringify(clip(u, STRING_PREVIEW))}`
    case "number":
    case "boolean":
      return `${typeof u === "number" ? "the number" : "the boolean"} ${String(u)}`
    case "object": {
      if (Array.isArray(u)) return u.length === 1 ? "an array of 1 item" : `an array of ${u.length} items`
      const keys: Array<string> = []
      let more = false
      for (const key in u) {
        if (!Object.prototype.hasOwnProperty.call(u, key)) continue
        if (keys.length === KEYS_PREVIEW) {
          more = true
          break
        }
        keys.push(clip(key, KEY_PREVIEW))
      }
      if (keys.length === 0) return "an empty object"
      return `an object with keys ${keys.join(", ")}${more ? ", …" : ""}`
    }
    default:
      return `a ${typeof u}`
  }
}

/** A record: a non-null, non-array object. */
export const isRecord = (u: unknown): u is Readonly<Record<string, unknown>> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

/** `a.b`, `a[0]`, or the key alone at the root. */
export const at = (path: string, key: string | number): string =>
  typeof key === "number" ? `${path}[${key}]` : path === "" ? key : `${path}.${key}`

/** The reader of one provider: where a check failed and what it expected. */
export interface Reader {
  readonly provider: Provider
  readonly fail: (path: string, expected: string, got: unknown) => Either.Either<never, ProviderFormatError>
}

export const reader = (provider: Provider): Reader => ({
  provider,
  fail: (path, expected, got) => Either.left(new ProviderFormatError({ provider, path, expected, got: describe(got) }))
})

/**
 * The calls of a list of items, in order: `pick` gives the call an item carries, `undefined` for an item that is
 * not a call, or the error that stops the reading.
 */
export const collect = <A>(
  items: ReadonlyArray<A>,
  pick: (item: A, index: number) => Either.Either<ToolCall | undefined, ProviderFormatError>
): Either.Either<ReadonlyArray<ToolCall>, ProviderFormatError> =>
  Either.gen(function*() {
    const calls: Array<ToolCall> = []
    for (let index = 0; index < items.length; index++) {
      const call = yield* pick(items[index], index)
      if (call !== undefined) calls.push(call)
    }
    return calls
  })

/** A string property, refused when missing or of another type. */
export const stringAt = (
  read: Reader,
  path: string,
  value: unknown,
  expected = "a string"
): Either.Either<string, ProviderFormatError> =>
  typeof value === "string" ? Either.right(value) : read.fail(path, expected, value)

/** An optional array: missing and null are empty. */
export const optionalArrayAt = (
  read: Reader,
  path: string,
  value: unknown,
  expected: string
): Either.Either<ReadonlyArray<unknown>, ProviderFormatError> =>
  value === undefined || value === null
    ? Either.right([])
    : Array.isArray(value)
    ? Either.right(value)
    : read.fail(path, expected, value)
