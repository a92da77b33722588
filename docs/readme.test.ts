/**
 * The example of README.md, run (see ./examples.ts for how the page and this file are kept the same).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Schema } from "effect"
import { Executor, Tool, ToolError, Toolkit, ToolResult } from "../src/index.js"
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

  it.effect("the typed pipeline handles the tool's own failure and keeps the rest typed", () =>
    Effect.gen(function*() {
      expect(yield* readme).toBe("(README.md is missing)")
      expect(yield* Toolkit.call(files, "read_file", { path: "notes.md" })).toBe("# Notes")
      const failure: Effect.Effect<string, ToolError.ToolError, never> = readme
      expect(failure).toBeDefined()
    }))
})
