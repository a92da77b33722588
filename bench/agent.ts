/**
 * Row 9: one agent step of 8 calls (8 tools, one call each, a handler answering a short text) against a scripted
 * in-process @effect/ai `LanguageModel` (`LanguageModel.make`, whose `generateText` returns the 8 tool-call parts
 * and a finish part: no HTTP), through
 * - ours: `Agent.run({ toolkit, prompt, maxSteps: 1 })` with the default model, the `LanguageModel` service: the
 *   request, the batch through the executor, the outcomes appended to the transcript, the result;
 * - @effect/ai's own resolution: `LanguageModel.generateText({ prompt, toolkit })` with the same 8 handlers (its
 *   toolkit committed once, as row 1's B2), which resolves the calls and returns;
 * - the floors each stands on: `generateText({ prompt, toolkit, disableToolCallResolution: true })`, the model
 *   request alone (the prompt, the response's decoding, no call run), with @effect/ai's toolkit for theirs and
 *   `EffectAi.toolkit` of ours for ours (what the loop asks with).
 * The row's ratio (9a) is the loop's own overhead over @effect/ai's: (ours - our floor) / (@effect/ai - its floor).
 * 9b measures the loop's work alone, without a LanguageModel (a plain-function model answering the same turn), as
 * a check on 9a's differences, and 9c the executor's part of it (the batch alone); 9d compares the whole steps.
 */
import * as LanguageModel from "@effect/ai/LanguageModel"
import * as AiTool from "@effect/ai/Tool"
import * as AiToolkit from "@effect/ai/Toolkit"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Agent from "../src/Agent.js"
import * as EffectAi from "../src/EffectAi.js"
import * as Executor from "../src/Executor.js"
import * as Tool from "../src/Tool.js"
import * as Toolkit from "../src/Toolkit.js"
import type { Line } from "./harness.js"
import { median, micros, plan, progress, quick, ratioOf, report } from "./harness.js"

const TOOLS = 8
const STEPS = quick ? 300 : 1_000
const PROMPT = "Read the eight files."

const names = Array.from({ length: TOOLS }, (_, i) => `read_${i}`)
const parameters = { path: Schema.String.annotations({ description: "Absolute path to read" }) }
/** The one handler both sides run, for each of the 8 tools. */
const handler = ({ path }: { readonly path: string }) => Effect.succeed(`read ${path}`)

const ours = Toolkit.make(
  ...names.map((name) => Tool.make(name, { description: `Read a file (${name})`, parameters, handler }))
)

const AiKit = AiToolkit.make(
  ...names.map((name) =>
    AiTool.make(name, { description: `Read a file (${name})`, parameters, success: Schema.String })
  )
)
const aiHandlers = Object.fromEntries(names.map((name) => [name, handler])) as any
const aiKit = Effect.runSync(AiKit.pipe(Effect.provide(AiKit.toLayer(aiHandlers)))) as AiToolkit.WithHandler<any>

// the model's answer: one call of each tool, then the finish part with usage
const parts = [
  ...names.map((name, i) => ({
    type: "tool-call" as const,
    id: `call_${i}`,
    name,
    params: { path: `/srv/data/${i}.txt` }
  })),
  {
    type: "finish" as const,
    reason: "tool-calls" as const,
    usage: { inputTokens: 100, outputTokens: 80, totalTokens: 180 }
  }
]
const model = Effect.runSync(LanguageModel.make({
  generateText: () => Effect.succeed(parts),
  streamText: () => Stream.empty
}))

const provided = <A, E>(effect: Effect.Effect<A, E, LanguageModel.LanguageModel>) =>
  Effect.provideService(effect, LanguageModel.LanguageModel, model)

const oursStep = provided(Agent.run({ toolkit: ours, prompt: PROMPT, maxSteps: 1 }))
// the loop alone: the same turn from a plain-function model, no LanguageModel
const calls = parts.flatMap((part) =>
  part.type === "tool-call" ? [{ id: part.id, name: part.name, arguments: part.params }] : []
)
const turn: Agent.Turn = { calls }
const plainStep = Agent.run({ toolkit: ours, prompt: PROMPT, maxSteps: 1, model: () => Effect.succeed(turn) })
// and the batch alone, what the executor costs of it
const batchStep = Executor.run(ours, calls)
const theirsStep = provided(LanguageModel.generateText({ prompt: PROMPT, toolkit: aiKit }))
const floorStep = provided(
  LanguageModel.generateText({ prompt: PROMPT, toolkit: aiKit, disableToolCallResolution: true })
)
// our request's own floor: the same request with our tools as @effect/ai tools (what the loop asks with)
const oursFloorStep = provided(
  LanguageModel.generateText({ prompt: PROMPT, toolkit: EffectAi.toolkit(ours), disableToolCallResolution: true })
)

/**
 * The figures the row compares are differences of steps many times larger than them (the request is most of a
 * step: @effect/ai builds and runs a response decoder on every request, and the garbage it makes costs a third of
 * the time), so:
 * - the variants are interleaved step by step (A B C D E, B C D E A, ...) and each step is timed on its own; a
 *   round's figure for a difference is the median over its steps of the per-step difference (ours minus our floor
 *   in the same group), so a collection or a change in the machine's load moves one step's difference, not the
 *   median;
 * - every timed step starts in the same state: right after an untimed @effect/ai request (and what it left
 *   scheduled). Whatever follows a request runs slower (its caches are cold, the request's leftovers run), and
 *   without this the variant that happens to follow a request in the rotation pays for it: measured, 0.3 ms of a
 *   0.06 ms step. In a real loop the calls follow the request too, which is what each step now measures.
 */
