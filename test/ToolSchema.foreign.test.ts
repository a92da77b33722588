/**
 * The `"openai-strict"` and `"gemini"` projections of schemas that come from elsewhere (`Tool.fromJsonSchema`: every
 * MCP and stdio-provider tool). Each schema of a corpus written after what real servers serve
 * (test/fixtures/foreignSchemas.ts) comes out in the subset the provider accepts, checked by validators written
 * from the providers' documentation (test/fixtures/providerSubsets.ts), or the projection refuses with the reason
 * the corpus names. A model answering under the strict projection (every optional property sent as `null`) is
 * understood by the tool's decoder.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { Tool, ToolDefinition, ToolSchema } from "../src/index.js"
import { corpus } from "./fixtures/foreignSchemas.js"
import { geminiProblems, openAiStrictProblems } from "./fixtures/providerSubsets.js"

type Json = { readonly [key: string]: unknown }

const toolOf = (schema: Json, name = "foreign") =>
  Tool.fromJsonSchema(name, { description: "A tool from elsewhere", parameters: schema, handler: () => Effect.void })

/** The projection, or the refusal's message. */
const projected = (tool: Tool.Any, target: ToolSchema.Target): Json | string => {
  try {
    return ToolSchema.jsonSchema(tool, { target })
  } catch (error) {
    expect(error).toBeInstanceOf(ToolSchema.UnsupportedSchemaError)
    return (error as Error).message
  }
}

describe("ToolSchema projections of foreign schemas", () => {
  it("the corpus has 30 schemas and more, of every kind a server serves", () => {
    expect(corpus.length).toBeGreaterThanOrEqual(30)
  })

  describe.each(corpus.map((entry) => [entry.name, entry] as const))("%s", (_, entry) => {
    const tool = toolOf(entry.schema)

    it("openai-strict: in OpenAI's subset, or refused saying why", () => {
      const out = projected(tool, "openai-strict")
      if (entry.refuses?.openai !== undefined) {
        expect(out).toEqual(expect.stringContaining(entry.refuses.openai))
        return
      }
      expect(typeof out === "string" ? [out] : openAiStrictProblems(out)).toEqual([])
    })

    it("gemini: in Gemini's subset, or refused saying why", () => {
      const out = projected(tool, "gemini")
      if (entry.refuses?.gemini !== undefined) {
        expect(out).toEqual(expect.stringContaining(entry.refuses.gemini))
        return
      }
      expect(typeof out === "string" ? [out] : geminiProblems(out)).toEqual([])
      // what ToolDefinition.gemini sends: the parameters, or none for a tool without any
      const definition = ToolDefinition.gemini(tool)
      if (definition.parameters !== undefined) expect(geminiProblems(definition.parameters)).toEqual([])
    })

    if (entry.sample !== undefined && entry.refuses?.openai === undefined) {
      const sample = entry.sample
      it("a model answering under the strict projection (null for what it leaves out) is understood", () => {
        const strict = ToolSchema.jsonSchema(tool, { target: "openai-strict" })
        const answer: Record<string, unknown> = { ...sample }
        for (const name of Object.keys(strict.properties as Json)) if (!(name in answer)) answer[name] = null
        const decoded = ToolSchema.decodeArguments(tool, answer)
        expect(decoded).toEqual(Either.right(expect.anything()))
        // what the handler gets: the sample, the nulls it did not send being absent (unless the schema takes null)
        const value = Either.getOrThrow(decoded) as Record<string, unknown>
        for (const [name, v] of Object.entries(sample)) expect(value[name]).toEqual(v)
      })
    }
  })

  describe("what the projections do, pinned", () => {
    it("openai-strict: no $schema, additionalProperties: false on every object, a type array kept, not wrapped again", () => {
      const tool = toolOf({
        $schema: "http://json-schema.org/draft-07/schema#",
        type: "object",
        properties: {
          title: { type: ["string", "null"] },
          issue: { type: "object", properties: { body: { type: "string" } } }
        },
        required: ["issue"]
      })
      expect(ToolSchema.jsonSchema(tool, { target: "openai-strict" })).toEqual({
        type: "object",
        properties: {
          title: { type: ["string", "null"] },
          issue: {
            type: "object",
            properties: { body: { anyOf: [{ type: "string" }, { type: "null" }] } },
            required: ["body"],
            additionalProperties: false
          }
        },
        required: ["title", "issue"],
        additionalProperties: false
      })
    })

    it("gemini: a type array is one type and nullable, a format Gemini does not take is left out", () => {
      const tool = toolOf({
        type: "object",
        properties: {
          title: { type: ["string", "null"], format: "uri" },
          when: { type: "string", format: "date-time" },
          count: { type: "integer", format: "int64", nullable: true }
        },
        required: ["title"]
      })
      expect(ToolSchema.jsonSchema(tool, { target: "gemini" })).toEqual({
        type: "object",
        properties: {
          title: { type: "string", nullable: true },
          when: { type: "string", format: "date-time" },
          count: { type: "integer", format: "int64", nullable: true }
        },
        required: ["title"]
      })
    })

    it("references are inlined; only recursion keeps a $ref, in $defs", () => {
      const tool = toolOf({
        type: "object",
        properties: { at: { $ref: "#/definitions/Point" }, tree: { $ref: "#/definitions/Node" } },
        required: ["at", "tree"],
        definitions: {
          Point: { type: "object", properties: { x: { type: "number" } }, required: ["x"] },
          Node: { type: "object", properties: { next: { $ref: "#/definitions/Node" } } }
        }
      })
      const strict = ToolSchema.jsonSchema(tool, { target: "openai-strict" })
      expect((strict.properties as Json).at).toEqual({
        type: "object",
        properties: { x: { type: "number" } },
        required: ["x"],
        additionalProperties: false
      })
      expect((strict.properties as Json).tree).toEqual({ $ref: "#/$defs/Node" })
      expect(strict.$defs).toEqual({
        Node: {
          type: "object",
          properties: { next: { anyOf: [{ $ref: "#/$defs/Node" }, { type: "null" }] } },
          required: ["next"],
          additionalProperties: false
        }
      })
    })

    it.effect("the strict projection's nulls reach the handler as absent; a null the schema takes stays", () =>
      Effect.gen(function*() {
        const seen: Array<unknown> = []
        const tool = Tool.fromJsonSchema("notes", {
          description: "Notes",
          parameters: {
            type: "object",
            properties: {
              text: { type: "string" },
              tag: { type: "string" },
              due: { type: ["string", "null"] },
              meta: { type: "object", properties: { source: { type: "string" } } }
            },
            required: ["text"]
          },
          handler: (args) => Effect.sync(() => void seen.push(args))
        })
        yield* Tool.execute(tool, {
          id: "c1",
          arguments: "{\"text\":\"hi\",\"tag\":null,\"due\":null,\"meta\":{\"source\":null}}"
        })
        expect(seen).toEqual([{ text: "hi", due: null, meta: {} }])
        // a null where a required property is expected is still a mistake the model hears about
        const outcome = yield* Tool.execute(tool, { id: "c2", arguments: "{\"text\":null}" })
        expect(Either.isLeft(outcome) && outcome.left.message).toBe(
          "invalid arguments: text: expected a string, got null"
        )
      }))
  })
})
