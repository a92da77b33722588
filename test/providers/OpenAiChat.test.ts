import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Schema } from "effect"
import { Executor, OpenAiChat, Toolkit, ToolResult } from "../../src/index.js"
import { Chat, strictly } from "./requestSchemas.js"
import { fixtures, kit, PDF_DATA, PNG, refusals, WAV } from "./toolkit.js"

const f = fixtures("openai-chat.json")
const anthropic = fixtures("anthropic.json")
const gemini = fixtures("gemini.json")

const callsOf = (name: string) => Either.getOrThrow(OpenAiChat.calls(f[name] as OpenAiChat.ChatCompletion))

const messageOf = (name: string) => (f[name] as OpenAiChat.ChatCompletion).choices[0].message

describe("OpenAiChat.calls", () => {
  it("reads parallel calls in the model's order, arguments as the model wrote them", () => {
    expect(callsOf("parallel-calls")).toEqual([
      { id: "call_12345xyz", name: "get_weather", arguments: "{\"location\":\"Paris, France\"}" },
      {
        id: "call_67890abc",
        name: "get_weather",
        arguments: "{\"location\":\"Bogotá, Colombia\",\"unit\":\"fahrenheit\"}"
      }
    ])
  })

  it("reads a bare assistant message as it reads the completion around it", () => {
    expect(OpenAiChat.calls(messageOf("parallel-calls"))).toEqual(Either.right(callsOf("parallel-calls")))
  })

  it("gives no calls for an answer without tool_calls", () => {
    expect(callsOf("no-calls")).toEqual([])
  })

  it.effect("keeps a malformed argument string, which the executor answers with InvalidArguments", () =>
    Effect.gen(function*() {
      const calls = callsOf("malformed-arguments")
      expect(calls[0].arguments).toBe("{\"location\":\"Paris, Fra")
      const [outcome] = yield* Executor.run(kit, calls)
      expect(Either.isLeft(outcome) && outcome.left._tag).toBe("InvalidArguments")
    }))

  it("refuses a custom tool call, naming the type it expected", () => {
    const calls = OpenAiChat.calls(f["custom-tool-call"] as OpenAiChat.AssistantMessage)
    expect(Either.isLeft(calls) && calls.left.message).toBe(
      "not an OpenAI chat completions response: tool_calls[0].type: expected \"function\" (a custom tool call is " +
        "answered by the host that declared the custom tool), got a string \"custom\""
    )
  })

  it("refuses other providers' responses and non-objects with a ProviderFormatError", () => {
    expect(
      refusals(OpenAiChat.calls, [anthropic["parallel-calls"], gemini["parallel-calls"], "hello", null, [], {
        choices: []
      }, {
        choices: [{ message: 1 }]
      }])
    ).toEqual([
      "not an OpenAI chat completions response: content[1]: expected a text or refusal part, got an object with " +
      "keys type, id, name, input",
      "not an OpenAI chat completions response: role: expected \"assistant\" (an assistant message, or a completion " +
      "with `choices`), got nothing",
      "not an OpenAI chat completions response: expected a chat completion or an assistant message, got a string \"hello\"",
      "not an OpenAI chat completions response: expected a chat completion or an assistant message, got null",
      "not an OpenAI chat completions response: expected a chat completion or an assistant message, got an array of 0 items",
      "not an OpenAI chat completions response: choices: expected a non-empty array of choices, got an array of 0 items",
      "not an OpenAI chat completions response: choices[0].message: expected an assistant message, got the number 1"
    ])
  })

  it("describes what came in bounded text, however large the value", () => {
    const long = OpenAiChat.calls({ role: "x".repeat(1_000_000) } as never)
    expect(Either.isLeft(long) && long.left.got).toBe(`a string "${"x".repeat(40)}…"`)
    const keys: Record<string, number> = {}
    for (let i = 0; i < 100_000; i++) keys[`key${i}`] = i
    const wide = OpenAiChat.calls({ role: "assistant", tool_calls: keys } as never)
    expect(Either.isLeft(wide) && wide.left.message).toBe(
      "not an OpenAI chat completions response: tool_calls: expected an array of tool calls, got an object with keys " +
        "key0, key1, key2, key3, key4, key5, …"
    )
  })
})

