/**
 * The server the MCP conformance suite (`@modelcontextprotocol/conformance`, server scenarios) runs against,
 * written with this library the way a user would write tools: one tool per scenario that asks for one, with the
 * names and behaviour the scenarios' own descriptions give. `npm run conformance` starts it; by hand:
 *
 *   node --import tsx examples/conformance/server.ts [port]
 *
 * It serves Streamable HTTP on 127.0.0.1 (port 0, the default, picks a free one), prints the endpoint URL as its
 * first line on stdout, and runs until it is interrupted (SIGINT, SIGTERM).
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Console, Effect, Schema } from "effect"
import { Elicitation, McpServer, Tool, Toolkit, ToolResult } from "../../src/index.js"

/** A 1x1 PNG. */
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="

/** A WAV file of eight samples of silence (8 kHz, mono, 8-bit). */
const WAV = "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAgICAgICAgA=="

// ---------------------------------------------------------------------------------------------------------------
// content
// ---------------------------------------------------------------------------------------------------------------

const SimpleText = Tool.make("test_simple_text", {
  description: "Returns a simple text response",
  annotations: { readOnly: true, openWorld: false },
  handler: () => Effect.succeed("This is a simple text response for testing.")
})

const ImageContent = Tool.make("test_image_content", {
  description: "Returns a 1x1 PNG image",
  annotations: { readOnly: true, openWorld: false },
  handler: () => Effect.succeed(ToolResult.image(PNG, "image/png"))
})

const AudioContent = Tool.make("test_audio_content", {
  description: "Returns a short WAV clip",
  annotations: { readOnly: true, openWorld: false },
  handler: () => Effect.succeed(ToolResult.parts([{ type: "audio", data: WAV, mimeType: "audio/wav" }]))
})

const EmbeddedResource = Tool.make("test_embedded_resource", {
  description: "Returns an embedded text resource",
  annotations: { readOnly: true, openWorld: false },
  handler: () =>
    Effect.succeed(ToolResult.parts([{
      type: "resource",
      resource: {
        uri: "test://embedded-resource",
        mimeType: "text/plain",
        text: "This is an embedded resource content."
      }
    }]))
})

const MultipleContentTypes = Tool.make("test_multiple_content_types", {
  description: "Returns text, an image and an embedded resource",
  annotations: { readOnly: true, openWorld: false },
  handler: () =>
    Effect.succeed(ToolResult.parts([
      { type: "text", text: "Multiple content types test:" },
      { type: "image", data: PNG, mimeType: "image/png" },
      {
        type: "resource",
        resource: {
          uri: "test://mixed-content-resource",
          mimeType: "application/json",
          text: JSON.stringify({ test: "data", value: 123 })
        }
      }
    ]))
})

// ---------------------------------------------------------------------------------------------------------------
// errors, logging, progress
// ---------------------------------------------------------------------------------------------------------------

class IntentionalError extends Schema.TaggedError<IntentionalError>()("IntentionalError", {}) {
  override get message() {
    return "This tool intentionally returns an error for testing"
  }
}

const ErrorHandling = Tool.make("test_error_handling", {
  description: "Always fails",
  failure: IntentionalError,
  handler: () => Effect.fail(new IntentionalError())
})

const WithLogging = Tool.make("test_tool_with_logging", {
  description: "Logs three messages while it runs (a client sees them once it sets a level)",
  handler: () =>
    Effect.gen(function*() {
      yield* Effect.log("Tool execution started")
      yield* Effect.sleep("50 millis")
      yield* Effect.log("Tool processing data")
      yield* Effect.sleep("50 millis")
      yield* Effect.log("Tool execution completed")
      return "Logged three messages"
    })
})

const WithProgress = Tool.make("test_tool_with_progress", {
  description: "Reports progress 0, 50 and 100 of 100",
  handler: () =>
    Effect.gen(function*() {
      yield* Tool.progress({ progress: 0, total: 100 })
      yield* Effect.sleep("50 millis")
      yield* Tool.progress({ progress: 50, total: 100 })
      yield* Effect.sleep("50 millis")
      yield* Tool.progress({ progress: 100, total: 100 })
      return "Progress reported"
    })
})

// ---------------------------------------------------------------------------------------------------------------
// sampling and elicitation
// ---------------------------------------------------------------------------------------------------------------

const Sampling = Tool.make("test_sampling", {
  description: "Asks the client's model to answer a prompt",
  parameters: { prompt: Schema.String.annotations({ description: "The prompt to send to the LLM" }) },
  handler: ({ prompt }) =>
    McpServer.sample({ messages: [{ role: "user", content: { type: "text", text: prompt } }], maxTokens: 100 }).pipe(
      Effect.map((result) =>
        `LLM response: ${result.content.type === "text" ? result.content.text : `[${result.content.type}]`}`
      )
    )
})

const answered = <A>(result: { readonly _tag: string; readonly content?: A }): string =>
  `action=${result._tag.toLowerCase()}, content=${JSON.stringify(result.content ?? {})}`

