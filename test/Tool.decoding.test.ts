/**
 * The flat decoder (the usual shape of tool parameters, decided without Effect's decoder) and Effect's decoder
 * with `fromIssue` agree: for every generated input the flat decoder decides, it gives the value the decoder gives
 * (with the keys in the same order), or the problems `fromIssue` words from the decoder's issue, line for line.
 */
import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, Either, FastCheck as fc, ParseResult, Schema } from "effect"
import type * as AST from "effect/SchemaAST"
import type { Problem } from "../src/internal/argumentProblems.js"
import { flatDecoder, fromIssue } from "../src/internal/argumentProblems.js"

const SEED = 20261130
const RUNS = 400
const options: AST.ParseOptions = { errors: "all", onExcessProperty: "error" }

type Outcome =
  | { readonly _tag: "value"; readonly value: unknown; readonly keys: ReadonlyArray<string> }
  | { readonly _tag: "problems"; readonly problems: ReadonlyArray<Problem> }
  | { readonly _tag: "throws" }

/** What the tool's decoder gives without the flat path: Effect's decoder, and `fromIssue` for its issue. */
const reference = (schema: Schema.Schema.AnyNoContext, input: Record<string, unknown>): Outcome => {
  let result: Either.Either<unknown, ParseResult.ParseIssue>
  try {
    result = ParseResult.decodeUnknownEither(schema, options)(input)
  } catch {
    return { _tag: "throws" }
  }
  return Either.isRight(result)
    ? { _tag: "value", value: result.right, keys: Object.keys(result.right as object) }
    : { _tag: "problems", problems: fromIssue(result.left) }
}

const flat = (schema: Schema.Schema.AnyNoContext, input: Record<string, unknown>): Outcome | undefined => {
  const decide = flatDecoder(schema.ast, options)
  if (decide === undefined) throw new Error("the flat decoder refused the schema")
  const verdict = decide(input, false)
  if (verdict === undefined) return undefined
  // handed over rather than copied, when the input is ours and in order: the same value either way
  expect(decide(input, true)).toEqual(verdict)
  return Array.isArray(verdict)
    ? { _tag: "problems", problems: verdict }
    : { _tag: "value", value: verdict, keys: Object.keys(verdict) }
}

const mustBeAbsolute = Schema.String.pipe(
  Schema.filter((s) => s.startsWith("/") || "must be an absolute path")
)
const even = Schema.Int.pipe(Schema.filter((n) => n % 2 === 0), Schema.between(-10, 10))

const schemas = {
  "the benchmark's read_file": Schema.Struct({ path: Schema.String, max_bytes: Schema.optional(Schema.Int) }),
  "refinement chains": Schema.Struct({
    name: Schema.NonEmptyString,
    code: Schema.String.pipe(Schema.pattern(/^[A-Z]{3}$/)),
    note: Schema.String.pipe(Schema.minLength(2), Schema.maxLength(8)),
    count: Schema.Int.pipe(Schema.between(0, 100)),
    even,
    absolute: mustBeAbsolute
  }),
  "literals and unions": Schema.Struct({
    mode: Schema.Literal("fast", "slow"),
    one: Schema.Literal(1),
    value: Schema.Union(Schema.String, Schema.Number, Schema.Boolean),
    either: Schema.Union(Schema.Int, Schema.Literal("all")),
    tag: Schema.optional(Schema.NullOr(Schema.Literal("a", "b"))),
    deep: Schema.Union(Schema.Union(Schema.Literal(1), Schema.String), Schema.Union(Schema.Boolean, Schema.Null))
  }),
  "optional and nullable": Schema.Struct({
    limit: Schema.optional(Schema.Int.pipe(Schema.positive())),
    email: Schema.NullOr(Schema.String),
    exact: Schema.optionalWith(Schema.String, { exact: true }),
    maybe: Schema.UndefinedOr(Schema.Boolean)
  }),
  "described": Schema.Struct({
    path: Schema.String.annotations({ description: "Absolute path" }),
    flag: Schema.Boolean.annotations({ title: "flag" })
  })
} satisfies Record<string, Schema.Schema.AnyNoContext>

const KEYS = ["path", "max_bytes", "name", "code", "note", "count", "even", "absolute", "mode", "one", "value"]
  .concat(["either", "tag", "deep", "limit", "email", "exact", "maybe", "flag", "extra", "0", "with space"])

const anyValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.constantFrom("/abs", "ABC", "fast", "slow", "a", "b", "all", "", "x".repeat(120)),
  fc.integer({ min: -20, max: 200 }),
  fc.double({ noNaN: false }),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  fc.constant([1, 2]),
  fc.constant({ nested: true })
)

