/**
 * Row 13: 10,000 calls whose handler is an `Effect.sync` (a handler that must run, so it needs a fiber: what a tool
 * doing I/O looks like, less the I/O), 8 in flight, through `Executor.run`, against
 * `Effect.forEach(calls, JSON.parse + a Schema decoder built once + the same handler, { concurrency: 8 })`, which
 * runs each element in a fiber of its own too.
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as Executor from "../src/Executor.js"
import * as Tool from "../src/Tool.js"
import * as Toolkit from "../src/Toolkit.js"
import * as Fixtures from "./fixtures.js"
import { interleave, median, micros, plan, ratioOf, report, timed } from "./harness.js"

const CALLS = 10_000
const MAX_PARALLEL = 8

const calls = Fixtures.validCalls(CALLS)

/** The one handler both sides run: it reads its input, so neither side can skip it. */
let seen = 0
const handler = (params: { readonly path: string }) =>
  Effect.sync(() => {
    seen += params.path.length
  })

const ReadFileSync = Tool.make(Fixtures.TOOL_NAME, {
  description: Fixtures.DESCRIPTION,
  parameters: Fixtures.parameters,
  handler
})

const ours = Executor.run(Toolkit.make(ReadFileSync), calls, { maxParallel: MAX_PARALLEL })

const decode = ParseResult.decodeUnknownEither(Schema.Struct(Fixtures.parameters), {
  errors: "all",
  onExcessProperty: "error"
})
const baseline = Effect.forEach(calls, (call) =>
  Effect.suspend(() => {
    const decoded = decode(JSON.parse(call.arguments))
    return Either.isLeft(decoded) ? Effect.fail(decoded.left) : handler(decoded.right)
  }), { concurrency: MAX_PARALLEL })

const run = (effect: Effect.Effect<unknown, unknown>) => () => timed(() => Effect.runPromise(effect))

const check = async () => {
  const before = seen
  const outcomes = await Effect.runPromise(ours)
  if (!outcomes.every(Either.isRight)) throw new Error("row 13: a call failed")
  if (seen === before) throw new Error("row 13: the handler did not run")
}

const main = async () => {
  await check()
  const figures = await interleave({ ours: run(ours), baseline: run(baseline) }, {
    ...plan({ warmup: 3, rounds: 11 }),
    label: "row 13"
  })
  const perCall = (label: "ours" | "baseline") => micros(median(figures[label]) / CALLS)
  const ratio = ratioOf(figures.ours, figures.baseline)
  report([{
    id: "13",
    what: `${CALLS.toLocaleString("en-US")} calls, the handler an \`Effect.sync\` (it needs a fiber), maxParallel 8`,
    figure: `${perCall("ours")}/call`,
    baseline: `forEach + decoder, the same handler ${perCall("baseline")}/call`,
    ...ratio,
    target: "<= 1.0x",
    met: ratio.ratio <= 1
  }])
}

await main()
