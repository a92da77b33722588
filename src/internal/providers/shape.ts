/**
 * Reading a provider's response: the checks every `calls` makes, and the bounded description of a value that did
 * not pass them.
 *
 * A response is untrusted JSON (it can come from a proxy, a local model server, a test double): the checks never
 * throw on it, never stringify it, and describe what came in a bounded number of characters whatever its size.
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

const article = (noun: string): string => (/^[aeiou]/.test(noun) ? `an ${noun}` : `a ${noun}`)

/**
 * A format whose calls are the items of one type in a list, the response given whole or as that list
 * (Responses' `output`, Anthropic's `content`, @effect/ai's parts).
 */
export interface ListFormat {
  /** What the whole response is (`a response`), and the key of its list (`output`). */
  readonly whole: string
  readonly field: string
  /** What an item is (`output item`). */
  readonly item: string
  /** The type of the items that are calls, and the keys of a call's id and arguments. */
  readonly type: string
  readonly id: string
  readonly arguments: string
  /** What the arguments are, for the error when they are missing. */
  readonly argumentsExpected: string
  /** A call item that is not the model's to answer (one the provider ran itself). */
  readonly skip?: ((item: Readonly<Record<string, unknown>>) => boolean) | undefined
  /** A check of the whole response beyond its list. */
  readonly check?: ((whole: Readonly<Record<string, unknown>>) => Either.Either<void, ProviderFormatError>) | undefined
}

/** The calls of a {@link ListFormat} response, in order. */
export const listCalls = (read: Reader, format: ListFormat) => {
  const item = (value: unknown, path: string): Either.Either<ToolCall | undefined, ProviderFormatError> =>
    Either.gen(function*() {
      if (!isRecord(value)) return yield* read.fail(path, article(format.item), value)
      const type = yield* stringAt(read, at(path, "type"), value.type, `the ${format.item}'s type`)
      if (type !== format.type || format.skip?.(value) === true) return undefined
      const id = yield* stringAt(read, at(path, format.id), value[format.id])
      const name = yield* stringAt(read, at(path, "name"), value.name)
      const args = value[format.arguments]
      if (args === undefined) return yield* read.fail(at(path, format.arguments), format.argumentsExpected, args)
      return { id, name, arguments: args }
    })
  const list = `an array of ${format.item}s (${format.whole}, or its ${format.field} array)`
  return (response: unknown): Either.Either<ReadonlyArray<ToolCall>, ProviderFormatError> =>
    Either.gen(function*() {
      if (Array.isArray(response)) return yield* collect(response, (each, index) => item(each, at("", index)))
      if (!isRecord(response)) return yield* read.fail("", `${format.whole} or its ${format.field} array`, response)
      if (format.check !== undefined) yield* format.check(response)
      const items = response[format.field]
      if (!Array.isArray(items)) return yield* read.fail(format.field, list, items)
      return yield* collect(items, (each, index) => item(each, at(format.field, index)))
    })
}
