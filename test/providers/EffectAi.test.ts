/**
 * The @effect/ai bridge against real @effect/ai language models (`@effect/ai-openai` and `@effect/ai-anthropic`)
 * talking HTTP to a scripted server on 127.0.0.1, streamed and not.
 */
import type { AiError, Response } from "@effect/ai"
import { LanguageModel, Prompt } from "@effect/ai"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Either, Schema, Stream } from "effect"
import * as EffectAi from "../../src/EffectAi.js"
import { Executor, Permission, Tool, Toolkit } from "../../src/index.js"
import * as ScriptedServer from "./scriptedServer.js"
import { kit, PNG, refusals } from "./toolkit.js"

const weatherCalls = [
  { name: "get_weather", arguments: { location: "Paris, France" } },
  { name: "get_weather", arguments: { location: "Atlantis" } },
  { name: "get_weather", arguments: { location: 42 } }
]

const invalidLocation = "Error: invalid arguments: location: expected a string, got 42"

describe("EffectAi.toolkit in LanguageModel.generateText", () => {
  it.scoped("serves our names, descriptions and JSON Schema as @effect/ai tools", () =>
    Effect.gen(function*() {
      const server = yield* ScriptedServer.make({ dialect: "openai", turns: [{ text: "hi" }] })
      yield* LanguageModel.generateText({ prompt: "hi", toolkit: EffectAi.toolkit(kit) }).pipe(
        Effect.provide(server.layer)
      )
      const [request] = yield* server.requests
      expect(request.body.tools).toEqual(kit.tools.map((tool) => ({
        type: "function",
        name: tool.name,
        description: tool.description,
        parameters: tool.inputSchema,
        strict: true
      })))
    }))

  for (const dialect of ["openai", "anthropic"] as const) {
    it.scoped(`${dialect}: resolves each call through Tool.execute; errors and bad arguments reach the model`, () =>
      Effect.gen(function*() {
        const server = yield* ScriptedServer.make({ dialect, turns: [{ calls: weatherCalls }, { text: "Sunny." }] })
        const toolkit = EffectAi.toolkit(kit)
        const prompt = Prompt.make("What's the weather?")
        const response = yield* LanguageModel.generateText({ prompt, toolkit }).pipe(Effect.provide(server.layer))
        expect(response.toolResults.map(({ isFailure, name, result }) => ({ name, isFailure, result }))).toEqual([
          { name: "get_weather", isFailure: false, result: "Sunny, 22 °C in Paris, France" },
          { name: "get_weather", isFailure: true, result: "Error: no weather station in Atlantis" },
          { name: "get_weather", isFailure: true, result: invalidLocation }
        ])
        // the provider package sends the results back as it sends any @effect/ai tool result
        yield* LanguageModel.generateText({
          prompt: Prompt.merge(prompt, Prompt.fromResponseParts(response.content)),
          toolkit
        }).pipe(Effect.provide(server.layer))
        const [, next] = yield* server.requests
        if (dialect === "openai") {
          expect(next.body.input.filter((item: any) => item.type === "function_call_output")).toEqual([
            { type: "function_call_output", call_id: "call_0_0", output: "\"Sunny, 22 °C in Paris, France\"" },
            { type: "function_call_output", call_id: "call_0_1", output: "\"Error: no weather station in Atlantis\"" },
            { type: "function_call_output", call_id: "call_0_2", output: JSON.stringify(invalidLocation) }
          ])
        } else {
          expect(next.body.messages.at(-1).content.map((block: any) => [block.tool_use_id, block.is_error])).toEqual([
            ["toolu_0_0", false],
            ["toolu_0_1", true],
            ["toolu_0_2", true]
          ])
        }
      }))
  }

  it.scoped("arguments that are JSON but not an object reach our tool, which answers InvalidArguments", () =>
    Effect.gen(function*() {
      const server = yield* ScriptedServer.make({
        dialect: "openai",
        turns: [{ calls: [{ name: "get_weather", arguments: "[\"Paris\"]" }] }]
      })
      const response = yield* LanguageModel.generateText({ prompt: "x", toolkit: EffectAi.toolkit(kit) }).pipe(
        Effect.provide(server.layer)
      )
      expect(response.toolResults.map((part) => [part.isFailure, part.result])).toEqual([
        [true, "Error: invalid arguments: expected a JSON object, got an array"]
      ])
    }))

  it.scoped("arguments that are not JSON fail the turn in the provider package (what this path loses)", () =>
    Effect.gen(function*() {
      const server = yield* ScriptedServer.make({
        dialect: "openai",
        turns: [{ calls: [{ name: "get_weather", arguments: "{\"location\":\"Par" }] }]
      })
      const error = yield* LanguageModel.generateText({ prompt: "x", toolkit: EffectAi.toolkit(kit) }).pipe(
        Effect.provide(server.layer),
        Effect.flip
      )
      expect(error._tag).toBe("MalformedOutput")
    }))

  it.scoped("streamText resolves the calls of a streamed answer the same way", () =>
    Effect.gen(function*() {
      const server = yield* ScriptedServer.make({
        dialect: "openai",
        turns: [{ text: "Let me look.", calls: weatherCalls }]
      })
      const parts = yield* LanguageModel.streamText({ prompt: "weather?", toolkit: EffectAi.toolkit(kit) }).pipe(
        Stream.runCollect,
        Effect.provide(server.layer)
      )
      const results = Chunk.toArray(parts).flatMap((part) => (part.type === "tool-result" ? [part.result] : []))
      expect(results).toEqual([
        "Sunny, 22 °C in Paris, France",
        "Error: no weather station in Atlantis",
        invalidLocation
      ])
      const [request] = yield* server.requests
      expect(request.body.stream).toBe(true)
    }))

  it.scoped("asks permission per call, from the environment of generateText", () =>
    Effect.gen(function*() {
      const Delete = Tool.make("delete_file", {
        description: "Delete a file",
        parameters: { path: Schema.String },
        permission: { action: "delete", describe: ({ path }) => `delete ${path}` },
        handler: () => Effect.succeed("deleted")
      })
      const server = yield* ScriptedServer.make({
        dialect: "openai",
        turns: [{ calls: [{ name: "delete_file", arguments: { path: "/etc/passwd" } }] }]
      })
      const asked: Array<string> = []
      const response = yield* LanguageModel.generateText({
        prompt: "x",
        toolkit: EffectAi.toolkit(Toolkit.make(Delete))
      })
        .pipe(
          Effect.provide(server.layer),
          Effect.provide(Permission.layer((request) => {
            asked.push(`${request.callId}: ${request.description}`)
            return Effect.succeed(Permission.deny("not that one"))
          }))
        )
      expect(asked).toEqual(["effect-ai-call-1: delete /etc/passwd"])
      expect(response.toolResults.map((part) => part.result)).toEqual([
        "Error: permission denied: delete /etc/passwd: not that one"
      ])
    }))

  it.scoped("notes the media a tool result cannot carry on this path", () =>
    Effect.gen(function*() {
      const server = yield* ScriptedServer.make({
        dialect: "openai",
        turns: [{ calls: [{ name: "render_map", arguments: { location: "Paris" } }] }]
      })
      const response = yield* LanguageModel.generateText({ prompt: "x", toolkit: EffectAi.toolkit(kit) }).pipe(
        Effect.provide(server.layer)
      )
      expect(response.toolResults.map((part) => part.result)).toEqual([
        "Map of Paris\n[image (image/png) not shown: @effect/ai's own tool call resolution carries JSON only " +
        "(EffectAi.results carries media)]"
      ])
    }))
})

