import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Schema } from "effect"
import { Executor, Gemini, Toolkit, ToolResult } from "../../src/index.js"
import { Gemini as Request, strictly } from "./requestSchemas.js"
import { fixtures, kit, PDF_DATA, PNG, refusals } from "./toolkit.js"

const f = fixtures("gemini.json")
const chat = fixtures("openai-chat.json")
const anthropic = fixtures("anthropic.json")

const responseOf = (name: string) => f[name] as Gemini.GenerateContentResponse
const callsOf = (name: string) => Either.getOrThrow(Gemini.calls(responseOf(name)))

describe("Gemini.calls", () => {
  it("mints ids from the position for id-less calls: gemini-call-<candidate>-<part>", () => {
    expect(callsOf("parallel-calls")).toEqual([
      { id: "gemini-call-0-0", name: "get_weather", arguments: { location: "Paris, France" } },
      { id: "gemini-call-0-1", name: "get_weather", arguments: { location: "Bogotá, Colombia", unit: "fahrenheit" } }
    ])
  })

  it("keeps the id newer APIs send, and counts parts that are not calls in the position", () => {
    expect(callsOf("calls-with-ids")).toEqual([
      { id: "6c2ua8mj", name: "get_weather", arguments: { location: "Paris, France" } }
    ])
    const content = { role: "model", parts: [{ text: "a" }, { functionCall: { name: "x" } }] } as const
    expect(Gemini.calls(content)).toEqual(Either.right([{ id: "gemini-call-0-1", name: "x", arguments: {} }]))
  })

  it("reads a candidate and a content as it reads the response around them, with the same ids", () => {
    const candidate = responseOf("parallel-calls").candidates![0]
    expect(Gemini.calls(candidate)).toEqual(Either.right(callsOf("parallel-calls")))
    expect(Gemini.calls(candidate.content!)).toEqual(Either.right(callsOf("parallel-calls")))
    expect(Gemini.calls({ ...candidate, index: 2 })).toEqual(Either.right([
      { id: "gemini-call-2-0", name: "get_weather", arguments: { location: "Paris, France" } },
      { id: "gemini-call-2-1", name: "get_weather", arguments: { location: "Bogotá, Colombia", unit: "fahrenheit" } }
    ]))
  })

  it("gives no calls for text, a blocked prompt, or a candidate without content", () => {
    expect(callsOf("no-calls")).toEqual([])
    expect(callsOf("blocked")).toEqual([])
    expect(Gemini.calls({ finishReason: "SAFETY", index: 0 })).toEqual(Either.right([]))
  })

  it.effect("keeps args that do not match the parameters, which the executor answers with InvalidArguments", () =>
    Effect.gen(function*() {
      const [outcome] = yield* Executor.run(kit, callsOf("malformed-arguments"))
      expect(Either.isLeft(outcome) && outcome.left._tag).toBe("InvalidArguments")
    }))

  it("refuses other providers' responses, user contents and malformed parts with a ProviderFormatError", () => {
    expect(refusals(Gemini.calls, [
      chat["parallel-calls"],
      anthropic["parallel-calls"],
      { role: "user", parts: [{ text: "hi" }] },
      { candidates: [{ content: { parts: [{ functionCall: { args: {} } }] } }] },
      "text"
    ])).toEqual([
      "not a Gemini generateContent response: expected a response (with candidates), a candidate (with content) or " +
      "a content (with parts), got an object with keys id, object, created, model, choices, usage, …",
      "not a Gemini generateContent response: role: expected \"model\" (the model's content), got a string \"assistant\"",
      "not a Gemini generateContent response: role: expected \"model\" (the model's content), got a string \"user\"",
      "not a Gemini generateContent response: candidates[0].content.parts[0].functionCall.name: expected a string, " +
      "got nothing",
      "not a Gemini generateContent response: expected a response, a candidate or a content, got a string \"text\""
    ])
  })
})