/** Inputs around a schema: valid values with some properties dropped, replaced or added. */
const inputs = (schema: Schema.Schema.AnyNoContext): fc.Arbitrary<Record<string, unknown>> => {
  const valid = Arbitrary.make(schema) as fc.Arbitrary<Record<string, unknown>>
  const encoded = valid.map((value) => Schema.encodeSync(schema)(value) as Record<string, unknown>)
  const noise = fc.dictionary(fc.constantFrom(...KEYS), anyValue, { maxKeys: 5 })
  const changed = fc.tuple(encoded, noise, fc.subarray(KEYS)).map(([base, extra, dropped]) => {
    const out: Record<string, unknown> = { ...base }
    for (const key of dropped.slice(0, 2)) delete out[key]
    return Object.assign(out, extra)
  })
  return fc.oneof(encoded, changed, fc.dictionary(fc.constantFrom(...KEYS), anyValue))
}

describe("the flat decoder", () => {
  for (const [name, schema] of Object.entries(schemas)) {
    it(`agrees with Effect's decoder and fromIssue: ${name}`, () => {
      let decided = 0
      let refused = 0
      fc.assert(
        fc.property(inputs(schema), (input) => {
          const verdict = flat(schema, input)
          if (verdict === undefined) return
          decided++
          if (verdict._tag === "problems") refused++
          expect(verdict).toEqual(reference(schema, input))
        }),
        { seed: SEED, numRuns: RUNS }
      )
      // most inputs are decided here, valid ones and invalid ones: the agreement is not vacuous
      expect(decided).toBeGreaterThan(RUNS * 0.8)
      expect(refused).toBeGreaterThan(RUNS * 0.2)
      expect(decided - refused).toBeGreaterThan(RUNS * 0.1)
    })
  }

  it("caps the problems as fromIssue does, counting the rest", () => {
    const schema = schemas["the benchmark's read_file"]
    const input: Record<string, unknown> = { path: 1 }
    for (let i = 0; i < 30; i++) input[`extra_${i}`] = i
    const verdict = flat(schema, input)
    expect(verdict).toEqual(reference(schema, input))
    expect(verdict?._tag === "problems" && verdict.problems.at(-1)?.message).toBe("…and 11 more problems")
  })

  it("gives the value with the schema's key order, not the input's", () => {
    const verdict = flat(schemas["the benchmark's read_file"], { max_bytes: 10, path: "/a" })
    expect(verdict).toEqual({ _tag: "value", value: { path: "/a", max_bytes: 10 }, keys: ["path", "max_bytes"] })
  })

  it("hands over an input of its own in the schema's order, and copies one the caller holds", () => {
    const decide = flatDecoder(schemas["the benchmark's read_file"].ast, options)!
    const ordered = { path: "/a", max_bytes: 10 }
    expect(decide(ordered, true)).toBe(ordered)
    const copy = decide(ordered, false)
    expect(copy).not.toBe(ordered)
    expect(copy).toEqual(ordered)
    const unordered = { max_bytes: 10, path: "/a" }
    expect(Object.keys(decide(unordered, true)!)).toEqual(["path", "max_bytes"])
  })

  it("leaves an input to the decoder where a refinement throws, so the throw is the call's defect as before", () => {
    const schema = Schema.Struct({ n: Schema.Number.pipe(Schema.filter((): boolean => boom())) })
    expect(flat(schema, { n: 1 })).toBeUndefined()
    expect(reference(schema, { n: 1 })).toEqual({ _tag: "throws" })
  })

  it("leaves to the decoder a required property that holds undefined and is missing", () => {
    const schema = Schema.Struct({ maybe: Schema.UndefinedOr(Schema.Boolean) })
    expect(flat(schema, {})).toBeUndefined()
    expect(reference(schema, {})).toEqual({ _tag: "value", value: { maybe: undefined }, keys: ["maybe"] })
  })

  it("is not built for shapes whose decoding or wording it does not follow", () => {
    const refused: ReadonlyArray<Schema.Schema.AnyNoContext> = [
      Schema.Struct({}),
      Schema.Struct({ nested: Schema.Struct({ a: Schema.String }) }),
      Schema.Struct({ list: Schema.Array(Schema.String) }),
      Schema.Struct({ trimmed: Schema.Trim }),
      Schema.Struct({ when: Schema.Date }),
      Schema.Struct({ n: Schema.NumberFromString }),
      Schema.Struct({ color: Schema.Enums({ Red: "red" }) }),
      Schema.Struct({ s: Schema.String.annotations({ message: () => "a name, please" }) }),
      Schema.Struct({ s: Schema.String }).annotations({ parseOptions: { onExcessProperty: "preserve" } }),
      Schema.Struct({ s: Schema.String.annotations({ decodingFallback: () => Either.right("x") }) }),
      Schema.Struct({ retries: Schema.optionalWith(Schema.Int, { default: () => 3 }) }),
      Schema.Record({ key: Schema.String, value: Schema.String }),
      Schema.Struct({ a: Schema.String }, Schema.Record({ key: Schema.String, value: Schema.String }))
    ]
    for (const schema of refused) expect(flatDecoder(schema.ast, options)).toBeUndefined()
  })

  it("leaves symbol keys to the decoder", () => {
    const input: Record<string | symbol, unknown> = { path: "/a", [Symbol.for("x")]: 1 }
    expect(flat(schemas["the benchmark's read_file"], input as Record<string, unknown>)).toBeUndefined()
  })
})

function boom(): never {
  throw new Error("boom")
}
