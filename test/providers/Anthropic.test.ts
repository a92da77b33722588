import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Schema } from "effect"
import { Anthropic, Executor, Toolkit, ToolResult } from "../../src/index.js"
import { Anthropic as Request, strictly } from "./requestSchemas.js"
import { fixtures, kit, PDF_DATA, PNG, refusals } from "./toolkit.js"

const f = fixtures("anthropic.json")
const chat = fixtures("openai-chat.json")
const gemini = fixtures("gemini.json")

const messageOf = (name: string) => f[name] as Anthropic.Message
const callsOf = (name: string) => Either.getOrThrow(Anthropic.calls(messageOf(name)))

describe("Anthropic.calls", () => {
  it("reads tool_use blocks in the model's order, input as the model sent it, skipping other blocks", () => {
    expect(callsOf("parallel-calls")).toEqual([
      {
        id: "toolu_01A09q90qw90lq917835lq9",
        name: "get_weather",
        arguments: { location: "San Francisco, CA", unit: "celsius" }
      },
      { id: "toolu_01CEXAMPLE", name: "get_weather", arguments: { location: "New York, NY", unit: "fahrenheit" } }
    ])
  })

  it("reads a message's content array as it reads the message", () => {
    expect(Anthropic.calls(messageOf("parallel-calls").content)).toEqual(Either.right(callsOf("parallel-calls")))
  })

  it("gives no calls for a message of text", () => {
    expect(callsOf("no-calls")).toEqual([])
  })

  it.effect("keeps input that does not match the parameters, which the executor answers with InvalidArguments", () =>
    Effect.gen(function*() {
      const [outcome] = yield* Executor.run(kit, callsOf("malformed-arguments"))
      expect(Either.isLeft(outcome) && outcome.left.message).toBe(
        "invalid arguments: location: expected a string, got 42\nunit: expected one of \"celsius\", \"fahrenheit\", got \"kelvin\""
      )
    }))

  it("refuses other providers' responses, user messages and malformed blocks with a ProviderFormatError", () => {
    expect(refusals(Anthropic.calls, [
      chat["parallel-calls"],
      gemini["parallel-calls"],
      { role: "user", content: [] },
      [{ type: "tool_use", id: "toolu_1", name: "get_weather" }],
      true
    ])).toEqual([
      "not an Anthropic Messages response: content: expected an array of content blocks (a message, or its content " +
      "array), got nothing",
      "not an Anthropic Messages response: content: expected an array of content blocks (a message, or its content " +
      "array), got nothing",
      "not an Anthropic Messages response: role: expected \"assistant\", got a string \"user\"",
      "not an Anthropic Messages response: [0].input: expected the arguments object, got nothing",
      "not an Anthropic Messages response: expected a message or its content array, got the boolean true"
    ])
  })
})

describe("Anthropic.results", () => {
  const run = (name: string) =>
    Effect.map(Executor.run(kit, callsOf(name)), (outcomes) => Anthropic.results(callsOf(name), outcomes))

  it.effect("answers every call in one user message of tool_result blocks, in call order", () =>
    Effect.gen(function*() {
      expect(yield* run("parallel-calls")).toEqual([{
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: "toolu_01A09q90qw90lq917835lq9",
            content: "Sunny, 22 °C in San Francisco, CA"
          },
          { type: "tool_result", tool_use_id: "toolu_01CEXAMPLE", content: "Sunny, 72 °F in New York, NY" }
        ]
      }])
    }))

  it.effect("marks an error with is_error, and carries images and documents as blocks", () =>
    Effect.gen(function*() {
      expect(yield* run("image-and-error")).toEqual([{
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: "toolu_map",
            content: [
              { type: "text", text: "Map of Paris, France" },
              { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } }
            ]
          },
          {
            type: "tool_result",
            tool_use_id: "toolu_atlantis",
            content: "Error: no weather station in Atlantis",
            is_error: true
          },
          {
            type: "tool_result",
            tool_use_id: "toolu_everything",
            content: [
              { type: "text", text: "all kinds:" },
              { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } },
              {
                type: "text",
                text: "[image (image/svg+xml) not shown: Anthropic takes jpeg, png, gif or webp images]"
              },
              { type: "text", text: "[audio (audio/wav) not shown: an Anthropic tool result cannot carry audio]" },
              { type: "text", text: "[audio (audio/ogg) not shown: an Anthropic tool result cannot carry audio]" },
              {
                type: "document",
                source: { type: "text", media_type: "text/plain", data: "remember the milk" },
                title: "file:///notes.txt"
              },
              {
                type: "document",
                source: { type: "base64", media_type: "application/pdf", data: PDF_DATA },
                title: "file:///report.pdf"
              },
              {
                type: "text",
                text: "[resource file:///data.zip (application/zip) not shown: Anthropic takes PDF documents]"
              },
              { type: "text", text: "[resource link spec: https://example.com/spec - the spec]" }
            ]
          }
        ]
      }])
    }))

  it("leaves out empty text blocks, which the API refuses", () => {
    const result = ToolResult.parts([{ type: "text", text: "" }, { type: "image", data: PNG, mimeType: "image/png" }])
    const [message] = Anthropic.results([{ id: "toolu_1", name: "x", arguments: {} }], [Either.right(result)])
    Schema.decodeUnknownSync(Request.Message)(message, strictly)
    expect(message.content).toEqual([{
      type: "tool_result",
      tool_use_id: "toolu_1",
      content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: PNG } }]
    }])
  })

  it("leaves out the content of an empty result, and gives no message for no calls", () => {
    expect(Anthropic.results([{ id: "toolu_1", name: "x", arguments: {} }], [Either.right(ToolResult.text(""))]))
      .toEqual([{ role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1" }] }])
    expect(Anthropic.results([], [])).toEqual([])
  })

  it("never shows a result's details", () => {
    const result = ToolResult.withDetails(ToolResult.text("ok"), { secret: "s3cret" })
    const messages = Anthropic.results([{ id: "1", name: "x", arguments: {} }], [Either.right(result)])
    expect(JSON.stringify(messages)).not.toContain("s3cret")
  })
})

describe("Anthropic round trip", () => {
  for (const name of ["parallel-calls", "malformed-arguments", "image-and-error"]) {
    it.effect(`${name}: calls -> Executor.run -> results is a request the Messages API accepts`, () =>
      Effect.gen(function*() {
        const calls = callsOf(name)
        const results = Anthropic.results(calls, yield* Executor.run(kit, calls))
        for (const message of results) Schema.decodeUnknownSync(Request.Message)(message, strictly)
        Schema.decodeUnknownSync(Request.Request)({
          model: "claude-sonnet-4-5",
          max_tokens: 1024,
          tools: Anthropic.tools(kit),
          messages: [
            { role: "user", content: "What's the weather like in San Francisco?" },
            { role: "assistant", content: messageOf(name).content },
            ...results
          ]
        })
      }))
  }
})

it("Anthropic.tools is Toolkit.definitions for anthropic", () => {
  expect(Anthropic.tools(kit)).toEqual(Toolkit.definitions(kit, "anthropic"))
})
