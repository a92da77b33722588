/**
 * Rows 1 and 2: 10,000 calls of the no-op tool through `Executor.run` (`maxParallel` 8), arguments as raw JSON
 * strings, against
 * - B1: `Effect.forEach(calls, JSON.parse + a Schema decoder built once + the handler, { concurrency: 8 })`, the
 *   least a program can do with Effect and a Schema;
 * - B2: `@effect/ai`'s `Toolkit.handle`, called the way its `LanguageModel` resolves tool calls (`Effect.forEach`
 *   over the calls with the request's concurrency, the arguments parsed from the provider's JSON);
 * and the same batch with every call's arguments invalid, against our valid batch.
 */
import * as AiTool from "@effect/ai/Tool"
import * as AiToolkit from "@effect/ai/Toolkit"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as Executor from "../src/Executor.js"
import * as Toolkit from "../src/Toolkit.js"
import * as Fixtures from "./fixtures.js"
import type { Line, Variant } from "./harness.js"
import { interleave, median, micros, plan, quick, ratioOf, report, timed } from "./harness.js"

const CALLS = 10_000
const MAX_PARALLEL = 8

const valid = Fixtures.validCalls(CALLS)
const invalid = Fixtures.invalidCalls(CALLS)

// B1: a decoder built once, JSON.parse, the handler; the same Effect.void as our tool's
const decode = ParseResult.decodeUnknownEither(Schema.Struct(Fixtures.parameters), {
  errors: "all",
  onExcessProperty: "error"
})
const handler = (_: unknown): Effect.Effect<void> => Effect.void
const b1 = Effect.forEach(valid, (call) =>
  Effect.suspend(() => {
    const decoded = decode(JSON.parse(call.arguments))
    return Either.isLeft(decoded) ? Effect.fail(decoded.left) : handler(decoded.right)
  }), { concurrency: MAX_PARALLEL })

// B2: @effect/ai 0.37, its toolkit committed with handlers from context, as `LanguageModel.generateText` does
const AiReadFile = AiTool.make(Fixtures.TOOL_NAME, {
  description: Fixtures.DESCRIPTION,
  parameters: Fixtures.parameters
})
const AiKit = AiToolkit.make(AiReadFile)
const b2 = Effect.gen(function*() {
  const withHandler = yield* AiKit.pipe(Effect.provide(AiKit.toLayer({ read_file: () => Effect.void })))
  return Effect.forEach(
    valid,
    (call) => withHandler.handle(Fixtures.TOOL_NAME, JSON.parse(call.arguments)),
    { concurrency: MAX_PARALLEL }
  )
}).pipe(Effect.runSync)

const ours = Executor.run(Fixtures.toolkit, valid, { maxParallel: MAX_PARALLEL })
const oursInvalid = Executor.run(Fixtures.toolkit, invalid, { maxParallel: MAX_PARALLEL })
const oursGen = Executor.run(Toolkit.make(Fixtures.ReadFileGen), valid, { maxParallel: MAX_PARALLEL })

const run = (effect: Effect.Effect<unknown, unknown>) => () => timed(() => Effect.runPromise(effect))

// what the runs produce is checked once, so a broken variant cannot look fast
const check = async () => {
  const good = await Effect.runPromise(ours)
  const bad = await Effect.runPromise(oursInvalid)
  if (!good.every(Either.isRight)) throw new Error("row 1: a valid call failed")
  if (!bad.every((o) => Either.isLeft(o) && o.left._tag === "InvalidArguments")) {
    throw new Error("row 2: an invalid call was not refused")
  }
}

const main = async () => {
  await check()
  const variants: Record<string, Variant> = { ours: run(ours), invalid: run(oursInvalid), b1: run(b1), b2: run(b2) }
  // for information only: left out of a quick run
  if (!quick) variants.gen = run(oursGen)
  const figures = await interleave(variants, { ...plan({ warmup: 3, rounds: 9 }), label: "rows 1-2" })
  const perCall = (label: string) => micros(median(figures[label]) / CALLS)
  const vsB1 = ratioOf(figures.ours, figures.b1)
  const vsB2 = ratioOf(figures.ours, figures.b2)
  const invalidVsValid = ratioOf(figures.invalid, figures.ours)
  const gen = figures.gen
  const what = `${CALLS.toLocaleString("en-US")} no-op calls, raw JSON arguments, \`Executor.run\`, maxParallel 8`
  const lines: Array<Line> = [
    {
      id: "1a",
      what,
      figure: `${perCall("ours")}/call`,
      baseline: `B1 (forEach + decoder) ${perCall("b1")}/call`,
      ...vsB1,
      target: "<= 1.0x (stretch <= 0.5x)",
      met: vsB1.ratio <= 1
    },
    {
      id: "1b",
      what,
      figure: `${perCall("ours")}/call`,
      baseline: `B2 (@effect/ai Toolkit.handle) ${perCall("b2")}/call`,
      ...vsB2,
      target: "<= 0.167x (1/6)",
      met: vsB2.ratio <= 1 / 6
    },
    ...(gen === undefined ? [] : [{
      id: "1c",
      what: "the same, the handler an `Effect.gen` (synchronous, but needs a fiber); for information",
      figure: `${perCall("gen")}/call`,
      baseline: `B1 ${perCall("b1")}/call`,
      ...ratioOf(gen, figures.b1),
      target: "-",
      met: null
    }]),
    {
      id: "2",
      what: "the same batch, every call's arguments invalid (two problems each)",
      figure: `${perCall("invalid")}/call`,
      baseline: `row 1 valid ${perCall("ours")}/call`,
      ...invalidVsValid,
      target: "<= 1.5x",
      met: invalidVsValid.ratio <= 1.5
    }
  ]
  report(lines)
}

await main()