describe("Gemini.results", () => {
  const run = (name: string) =>
    Effect.map(Executor.run(kit, callsOf(name)), (outcomes) => Gemini.results(callsOf(name), outcomes))

  it.effect("answers id-less calls by name in call order, without the minted ids", () =>
    Effect.gen(function*() {
      expect(yield* run("parallel-calls")).toEqual([{
        role: "user",
        parts: [
          { functionResponse: { name: "get_weather", response: { output: "Sunny, 22 °C in Paris, France" } } },
          { functionResponse: { name: "get_weather", response: { output: "Sunny, 72 °F in Bogotá, Colombia" } } }
        ]
      }])
    }))

  it.effect("sends back the id the model sent", () =>
    Effect.gen(function*() {
      expect(yield* run("calls-with-ids")).toEqual([{
        role: "user",
        parts: [{
          functionResponse: {
            id: "6c2ua8mj",
            name: "get_weather",
            response: { output: "Sunny, 22 °C in Paris, France" }
          }
        }]
      }])
    }))

  it.effect("carries an error as { error }, and images and PDFs as inlineData parts", () =>
    Effect.gen(function*() {
      expect(yield* run("image-and-error")).toEqual([{
        role: "user",
        parts: [
          {
            functionResponse: {
              name: "render_map",
              response: { output: "Map of Paris, France" },
              parts: [{ inlineData: { mimeType: "image/png", data: PNG } }]
            }
          },
          { functionResponse: { name: "get_weather", response: { error: "Error: no weather station in Atlantis" } } },
          {
            functionResponse: {
              name: "everything",
              response: {
                output: [
                  "all kinds:",
                  "[image (image/svg+xml) not shown: a Gemini function response takes png, jpeg or webp images and PDF files]",
                  "[audio (audio/wav) not shown: a Gemini function response cannot carry audio]",
                  "[audio (audio/ogg) not shown: a Gemini function response cannot carry audio]",
                  "[resource file:///notes.txt (text/plain)]\nremember the milk",
                  "[resource file:///data.zip (application/zip) not shown: a Gemini function response takes png, jpeg or " +
                  "webp images and PDF files]",
                  "[resource link spec: https://example.com/spec - the spec]"
                ].join("\n")
              },
              parts: [
                { inlineData: { mimeType: "image/png", data: PNG } },
                { inlineData: { mimeType: "application/pdf", data: PDF_DATA } }
              ]
            }
          }
        ]
      }])
    }))

  it("never shows a result's details, and gives no content for no calls", () => {
    const result = ToolResult.withDetails(ToolResult.text("ok"), { secret: "s3cret" })
    const contents = Gemini.results([{ id: "gemini-call-0-0", name: "x", arguments: {} }], [Either.right(result)])
    expect(JSON.stringify(contents)).not.toContain("s3cret")
    expect(Gemini.results([], [])).toEqual([])
  })
})

describe("Gemini round trip", () => {
  for (const name of ["parallel-calls", "calls-with-ids", "malformed-arguments", "image-and-error"]) {
    it.effect(`${name}: calls -> Executor.run -> results is a request generateContent accepts`, () =>
      Effect.gen(function*() {
        const calls = callsOf(name)
        const results = Gemini.results(calls, yield* Executor.run(kit, calls))
        for (const content of results) Schema.decodeUnknownSync(Request.Content)(content, strictly)
        Schema.decodeUnknownSync(Request.Request)({
          tools: [{ functionDeclarations: Gemini.tools(kit) }],
          contents: [
            { role: "user", parts: [{ text: "What's the weather like in Paris?" }] },
            responseOf(name).candidates![0].content,
            ...results
          ]
        })
      }))
  }
})

it("Gemini.tools is Toolkit.definitions for gemini", () => {
  expect(Gemini.tools(kit)).toEqual(Toolkit.definitions(kit, "gemini"))
})