describe("OpenAiChat.results", () => {
  const run = (name: string) =>
    Effect.map(Executor.run(kit, callsOf(name)), (outcomes) => OpenAiChat.results(callsOf(name), outcomes))

  it.effect("answers each call with a tool message, in call order", () =>
    Effect.gen(function*() {
      expect(yield* run("parallel-calls")).toEqual([
        { role: "tool", tool_call_id: "call_12345xyz", content: "Sunny, 22 °C in Paris, France" },
        { role: "tool", tool_call_id: "call_67890abc", content: "Sunny, 72 °F in Bogotá, Colombia" }
      ])
    }))

  it.effect("carries an error as its one Error: line, and media after the tool messages, labelled by call id", () =>
    Effect.gen(function*() {
      const messages = yield* run("image-and-error")
      expect(messages).toEqual([
        { role: "tool", tool_call_id: "call_map", content: "Map of Paris, France" },
        { role: "tool", tool_call_id: "call_atlantis", content: "Error: no weather station in Atlantis" },
        {
          role: "tool",
          tool_call_id: "call_everything",
          content: [
            "all kinds:",
            "[image (image/svg+xml) not shown: OpenAI chat takes png, jpeg, gif or webp images]",
            "[audio (audio/ogg) not shown: OpenAI chat takes wav or mp3 audio]",
            "[resource file:///notes.txt (text/plain)]\nremember the milk",
            "[resource file:///data.zip (application/zip) not shown: OpenAI chat takes PDF files]",
            "[resource link spec: https://example.com/spec - the spec]"
          ].join("\n")
        },
        {
          role: "user",
          content: [
            { type: "text", text: "[call call_map]" },
            { type: "image_url", image_url: { url: `data:image/png;base64,${PNG}` } },
            { type: "text", text: "[call call_everything]" },
            { type: "image_url", image_url: { url: `data:image/png;base64,${PNG}` } },
            { type: "input_audio", input_audio: { data: WAV, format: "wav" } },
            { type: "file", file: { filename: "report.pdf", file_data: `data:application/pdf;base64,${PDF_DATA}` } }
          ]
        }
      ])
    }))

  it("never shows a result's details", () => {
    const result = ToolResult.withDetails(ToolResult.text("ok"), { secret: "s3cret" })
    const messages = OpenAiChat.results([{ id: "1", name: "x", arguments: "{}" }], [Either.right(result)])
    expect(JSON.stringify(messages)).not.toContain("s3cret")
  })

  it("throws when calls and outcomes differ in length", () => {
    expect(() => OpenAiChat.results([{ id: "1", name: "x", arguments: "{}" }], [])).toThrow(
      "results: 1 calls but 0 outcomes; pass the calls and what Executor.run gave for them"
    )
  })
})

describe("OpenAiChat round trip", () => {
  for (const name of ["parallel-calls", "malformed-arguments", "image-and-error", "no-calls"]) {
    it.effect(`${name}: calls -> Executor.run -> results is a request the chat API accepts`, () =>
      Effect.gen(function*() {
        const calls = callsOf(name)
        const results = OpenAiChat.results(calls, yield* Executor.run(kit, calls))
        for (const message of results) Schema.decodeUnknownSync(Chat.Message)(message, strictly)
        Schema.decodeUnknownSync(Chat.Request)({
          model: "gpt-4.1",
          tools: OpenAiChat.tools(kit),
          messages: [{ role: "user", content: "What's the weather like in Paris today?" }, messageOf(name), ...results]
        })
      }))
  }

  it("the request schema refuses a transcript whose calls are not all answered", () => {
    const message = messageOf("parallel-calls")
    expect(() =>
      Schema.decodeUnknownSync(Chat.Messages)([message, { role: "tool", tool_call_id: "call_12345xyz", content: "x" }])
    ).toThrow(/asked for call_12345xyz, call_67890abc/)
  })
})

it("OpenAiChat.tools is Toolkit.definitions for openAiChat", () => {
  expect(OpenAiChat.tools(kit)).toEqual(Toolkit.definitions(kit, "openAiChat"))
})