const Elicit = Tool.make("test_elicitation", {
  description: "Asks the user for a username and an email address",
  parameters: { message: Schema.String.annotations({ description: "The message to show the user" }) },
  handler: ({ message }) =>
    Effect.map(
      Tool.elicit({
        message,
        schema: {
          username: Schema.String.annotations({ description: "User's response" }),
          email: Schema.String.annotations({ description: "User's email address" })
        }
      }),
      (result) => `User response: ${answered(result)}`
    )
})

const ElicitDefaults = Tool.make("test_elicitation_sep1034_defaults", {
  description: "Asks for a form whose every field has a default (SEP-1034)",
  handler: () =>
    Effect.map(
      Tool.elicit({
        message: "Please review your profile",
        schema: {
          name: Schema.optionalWith(Schema.String, { default: () => "John Doe" }),
          age: Schema.optionalWith(Schema.Int, { default: () => 30 }),
          score: Schema.optionalWith(Schema.Number, { default: () => 95.5 }),
          status: Schema.optionalWith(Schema.Literal("active", "inactive", "pending"), {
            default: () => "active" as const
          }),
          verified: Schema.optionalWith(Schema.Boolean, { default: () => true })
        }
      }),
      (result) => `Elicitation completed: ${answered(result)}`
    )
})

/** A choice whose options read differently from their values. */
const titled = <const Values extends ReadonlyArray<readonly [string, string]>>(options: Values) =>
  Schema.Union(...options.map(([value, title]) => Schema.Literal(value).annotations({ title })))

const ElicitEnums = Tool.make("test_elicitation_sep1330_enums", {
  description: "Asks for every kind of choice (SEP-1330)",
  handler: () =>
    Effect.map(
      Tool.elicit({
        message: "Please make your choices",
        schema: {
          untitledSingle: Schema.Literal("option1", "option2", "option3"),
          titledSingle: titled([["value1", "First Option"], ["value2", "Second Option"], ["value3", "Third Option"]]),
          // the deprecated way of labelling choices, for clients that predate titled ones
          legacyEnum: Schema.Literal("opt1", "opt2", "opt3").annotations({
            jsonSchema: {
              type: "string",
              enum: ["opt1", "opt2", "opt3"],
              enumNames: ["Option One", "Option Two", "Option Three"]
            }
          }),
          untitledMulti: Schema.Array(Schema.Literal("option1", "option2", "option3")),
          titledMulti: Schema.Array(
            titled([["value1", "First Choice"], ["value2", "Second Choice"], ["value3", "Third Choice"]])
          )
        }
      }),
      (result) => `Elicitation completed: ${answered(result)}`
    )
})

// ---------------------------------------------------------------------------------------------------------------
// asking a 2026-07-28 client: the same Tool.elicit, McpServer.sample and McpServer.listRoots, answered through
// input_required results. The scenarios name the keys their answers come under; `replay: "safe"` tools run again
// with the answers so far (nothing is kept between rounds), the others wait, parked, for their answers.
// ---------------------------------------------------------------------------------------------------------------

const nameOf = (result: { readonly _tag: string; readonly content?: { readonly name: string } }): string =>
  result._tag === "Accept" && result.content !== undefined ? result.content.name : result._tag.toLowerCase()

const textOf = (result: McpServer.SamplingResult): string =>
  result.content.type === "text" ? result.content.text : `[${result.content.type}]`

const AskName = Tool.make("test_input_required_result_elicitation", {
  description: "Asks the user's name, then greets them",
  replay: "safe",
  handler: () =>
    Effect.map(
      Tool.elicit({ key: "user_name", message: "What is your name?", schema: { name: Schema.String } }),
      (answer) => `Hello, ${nameOf(answer)}!`
    )
})

const AskModel = Tool.make("test_input_required_result_sampling", {
  description: "Asks the client's model a question",
  failure: McpServer.SamplingError,
  handler: () =>
    Effect.map(
      McpServer.sample({
        key: "capital_question",
        messages: [{ role: "user", content: { type: "text", text: "What is the capital of France?" } }],
        maxTokens: 100
      }),
      (result) => `The model says: ${textOf(result)}`
    )
})

const AskRoots = Tool.make("test_input_required_result_list_roots", {
  description: "Asks the client which roots it shares",
  failure: McpServer.RootsError,
  handler: () =>
    Effect.map(
      McpServer.listRoots({ key: "client_roots" }),
      (roots) => `Roots: ${roots.map((root) => `${root.name ?? "(unnamed)"} at ${root.uri}`).join(", ")}`
    )
})

const AskWithState = Tool.make("test_input_required_result_request_state", {
  description: "Asks for a confirmation; the retry's requestState is checked before the answer is read",
  replay: "safe",
  handler: () =>
    Effect.map(
      Tool.elicit({ key: "confirm", message: "Please confirm", schema: { ok: Schema.Boolean } }),
      // the state was verified (signature, expiry, binding, single use) before this second run reached here
      (answer) => `state-ok: ${answer._tag === "Accept" && answer.content.ok ? "confirmed" : "not confirmed"}`
    )
})

