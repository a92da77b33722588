/**
 * An @effect/ai toolkit, with its handlers from a Layer, run through our executor.
 */
import { Tool as AiTool, Toolkit as AiToolkit } from "@effect/ai"
import { OpenAiTool } from "@effect/ai-openai"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Either, Ref, Schema, Stream } from "effect"
import * as EffectAi from "../../src/EffectAi.js"
import { Executor, Permission, Tool, Toolkit, ToolResult } from "../../src/index.js"

class UnknownCity extends Schema.TaggedError<UnknownCity>()("UnknownCity", { city: Schema.String }) {
  override get message() {
    return `no forecast for ${this.city}`
  }
}

const Forecast = AiTool.make("forecast", {
  description: "The forecast for a city",
  parameters: { city: Schema.String, days: Schema.Int.pipe(Schema.between(1, 7)) },
  success: Schema.Struct({ city: Schema.String, summary: Schema.String }),
  failure: UnknownCity
}).annotate(AiTool.Title, "Forecast").annotate(AiTool.Readonly, true)

const Download = AiTool.make("download", {
  description: "Download a file, slowly",
  parameters: { url: Schema.String },
  success: Schema.String
})

const Write = AiTool.make("write", {
  description: "Append a line to a file",
  parameters: { file: Schema.String, line: Schema.String, ms: Schema.Int }
})

const Broken = AiTool.make("broken", { description: "Answers what its schema refuses", success: Schema.Number })

const Refuses = AiTool.make("refuses", {
  description: "Refuses, as a returned failure",
  success: Schema.String,
  failure: Schema.String,
  failureMode: "return"
})

const Weather = AiToolkit.make(Forecast, Download, Write, Broken, Refuses, OpenAiTool.WebSearch({}))

/** The handlers, and what they saw: lines written (with start and end marks) and whether a download was stopped. */
const setup = Effect.gen(function*() {
  const log = yield* Ref.make<ReadonlyArray<string>>([])
  const stopped = yield* Ref.make(false)
  const handlers = Weather.toLayer({
    forecast: ({ city, days }) =>
      city === "Atlantis"
        ? Effect.fail(new UnknownCity({ city }))
        : Effect.succeed({ city, summary: `${days} days of sun` }),
    download: ({ url }) =>
      Effect.gen(function*() {
        yield* Tool.progress({ message: "connecting", progress: 0, total: 2 })
        yield* Tool.progress({ message: `halfway through ${url}`, progress: 1, total: 2 })
        return yield* Effect.never
      }).pipe(Effect.onInterrupt(() => Ref.set(stopped, true))),
    write: ({ file, line, ms }) =>
      Effect.gen(function*() {
        yield* Ref.update(log, (lines) => [...lines, `start ${file}:${line}`])
        yield* Effect.sleep(ms)
        yield* Ref.update(log, (lines) => [...lines, `end ${file}:${line}`])
      }),
    broken: () => Effect.succeed("seven" as unknown as number),
    refuses: () => Effect.fail("not today")
  })
  return { log, stopped, handlers }
})

const modelText = (outcome: Executor.Outcome) =>
  Either.isRight(outcome) ? ToolResult.toText(outcome.right) : `${outcome.left._tag}: ${outcome.left.message}`

