/**
 * The example of README.md, run (see ./examples.ts for how the page and this file are kept the same).
 */
import { OpenAiClient, OpenAiLanguageModel } from "@effect/ai-openai"
import { FetchHttpClient } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Config, Console, Effect, Either, Layer, Schema } from "effect"
import { Agent, Executor, Tool, ToolError, Toolkit, ToolResult } from "../src/index.js"
import { checkExamples } from "./examples.js"

// #region quick-start
// A typed tool: its parameters are a Schema, its handler an Effect.
const Weather = Tool.make("get_weather", {
  description: "Current weather for a city",
  parameters: {
    city: Schema.String.annotations({ description: "City name, e.g. Paris" }),
    unit: Schema.optional(Schema.Literal("celsius", "fahrenheit"))
  },
  annotations: { readOnly: true },
  handler: ({ city, unit = "celsius" }) => Effect.succeed(`It is 21 degrees ${unit} in ${city}.`)
})

const kit = Toolkit.make(Weather)

// What you send the provider with your request:
const tools = Toolkit.definitions(kit, "openAiChat")

// What the model answered: run its calls and hand the outputs back, in call order.
const program = Effect.gen(function*() {
  const outcomes = yield* Executor.run(kit, [
    { id: "call_1", name: "get_weather", arguments: "{\"city\":\"Paris\"}" },
    { id: "call_2", name: "get_weather", arguments: "{\"city\":\"Oslo\",\"unit\":\"kelvin\"}" }
  ])
  return outcomes.map((o) => Either.isRight(o) ? ToolResult.toText(o.right) : ToolError.toModelText(o.left))
})

Effect.runPromise(program).then(console.log)
// [
//   "It is 21 degrees celsius in Paris.",
//   "Error: invalid arguments: unit: expected one of \"celsius\", \"fahrenheit\", got \"kelvin\""
// ]
// #endregion

// #region typed-call
class FileNotFound extends Schema.TaggedError<FileNotFound>()("FileNotFound", { path: Schema.String }) {}

const ReadFile = Tool.make("read_file", {
  description: "Read a file",
  parameters: { path: Schema.String },
  failure: FileNotFound,
  handler: ({ path }) => path === "notes.md" ? Effect.succeed("# Notes") : Effect.fail(new FileNotFound({ path }))
})

const files = Toolkit.make(ReadFile)

// FileNotFound is handled here and gone from the error type: Effect<string, ToolError, never>
const readme = Toolkit.call(files, "read_file", { path: "README.md" }).pipe(
  Effect.catchTag("FileNotFound", ({ path }) => Effect.succeed(`(${path} is missing)`))
)
// => "(README.md is missing)"
// #endregion

// #region agent
const CityWeather = Tool.make("get_weather", {
  description: "The current weather in a city",
  parameters: { city: Schema.String },
  handler: ({ city }) => Effect.succeed(`Sunny, 22 °C in ${city}`)
})

const OpenAi = OpenAiLanguageModel.layer({ model: "gpt-4.1" }).pipe(
  Layer.provide(OpenAiClient.layerConfig({ apiKey: Config.redacted("OPENAI_API_KEY") })),
  Layer.provide(FetchHttpClient.layer)
)

const agent = Agent.run({
  toolkit: Toolkit.make(CityWeather),
  prompt: "What's the weather in Paris and Bogotá?",
  maxSteps: 5
}).pipe(
  Effect.flatMap((result) => Console.log(result.text)),
  Effect.provide(OpenAi)
)

// Effect.runPromise(agent)
// #endregion

describe("README.md", () => {
  it("shows the example exactly as this file runs it", () =>
    checkExamples(new URL("../README.md", import.meta.url), new URL("./readme.test.ts", import.meta.url)))

  it.effect("the quick start gives the outputs it promises", () =>
    Effect.gen(function*() {
      expect(yield* program).toEqual([
        "It is 21 degrees celsius in Paris.",
        "Error: invalid arguments: unit: expected one of \"celsius\", \"fahrenheit\", got \"kelvin\""
      ])
      expect(tools[0].function.name).toBe("get_weather")
    }))

  it("the agent loop is an Effect that needs nothing but what the OpenAI layer gives", () => {
    // it is not run here (it asks OpenAI); docs/agent.md runs the same loop against a local OpenAI-shaped server
    const needs: Effect.Effect<void, unknown, never> = agent
    expect(Effect.isEffect(needs)).toBe(true)
  })

  it.effect("the typed pipeline handles the tool's own failure and keeps the rest typed", () =>
    Effect.gen(function*() {
      expect(yield* readme).toBe("(README.md is missing)")
      expect(yield* Toolkit.call(files, "read_file", { path: "notes.md" })).toBe("# Notes")
      const failure: Effect.Effect<string, ToolError.ToolError, never> = readme
      expect(failure).toBeDefined()
    }))
})
