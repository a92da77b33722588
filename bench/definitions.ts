/**
 * Row 14: 1,000 tools listed and projected: `Toolkit.definitions(kit, "openAiChat")` (what goes into every model
 * request's `tools`) against building the same JSON by hand (the definitions written as object literals, the
 * least a program can do to send them). Checked equal once. Two figures:
 * - 14a, repeated: the same toolkit's definitions asked for again (each step of an agent asks);
 * - 14b, cold: the first ask of a toolkit whose tools have never been projected (the tools made by `Tool.make` in
 *   the round, outside the timing), against the same literals;
 * - 14c, for information: making the 1,000 tools (`Tool.make`: each tool's JSON Schema derived from its Effect
 *   Schema, its decoder planned), which a program does once, at its start.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { isDeepStrictEqual } from "node:util"
import * as Tool from "../src/Tool.js"
import * as Toolkit from "../src/Toolkit.js"
import { interleave, median, micros, millis, plan, quick, ratioOf, report, timed } from "./harness.js"

const TOOLS = 1_000
/** Asks per round of the repeated figure. */
const REPEATS = quick ? 20 : 50

const names = Array.from({ length: TOOLS }, (_, i) => `read_${i}`)

const makeTools = () =>
  names.map((name, i) =>
    Tool.make(name, {
      description: `Read a file (${i})`,
      parameters: {
        path: Schema.String.annotations({ description: "Absolute path to read" }),
        max_bytes: Schema.optional(Schema.Int.annotations({ description: "Read at most this many bytes" })),
        encoding: Schema.optional(Schema.Literal("utf8", "base64")),
        follow: Schema.optional(Schema.Boolean)
      },
      handler: () => Effect.succeed("")
    })
  )

/** The same definitions, written by hand. */
const byHand = () =>
  names.map((name, i) => ({
    type: "function",
    function: {
      name,
      description: `Read a file (${i})`,
      parameters: {
        type: "object",
        properties: {
          path: { type: "string", description: "Absolute path to read" },
          max_bytes: { type: "integer", description: "Read at most this many bytes" },
          encoding: { type: "string", enum: ["utf8", "base64"] },
          follow: { type: "boolean" }
        },
        required: ["path"],
        additionalProperties: false
      }
    }
  }))

const kit = Toolkit.make(...makeTools())

let sink = 0
const repeated = (step: () => ReadonlyArray<unknown>) => () =>
  timed(async () => {
    for (let r = 0; r < REPEATS; r++) sink += step().length
  })

const main = async () => {
  if (!isDeepStrictEqual(Toolkit.definitions(kit, "openAiChat"), byHand())) {
    throw new Error("row 14: our definitions are not the ones written by hand")
  }
  const warm = await interleave({
    ours: repeated(() => Toolkit.definitions(kit, "openAiChat")),
    byHand: repeated(byHand)
  }, { ...plan({ warmup: 3, rounds: 11 }), label: "row 14 repeated" })
  const making: Array<number> = []
  const cold = await interleave({
    ours: () => {
      const started = performance.now()
      const fresh = Toolkit.make(...makeTools())
      making.push(performance.now() - started)
      return timed(async () => sink += Toolkit.definitions(fresh, "openAiChat").length)
    },
    byHand: () => timed(async () => sink += byHand().length)
  }, { ...plan({ warmup: 2, rounds: 9 }), label: "row 14 cold" })
  const made = making.slice(making.length - cold.ours.length)
  if (sink === 0) throw new Error("row 14: nothing was built")
  const warmRatio = ratioOf(warm.ours, warm.byHand)
  const coldRatio = ratioOf(cold.ours, cold.byHand)
  const perAsk = (figures: ReadonlyArray<number>) => micros(median(figures) / REPEATS)
  report([
    {
      id: "14a",
      what: `${TOOLS.toLocaleString("en-US")} tools' definitions (openAiChat), asked for again`,
      figure: `${perAsk(warm.ours)}/ask`,
      baseline: `the same JSON built by hand ${perAsk(warm.byHand)}/ask`,
      ...warmRatio,
      target: "<= 2x",
      met: warmRatio.ratio <= 2
    },
    {
      id: "14b",
      what: "the same, cold: the first ask of a toolkit whose tools were just made",
      figure: millis(median(cold.ours)),
      baseline: `by hand ${millis(median(cold.byHand))}`,
      ...coldRatio,
      target: "<= 2x",
      met: coldRatio.ratio <= 2
    },
    {
      id: "14c",
      what: "making the 1,000 tools (`Tool.make`), once at a program's start; for information",
      figure: millis(median(made)),
      baseline: `the definitions by hand ${millis(median(cold.byHand))}`,
      ...ratioOf(made, cold.byHand),
      target: "-",
      met: null
    }
  ])
}

await main()