const AskThree = Tool.make("test_input_required_result_multiple_inputs", {
  description: "Asks the user, the client's model and the client's roots at once",
  failure: Schema.Union(McpServer.SamplingError, McpServer.RootsError, Elicitation.ElicitationError),
  handler: () =>
    Effect.map(
      Effect.all([
        Tool.elicit({ key: "user_name", message: "What is your name?", schema: { name: Schema.String } }),
        McpServer.sample({
          key: "greeting",
          messages: [{ role: "user", content: { type: "text", text: "Generate a greeting" } }],
          maxTokens: 50
        }),
        McpServer.listRoots({ key: "client_roots" })
      ], { concurrency: "unbounded" }),
      ([name, greeting, roots]) => `${textOf(greeting)}, ${nameOf(name)} (${roots.length} roots)`
    )
})

const AskTwice = Tool.make("test_input_required_result_multi_round", {
  description: "Asks two questions, one round each",
  replay: "safe",
  handler: () =>
    Effect.gen(function*() {
      const name = yield* Tool.elicit({
        key: "step1",
        message: "Step 1: What is your name?",
        schema: { name: Schema.String }
      })
      const color = yield* Tool.elicit({
        key: "step2",
        message: "Step 2: What is your favorite color?",
        schema: { color: Schema.String }
      })
      return `${nameOf(name)} likes ${color._tag === "Accept" ? color.content.color : "no color"}`
    })
})

const AskSigned = Tool.make("test_input_required_result_tampered_state", {
  description: "Asks for a confirmation, waiting parked for it: a state that was tampered with is refused",
  handler: () =>
    Effect.map(
      Tool.elicit({ message: "Please confirm", schema: { ok: Schema.Boolean } }),
      (answer) => `confirmed: ${answer._tag === "Accept" && answer.content.ok}`
    )
})

const AskWhatItCan = Tool.make("test_input_required_result_capabilities", {
  description: "Asks the user and the client's model, each only if the client can be asked",
  replay: "safe",
  handler: () =>
    Effect.map(
      Effect.all([
        Tool.elicit({ message: "What is your name?", schema: { name: Schema.String } }),
        McpServer.sample({
          messages: [{ role: "user", content: { type: "text", text: "Say hello" } }],
          maxTokens: 20
        }).pipe(Effect.option)
      ], { concurrency: "unbounded" }),
      ([name, hello]) => `${nameOf(name)}; the model ${hello._tag === "Some" ? "answered" : "was not asked"}`
    )
})

const NeedsSampling = Tool.make("test_missing_capability", {
  description: "Needs the client's model: a client that did not declare sampling is refused (-32021)",
  failure: McpServer.SamplingError,
  handler: () =>
    Effect.map(
      McpServer.sample({ messages: [{ role: "user", content: { type: "text", text: "Hi" } }], maxTokens: 10 }),
      textOf
    )
})

// ---------------------------------------------------------------------------------------------------------------
// schemas, streams
// ---------------------------------------------------------------------------------------------------------------

const JsonSchema2020 = Tool.fromJsonSchema("json_schema_2020_12_tool", {
  description: "Tool with JSON Schema 2020-12 features",
  parameters: {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    $defs: {
      address: {
        $anchor: "addressDef",
        type: "object",
        properties: { street: { type: "string" }, city: { type: "string" } }
      }
    },
    properties: {
      name: { type: "string" },
      address: { $ref: "#/$defs/address" },
      contactMethod: { type: "string", enum: ["phone", "email"] },
      phone: { type: "string" },
      email: { type: "string" }
    },
    allOf: [{ anyOf: [{ required: ["phone"] }, { required: ["email"] }] }],
    if: { properties: { contactMethod: { const: "phone" } }, required: ["contactMethod"] },
    then: { required: ["phone"] },
    else: { required: ["email"] },
    additionalProperties: false
  },
  handler: (args) => Effect.succeed(args)
})

const Reconnection = Tool.make("test_reconnection", {
  description: "A call that takes a moment (SEP-1699); its answer comes on the request's own stream",
  handler: () => Effect.as(Effect.sleep("100 millis"), "Reconnection test completed successfully")
})

// ---------------------------------------------------------------------------------------------------------------
// serving
// ---------------------------------------------------------------------------------------------------------------

const toolkit = Toolkit.make(
  SimpleText,
  ImageContent,
  AudioContent,
  EmbeddedResource,
  MultipleContentTypes,
  ErrorHandling,
  WithLogging,
  WithProgress,
  Sampling,
  Elicit,
  ElicitDefaults,
  ElicitEnums,
  JsonSchema2020,
  Reconnection,
  AskName,
  AskModel,
  AskRoots,
  AskWithState,
  AskThree,
  AskTwice,
  AskSigned,
  AskWhatItCan,
  NeedsSampling
)

const main = Effect.gen(function*() {
  const { url } = yield* McpServer.http(toolkit, {
    name: "effect-agent-tools-conformance",
    version: "0.1.0",
    port: Number(process.argv[2] ?? 0)
  })
  yield* Console.log(url)
  return yield* Effect.never
})

NodeRuntime.runMain(Effect.scoped(main))
