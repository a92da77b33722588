import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import * as fs from "node:fs"
import { Tool, ToolDefinition, Toolkit } from "../src/index.js"

/**
 * Compares a value's JSON with a golden file under test/golden. With `UPDATE_GOLDEN=1` the file is written
 * instead, so a change to what providers see is always a deliberate, reviewed diff.
 */
const golden = (file: string, value: unknown): void => {
  const url = new URL(`./golden/${file}`, import.meta.url)
  const text = JSON.stringify(value, null, 2) + "\n"
  if (process.env.UPDATE_GOLDEN === "1") {
    fs.writeFileSync(url, text)
    return
  }
  if (!fs.existsSync(url)) throw new Error(`missing golden file test/golden/${file}; run with UPDATE_GOLDEN=1`)
  expect(text).toBe(fs.readFileSync(url, "utf8"))
}

const ReadFile = Tool.make("read_file", {
  description: "Read a file from disk",
  parameters: {
    path: Schema.String.annotations({ description: "Absolute path to read" }),
    max_bytes: Schema.optional(Schema.Int)
  },
  success: Schema.String,
  annotations: { readOnly: true },
  handler: ({ path }) => Effect.succeed(`contents of ${path}`)
})

const Add = Tool.make("add", {
  description: "Add two integers",
  strict: true,
  parameters: { a: Schema.Int, b: Schema.Int },
  success: Schema.Struct({ sum: Schema.Int }),
  annotations: { readOnly: true, idempotent: true, openWorld: false },
  handler: ({ a, b }) => Effect.succeed({ sum: a + b })
})

const Now = Tool.make("now", {
  description: "The current time, as an ISO 8601 string",
  title: "Current time",
  handler: () => Effect.succeed(new Date(0).toISOString())
})

enum Sort {
  Created = "created",
  Updated = "updated"
}

const SearchIssues = Tool.make("search_issues", {
  description: "Search the issue tracker",
  parameters: {
    query: Schema.String.annotations({ description: "Words to look for" }),
    filter: Schema.optional(Schema.Struct({
      state: Schema.Literal("open", "closed"),
      labels: Schema.Array(Schema.String).annotations({ description: "Every label must match" })
    })),
    sort: Schema.optional(Schema.Enums(Sort)),
    limit: Schema.optional(Schema.Int.pipe(Schema.between(1, 100)))
  },
  handler: () => Effect.succeed([])
})

const Echo = Tool.fromJsonSchema("echo", {
  description: "Echo a message back",
  parameters: {
    type: "object",
    properties: {
      message: { type: "string", description: "What to say" },
      times: { type: "integer", minimum: 1 }
    },
    required: ["message"]
  },
  annotations: { destructive: false },
  handler: (args) => Effect.succeed(String(args.message))
})

const tools = [ReadFile, Add, Now, SearchIssues, Echo] as const
const kit = Toolkit.make(...tools)

const formats = ["openAiChat", "openAiResponses", "anthropic", "gemini", "mcp"] as const

describe("ToolDefinition", () => {
  describe("golden files", () => {
    it("openAiChat", () => golden("openAiChat.json", tools.map(ToolDefinition.openAiChat)))
    it("openAiResponses", () => golden("openAiResponses.json", tools.map(ToolDefinition.openAiResponses)))
    it("anthropic", () => golden("anthropic.json", tools.map(ToolDefinition.anthropic)))
    it("gemini", () => golden("gemini.json", tools.map(ToolDefinition.gemini)))
    it("mcp", () => golden("mcp.json", tools.map(ToolDefinition.mcp)))
  })

  it("Toolkit.definitions gives each format's definitions in the toolkit's order", () => {
    const byFunction = {
      openAiChat: ToolDefinition.openAiChat,
      openAiResponses: ToolDefinition.openAiResponses,
      anthropic: ToolDefinition.anthropic,
      gemini: ToolDefinition.gemini,
      mcp: ToolDefinition.mcp
    }
    for (const format of formats) {
      const expected = tools.map((tool) => byFunction[format](tool))
      expect(Toolkit.definitions(kit, format)).toEqual(expected)
      expect(kit.pipe(Toolkit.definitions(format))).toEqual(expected)
      expect(tools.map((tool) => ToolDefinition.make(tool, format))).toEqual(expected)
    }
    expect(Toolkit.definitions(kit, "mcp").map((d) => d.name)).toEqual([
      "read_file",
      "add",
      "now",
      "search_issues",
      "echo"
    ])
  })

  it("writes strict only when it is true, with the strict projection as parameters", () => {
    expect(ToolDefinition.openAiChat(ReadFile).function).not.toHaveProperty("strict")
    expect(ToolDefinition.openAiResponses(ReadFile)).not.toHaveProperty("strict")
    expect(ToolDefinition.openAiChat(Add).function.strict).toBe(true)
    expect(ToolDefinition.openAiResponses(Add).strict).toBe(true)
    expect(ToolDefinition.openAiChat(Add).function.parameters).toMatchObject({ additionalProperties: false })
    const notStrict = Tool.make("lenient", { description: "d", strict: false, handler: () => Effect.succeed("") })
    expect(ToolDefinition.openAiChat(notStrict).function).not.toHaveProperty("strict")
  })

  it("serves the standard projection to Anthropic and MCP, even for a strict tool", () => {
    expect(ToolDefinition.anthropic(SearchIssues).input_schema).toBe(SearchIssues.inputSchema)
    expect(ToolDefinition.mcp(Add).inputSchema).toEqual({
      type: "object",
      properties: {
        a: { type: "integer", description: "an integer" },
        b: { type: "integer", description: "an integer" }
      },
      required: ["a", "b"],
      additionalProperties: false
    })
  })

  it("gives MCP an outputSchema only for an object success schema", () => {
    expect(ToolDefinition.mcp(ReadFile)).not.toHaveProperty("outputSchema")
    expect(ToolDefinition.mcp(Now)).not.toHaveProperty("outputSchema")
    expect(ToolDefinition.mcp(Add).outputSchema).toEqual({
      type: "object",
      properties: { sum: { type: "integer", description: "an integer" } },
      required: ["sum"],
      additionalProperties: false
    })
  })

  it("gives MCP exactly the hints a tool states, false ones included, and no annotations when it states none", () => {
    expect(ToolDefinition.mcp(ReadFile).annotations).toEqual({ readOnlyHint: true })
    expect(ToolDefinition.mcp(Add).annotations).toEqual({
      readOnlyHint: true,
      idempotentHint: true,
      openWorldHint: false
    })
    expect(ToolDefinition.mcp(Echo).annotations).toEqual({ destructiveHint: false })
    expect(ToolDefinition.mcp(Now)).not.toHaveProperty("annotations")
    expect(ToolDefinition.mcp(SearchIssues)).not.toHaveProperty("annotations")
    expect(ToolDefinition.mcp(Now).title).toBe("Current time")
    expect(ToolDefinition.mcp(ReadFile)).not.toHaveProperty("title")
  })

  it("leaves Gemini's parameters out when a tool has none", () => {
    expect(ToolDefinition.gemini(Now)).toEqual({ name: "now", description: "The current time, as an ISO 8601 string" })
    expect(ToolDefinition.gemini(ReadFile).parameters).toEqual({
      type: "object",
      properties: {
        path: { type: "string", description: "Absolute path to read" },
        max_bytes: { type: "integer", description: "an integer" }
      },
      required: ["path"]
    })
  })
})