const reset = floorStep

/**
 * Waits until what a step left scheduled has run (a request ends its span and closes its scope after its result
 * is handed over): inside the step's own time, so the step after it does not pay for it. Every variant pays the
 * one wait, which the differences cancel.
 */
const drain = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

interface Round {
  /** Per step, each variant's time in milliseconds. */
  readonly times: Record<string, Array<number>>
}

const measure = async (
  variants: Readonly<Record<string, Effect.Effect<unknown, unknown>>>,
  options: { readonly warmup: number; readonly rounds: number }
): Promise<Array<Round>> => {
  const labels = Object.keys(variants)
  const rounds: Array<Round> = []
  for (let round = 0; round < options.warmup + options.rounds; round++) {
    const times: Record<string, Array<number>> = Object.fromEntries(labels.map((label) => [label, []]))
    for (let step = 0; step < STEPS; step++) {
      for (let k = 0; k < labels.length; k++) {
        const label = labels[(step + k) % labels.length]
        await Effect.runPromise(reset)
        await drain()
        const start = performance.now()
        await Effect.runPromise(variants[label])
        await drain()
        times[label].push(performance.now() - start)
      }
    }
    if (round >= options.warmup) rounds.push({ times })
    progress(`row 9 ${round + 1}/${options.warmup + options.rounds}${round < options.warmup ? " (warm-up)" : ""}`)
  }
  return rounds
}

/** The median over a round's steps of `a - b`, step by step. */
const medianDifference = (round: Round, a: string, b: string): number =>
  median(round.times[a].map((ms, step) => ms - round.times[b][step]))

const total = (values: ReadonlyArray<number>): number => values.reduce((sum, ms) => sum + ms, 0)

// what the steps produce is checked once, so a broken variant cannot look fast
const check = async () => {
  const result = await Effect.runPromise(oursStep)
  const outcomes = result.steps[0]?.outcomes ?? []
  if (result.reason !== "MaxSteps" || outcomes.length !== TOOLS || !outcomes.every(Either.isRight)) {
    throw new Error(`row 9: our step did not run its ${TOOLS} calls`)
  }
  if (result.transcript.length !== 3) throw new Error("row 9: our step did not append the outcomes")
  const theirs = await Effect.runPromise(theirsStep)
  if (theirs.toolResults.length !== TOOLS || theirs.toolResults.some((r) => r.isFailure)) {
    throw new Error(`row 9: @effect/ai's step did not resolve its ${TOOLS} calls`)
  }
  for (const step of [floorStep, oursFloorStep]) {
    const floor = await Effect.runPromise(step)
    if (floor.toolCalls.length !== TOOLS || floor.toolResults.length !== 0) throw new Error("row 9: a floor ran calls")
  }
}

const main = async () => {
  await check()
  const rounds = await measure(
    {
      ours: oursStep,
      oursFloor: oursFloorStep,
      theirs: theirsStep,
      floor: floorStep,
      plain: plainStep,
      batch: batchStep
    },
    plan({ warmup: 2, rounds: 7 })
  )
  const oursOverhead = rounds.map((round) => medianDifference(round, "ours", "oursFloor"))
  const theirsOverhead = rounds.map((round) => medianDifference(round, "theirs", "floor"))
  const plainLoop = rounds.map((round) => median(round.times.plain))
  const perStep = (label: string) => micros(median(rounds.map((round) => median(round.times[label]))))
  const overhead = ratioOf(oursOverhead, theirsOverhead)
  const direct = ratioOf(plainLoop, theirsOverhead)
  const batch = ratioOf(rounds.map((round) => median(round.times.batch)), theirsOverhead)
  const whole = ratioOf(
    rounds.map((round) => total(round.times.ours)),
    rounds.map((round) => total(round.times.theirs))
  )
  const lines: Array<Line> = [
    {
      id: "9a",
      what: `one agent step of ${TOOLS} calls against a scripted in-process LanguageModel: what the loop adds to the ` +
        `model request (median per-step difference; the requests alone: ours ${perStep("oursFloor")}, ` +
        `@effect/ai's ${perStep("floor")})`,
      figure: `${micros(median(oursOverhead))}/step`,
      baseline: `@effect/ai generateText({ toolkit }) resolution ${micros(median(theirsOverhead))}/step`,
      ...overhead,
      target: "<= 0.5x",
      met: overhead.ratio <= 0.5
    },
    {
      id: "9b",
      what: "the loop's own work measured alone: the same step with a plain-function model answering the same turn " +
        "(no LanguageModel); for information",
      figure: `${micros(median(plainLoop))}/step`,
      baseline: `@effect/ai resolution ${micros(median(theirsOverhead))}/step`,
      ...direct,
      target: "-",
      met: null
    },
    {
      id: "9c",
      what: "of which the executor: the step's batch alone (`Executor.run` of the 8 calls); for information",
      figure: `${perStep("batch")}/step`,
      baseline: `@effect/ai resolution ${micros(median(theirsOverhead))}/step`,
      ...batch,
      target: "-",
      met: null
    },
    {
      id: "9d",
      what: "the same step, whole (request included); for information",
      figure: `${perStep("ours")}/step`,
      baseline: `@effect/ai ${perStep("theirs")}/step`,
      ...whole,
      target: "-",
      met: null
    }
  ]
  report(lines)
}

await main()