describe("EffectAi.fromToolkit", () => {
  it.effect("keeps names, descriptions and annotations, checks parameters with our schema, and leaves out provider tools", () =>
    Effect.gen(function*() {
      const { handlers } = yield* setup
      const kit = yield* EffectAi.fromToolkit(Weather).pipe(Effect.provide(handlers))
      expect(Toolkit.names(kit)).toEqual(["forecast", "download", "write", "broken", "refuses"])
      const [forecast] = Toolkit.definitions(kit, "mcp")
      expect(forecast.title).toBe("Forecast")
      expect(forecast.annotations).toEqual({ title: "Forecast", readOnlyHint: true })
      expect(forecast.inputSchema.required).toEqual(["city", "days"])
      expect(forecast.outputSchema?.properties).toEqual({ city: { type: "string" }, summary: { type: "string" } })
    }))

  it.effect("runs the @effect/ai handlers: results, typed and returned failures, bad arguments, broken results", () =>
    Effect.gen(function*() {
      const { handlers } = yield* setup
      const kit = yield* EffectAi.fromToolkit(Weather).pipe(Effect.provide(handlers))
      const outcomes = yield* Executor.run(kit, [
        { id: "1", name: "forecast", arguments: "{\"city\":\"Paris\",\"days\":3}" },
        { id: "2", name: "forecast", arguments: "{\"city\":\"Atlantis\",\"days\":3}" },
        { id: "3", name: "forecast", arguments: "{\"city\":\"Paris\",\"days\":9}" },
        { id: "4", name: "refuses", arguments: "{}" },
        { id: "5", name: "broken", arguments: "{}" }
      ])
      expect(outcomes.map(modelText)).toEqual([
        "{\"city\":\"Paris\",\"summary\":\"3 days of sun\"}",
        "ToolFailure: no forecast for Atlantis",
        "InvalidArguments: invalid arguments: days: expected an integer between 1 and 7, got 9",
        "ToolFailure: not today",
        expect.stringMatching(/^ToolDefect: tool "broken" panicked: .*Failed to validate tool call result/)
      ])
      expect(Either.isRight(outcomes[0]) && outcomes[0].right.structured).toEqual({
        city: "Paris",
        summary: "3 days of sun"
      })
    }))

  it.effect("a WithHandler gives the toolkit at once", () =>
    Effect.gen(function*() {
      const { handlers } = yield* setup
      const withHandler = yield* Effect.provide(Weather, handlers)
      const kit = EffectAi.fromToolkit(withHandler)
      expect(Toolkit.isToolkit(kit)).toBe(true)
      const [outcome] = yield* Executor.run(kit, [{ id: "1", name: "forecast", arguments: { city: "Oslo", days: 1 } }])
      expect(modelText(outcome)).toBe("{\"city\":\"Oslo\",\"summary\":\"1 days of sun\"}")
    }))

  it.live("through Executor.stream: an @effect/ai handler reports progress, and cancelling it runs its finalizers", () =>
    Effect.gen(function*() {
      const { handlers, stopped } = yield* setup
      const kit = yield* EffectAi.fromToolkit(Weather).pipe(Effect.provide(handlers))
      const events = yield* Effect.scoped(Effect.gen(function*() {
        const batch = yield* Executor.start(kit, [
          { id: "d", name: "download", arguments: { url: "https://example.com/big" } },
          { id: "f", name: "forecast", arguments: { city: "Paris", days: 2 } }
        ])
        return yield* batch.events.pipe(
          Stream.tap((event) =>
            event._tag === "Progress" && event.progress.progress === 1
              ? Effect.fork(batch.cancel(event.call.id))
              : Effect.void
          ),
          Stream.runCollect
        )
      }))
      const download = Chunk.toArray(events).filter((event) => event.call.id === "d").map((event) =>
        event._tag === "Progress"
          ? `Progress ${event.progress.message}`
          : event._tag === "Finished"
          ? `Finished ${modelText(event.outcome)}`
          : event._tag
      )
      expect(download).toEqual([
        "Started",
        "Progress connecting",
        "Progress halfway through https://example.com/big",
        "Finished ToolInterrupted: the call was cancelled before it finished"
      ])
      expect(yield* Ref.get(stopped)).toBe(true)
      const forecast = Chunk.toArray(events).find((event) => event.call.id === "f" && event._tag === "Finished")
      expect(forecast?._tag === "Finished" && modelText(forecast.outcome)).toBe(
        "{\"city\":\"Paris\",\"summary\":\"2 days of sun\"}"
      )
    }))

  it.live("options add resource keys: calls on one file run one after another in the model's order", () =>
    Effect.gen(function*() {
      const { handlers, log } = yield* setup
      const kit = yield* EffectAi.fromToolkit(Weather, { write: { resource: ({ file }) => `file:${file}` } }).pipe(
        Effect.provide(handlers)
      )
      yield* Executor.run(kit, [
        { id: "1", name: "write", arguments: { file: "a", line: "first", ms: 40 } },
        { id: "2", name: "write", arguments: { file: "a", line: "second", ms: 0 } },
        { id: "3", name: "write", arguments: { file: "b", line: "other", ms: 0 } }
      ])
      const lines = yield* Ref.get(log)
      expect(lines.filter((line) => line.includes("a:"))).toEqual([
        "start a:first",
        "end a:first",
        "start a:second",
        "end a:second"
      ])
      // the call on another file did not wait
      expect(lines.indexOf("end b:other")).toBeLessThan(lines.indexOf("end a:first"))
    }))

  it.effect("options add a permission to ask for, and a denied call never reaches the handler", () =>
    Effect.gen(function*() {
      const { handlers, log } = yield* setup
      const kit = yield* EffectAi.fromToolkit(Weather, {
        write: { permission: { action: "write", describe: ({ file }) => `append to ${file}` } }
      }).pipe(Effect.provide(handlers))
      const [outcome] = yield* Executor.run(kit, [{
        id: "1",
        name: "write",
        arguments: { file: "a", line: "x", ms: 0 }
      }])
        .pipe(Effect.provide(Permission.layer(() => Effect.succeed(Permission.deny()))))
      expect(modelText(outcome)).toBe("PermissionDenied: permission denied: append to a")
      expect(yield* Ref.get(log)).toEqual([])
    }))
})
