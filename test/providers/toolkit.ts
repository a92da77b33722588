/**
 * The tools the provider-format tests run the fixtures' calls against: the `get_weather` of every provider's
 * documentation, a map that answers with an image, and a kitchen-sink tool whose result has one part of every
 * kind (so each format's handling of audio, files, resources and links is pinned down).
 */
import { Effect, Either, Schema } from "effect"
import * as fs from "node:fs"
import { ProviderFormat, Tool, Toolkit, ToolResult } from "../../src/index.js"

/** A 1x1 png. */
export const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="

/** A tiny PDF header, base64. */
export const PDF_DATA = "JVBERi0xLjQKJeLjz9MK"

/** A short wav header, base64. */
export const WAV = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA="

class NoStation extends Schema.TaggedError<NoStation>()("NoStation", { location: Schema.String }) {
  override get message() {
    return `no weather station in ${this.location}`
  }
}

export const GetWeather = Tool.make("get_weather", {
  description: "Get the current weather in a given location",
  parameters: {
    location: Schema.String.annotations({ description: "The city and state, e.g. San Francisco, CA" }),
    unit: Schema.optional(Schema.Literal("celsius", "fahrenheit"))
  },
  failure: NoStation,
  handler: ({ location, unit = "celsius" }) =>
    location.startsWith("Atlantis")
      ? Effect.fail(new NoStation({ location }))
      : Effect.succeed(
        ToolResult.withDetails(
          ToolResult.text(`Sunny, ${unit === "celsius" ? "22 °C" : "72 °F"} in ${location}`),
          { secret: "details never reach a model" }
        )
      )
})

export const RenderMap = Tool.make("render_map", {
  description: "Render a map of a location",
  parameters: { location: Schema.String },
  handler: ({ location }) =>
    Effect.succeed(ToolResult.parts([
      { type: "text", text: `Map of ${location}` },
      { type: "image", data: PNG, mimeType: "image/png" }
    ]))
})

/** One part of every kind, some in types no provider takes. */
export const Everything = Tool.make("everything", {
  description: "Answer with one content part of every kind",
  handler: () =>
    Effect.succeed(ToolResult.parts([
      { type: "text", text: "all kinds:" },
      { type: "image", data: PNG, mimeType: "image/png" },
      { type: "image", data: "PHN2Zy8+", mimeType: "image/svg+xml" },
      { type: "audio", data: WAV, mimeType: "audio/wav" },
      { type: "audio", data: "T2dnUw==", mimeType: "audio/ogg" },
      { type: "resource", resource: { uri: "file:///notes.txt", mimeType: "text/plain", text: "remember the milk" } },
      { type: "resource", resource: { uri: "file:///report.pdf", mimeType: "application/pdf", blob: PDF_DATA } },
      { type: "resource", resource: { uri: "file:///data.zip", mimeType: "application/zip", blob: "UEsDBA==" } },
      { type: "resource_link", uri: "https://example.com/spec", name: "spec", description: "the spec" }
    ]))
})

export const kit = Toolkit.make(GetWeather, RenderMap, Everything)

/** A fixture file of test/fixtures/providers: named responses copied from the provider's documentation. */
export const fixtures = (file: string): Record<string, unknown> =>
  JSON.parse(fs.readFileSync(new URL(`../fixtures/providers/${file}`, import.meta.url), "utf8"))

/** What a `calls` says of values it must refuse: each one's `ProviderFormatError` message (reading one fails the test). */
export const refusals = (
  calls: (response: never) => Either.Either<unknown, ProviderFormat.ProviderFormatError>,
  values: ReadonlyArray<unknown>
): ReadonlyArray<string> =>
  values.map((value) => {
    const result = calls(value as never)
    if (Either.isRight(result) || !ProviderFormat.isProviderFormatError(result.left)) {
      throw new Error(`expected a ProviderFormatError for ${JSON.stringify(value)?.slice(0, 80)}`)
    }
    return result.left.message
  })