describe("EffectAi.calls and EffectAi.results", () => {
  for (const dialect of ["openai", "anthropic"] as const) {
    for (const stream of [false, true]) {
      it.scoped(`${dialect}${stream ? ", streamed" : ""}: the model's calls run in one batch and go back as a prompt`, () =>
        Effect.gen(function*() {
          const server = yield* ScriptedServer.make({
            dialect,
            turns: [
              {
                calls: [...weatherCalls, {
                  id: dialect === "openai" ? "call_map" : "toolu_map",
                  name: "render_map",
                  arguments: { location: "Paris" }
                }]
              },
              { text: "done" }
            ]
          })
          const toolkit = EffectAi.toolkit(kit)
          const prompt = Prompt.make("weather and a map")
          const ask = (
            prompt: Prompt.Prompt
          ): Effect.Effect<
            { readonly content: ReadonlyArray<Response.AnyPart> },
            AiError.AiError,
            LanguageModel.LanguageModel
          > =>
            stream
              ? LanguageModel.streamText({ prompt, toolkit, disableToolCallResolution: true }).pipe(
                Stream.runCollect,
                Effect.map((parts) => ({ content: Chunk.toArray(parts) }))
              )
              : LanguageModel.generateText({ prompt, toolkit, disableToolCallResolution: true })
          const response = yield* ask(prompt).pipe(Effect.provide(server.layer))
          const calls = yield* EffectAi.calls(response)
          const prefix = dialect === "openai" ? "call" : "toolu"
          expect(calls.map((call) => call.id)).toEqual([
            `${prefix}_0_0`,
            `${prefix}_0_1`,
            `${prefix}_0_2`,
            `${prefix}_map`
          ])
          expect(calls[2].arguments).toEqual({ location: 42 })

          const outcomes = yield* Executor.run(kit, calls)
          const results = EffectAi.results(calls, outcomes)
          const assistant = stream
            ? Prompt.make([{
              role: "assistant",
              content: calls.map((call) => ({
                type: "tool-call",
                id: call.id,
                name: call.name,
                params: call.arguments
              }))
            }])
            : Prompt.fromResponseParts(response.content)
          yield* ask(Prompt.merge(Prompt.merge(prompt, assistant), results)).pipe(Effect.provide(server.layer))
          const [, next] = yield* server.requests
          if (dialect === "openai") {
            const input = next.body.input
            expect(input.filter((item: any) => item.type === "function_call_output")).toEqual([
              { type: "function_call_output", call_id: "call_0_0", output: "\"Sunny, 22 °C in Paris, France\"" },
              {
                type: "function_call_output",
                call_id: "call_0_1",
                output: "\"Error: no weather station in Atlantis\""
              },
              { type: "function_call_output", call_id: "call_0_2", output: JSON.stringify(invalidLocation) },
              { type: "function_call_output", call_id: "call_map", output: "\"Map of Paris\"" }
            ])
            expect(input.at(-1)).toEqual({
              role: "user",
              content: [
                { type: "input_text", text: "[call call_map]" },
                { type: "input_image", image_url: `data:image/png;base64,${PNG}`, detail: "auto" }
              ]
            })
          } else {
            // @effect/ai-anthropic folds the tool message and the user message into one user turn
            const last = next.body.messages.at(-1)
            expect(last.content.map((block: any) => block.type)).toEqual([
              "tool_result",
              "tool_result",
              "tool_result",
              "tool_result",
              "text",
              "image"
            ])
            expect(last.content[1]).toMatchObject({ tool_use_id: "toolu_0_1", is_error: true })
            expect(last.content[5].source).toEqual({ type: "base64", media_type: "image/png", data: PNG })
          }
        }))
    }
  }

  it("refuses what is not a response's content with a ProviderFormatError", () => {
    expect(refusals(EffectAi.calls, [{ content: "x" }, [{ type: "tool-call", id: 1 }], 7])).toEqual([
      "not an @effect/ai generateText response: content: expected an array of response parts (a response, or its " +
      "content array), got a string \"x\"",
      "not an @effect/ai generateText response: [0].id: expected a string, got the number 1",
      "not an @effect/ai generateText response: expected a response or its content array, got the number 7"
    ])
  })

  it("skips calls the provider ran itself", () => {
    const calls = EffectAi.calls([
      { type: "tool-call", id: "ws_1", name: "OpenAiWebSearch", params: {}, providerExecuted: true },
      { type: "tool-call", id: "call_1", name: "get_weather", params: { location: "Paris" }, providerExecuted: false }
    ] as never)
    expect(calls).toEqual(Either.right([{ id: "call_1", name: "get_weather", arguments: { location: "Paris" } }]))
  })

  it.effect("sends a structured result as its value, not its JSON text twice", () =>
    Effect.gen(function*() {
      const Sum = Tool.make("sum", {
        description: "Add",
        parameters: { a: Schema.Int, b: Schema.Int },
        handler: ({ a, b }) => Effect.succeed({ sum: a + b })
      })
      const calls = [{ id: "1", name: "sum", arguments: { a: 2, b: 3 } }]
      const prompt = EffectAi.results(calls, yield* Executor.run(Toolkit.make(Sum), calls))
      const [message] = prompt.content
      expect(message.role === "tool" && message.content[0].result).toEqual({ sum: 5 })
    }))
})
