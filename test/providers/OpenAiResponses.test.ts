import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Schema } from "effect"
import { Executor, OpenAiResponses, Toolkit, ToolResult } from "../../src/index.js"
import { Responses, strictly } from "./requestSchemas.js"
import { fixtures, kit, PDF_DATA, PNG, refusals } from "./toolkit.js"

const f = fixtures("openai-responses.json")
const chat = fixtures("openai-chat.json")
const gemini = fixtures("gemini.json")

const responseOf = (name: string) => f[name] as OpenAiResponses.Response
const callsOf = (name: string) => Either.getOrThrow(OpenAiResponses.calls(responseOf(name)))

describe("OpenAiResponses.calls", () => {
  it("reads function_call items in output order by call_id, skipping other items", () => {
    expect(callsOf("parallel-calls")).toEqual([
      { id: "call_12345xyz", name: "get_weather", arguments: "{\"location\":\"Paris, France\"}" },
      {
        id: "call_67890abc",
        name: "get_weather",
        arguments: "{\"location\":\"Bogotá, Colombia\",\"unit\":\"fahrenheit\"}"
      }
    ])
  })

  it("reads a response's output array as it reads the response", () => {
    expect(OpenAiResponses.calls(responseOf("parallel-calls").output)).toEqual(Either.right(callsOf("parallel-calls")))
  })

  it("gives no calls for a response that only has a message", () => {
    expect(callsOf("no-calls")).toEqual([])
  })

  it.effect("keeps a malformed argument string, which the executor answers with InvalidArguments", () =>
    Effect.gen(function*() {
      const calls = callsOf("malformed-arguments")
      expect(calls[0].arguments).toBe("{\"location\":\"Paris, Fra")
      const [outcome] = yield* Executor.run(kit, calls)
      expect(Either.isLeft(outcome) && outcome.left._tag).toBe("InvalidArguments")
    }))

  it("refuses other providers' responses and malformed items with a ProviderFormatError", () => {
    expect(refusals(OpenAiResponses.calls, [
      chat["parallel-calls"],
      gemini["parallel-calls"],
      42,
      [{ type: "function_call", name: "x", arguments: "{}" }],
      [{ id: "x" }]
    ])).toEqual([
      "not an OpenAI Responses response: output: expected an array of output items (a response, or its output " +
      "array), got nothing",
      "not an OpenAI Responses response: output: expected an array of output items (a response, or its output " +
      "array), got nothing",
      "not an OpenAI Responses response: expected a response or its output array, got the number 42",
      "not an OpenAI Responses response: [0].call_id: expected a string, got nothing",
      "not an OpenAI Responses response: [0].type: expected the output item's type, got nothing"
    ])
  })
})

describe("OpenAiResponses.results", () => {
  const run = (name: string) =>
    Effect.map(Executor.run(kit, callsOf(name)), (outcomes) => OpenAiResponses.results(callsOf(name), outcomes))

  it.effect("answers each call with a function_call_output whose output is a string for text", () =>
    Effect.gen(function*() {
      expect(yield* run("parallel-calls")).toEqual([
        { type: "function_call_output", call_id: "call_12345xyz", output: "Sunny, 22 °C in Paris, France" },
        { type: "function_call_output", call_id: "call_67890abc", output: "Sunny, 72 °F in Bogotá, Colombia" }
      ])
    }))

  it.effect("carries an error as its one Error: line, and media as input parts in the result's order", () =>
    Effect.gen(function*() {
      expect(yield* run("image-and-error")).toEqual([
        {
          type: "function_call_output",
          call_id: "call_map",
          output: [
            { type: "input_text", text: "Map of Paris, France" },
            { type: "input_image", image_url: `data:image/png;base64,${PNG}`, detail: "auto" }
          ]
        },
        { type: "function_call_output", call_id: "call_atlantis", output: "Error: no weather station in Atlantis" },
        {
          type: "function_call_output",
          call_id: "call_everything",
          output: [
            { type: "input_text", text: "all kinds:" },
            { type: "input_image", image_url: `data:image/png;base64,${PNG}`, detail: "auto" },
            {
              type: "input_text",
              text: "[image (image/svg+xml) not shown: OpenAI takes png, jpeg, gif or webp images]"
            },
            {
              type: "input_text",
              text: "[audio (audio/wav) not shown: an OpenAI function call output cannot carry audio]"
            },
            {
              type: "input_text",
              text: "[audio (audio/ogg) not shown: an OpenAI function call output cannot carry audio]"
            },
            { type: "input_text", text: "[resource file:///notes.txt (text/plain)]\nremember the milk" },
            { type: "input_file", filename: "report.pdf", file_data: `data:application/pdf;base64,${PDF_DATA}` },
            {
              type: "input_text",
              text: "[resource file:///data.zip (application/zip) not shown: OpenAI takes PDF files]"
            },
            { type: "input_text", text: "[resource link spec: https://example.com/spec - the spec]" }
          ]
        }
      ])
    }))

  it("never shows a result's details", () => {
    const result = ToolResult.withDetails(ToolResult.text("ok"), { secret: "s3cret" })
    const items = OpenAiResponses.results([{ id: "1", name: "x", arguments: "{}" }], [Either.right(result)])
    expect(JSON.stringify(items)).not.toContain("s3cret")
  })
})

describe("OpenAiResponses round trip", () => {
  for (const name of ["parallel-calls", "malformed-arguments", "image-and-error", "no-calls"]) {
    it.effect(`${name}: calls -> Executor.run -> results is an input the Responses API accepts`, () =>
      Effect.gen(function*() {
        const calls = callsOf(name)
        const results = OpenAiResponses.results(calls, yield* Executor.run(kit, calls))
        for (const item of results) Schema.decodeUnknownSync(Responses.FunctionCallOutput)(item, strictly)
        Schema.decodeUnknownSync(Responses.Request)({
          model: "gpt-4.1",
          tools: OpenAiResponses.tools(kit),
          input: [
            { role: "user", content: "What's the weather like in Paris today?" },
            ...responseOf(name).output,
            ...results
          ]
        })
      }))
  }
})

it("OpenAiResponses.tools is Toolkit.definitions for openAiResponses", () => {
  expect(OpenAiResponses.tools(kit)).toEqual(Toolkit.definitions(kit, "openAiResponses"))
})
