/**
 * The examples of docs/tools.md, run (see ./examples.ts for how the page and this file are kept the same).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Option, Schema } from "effect"
import { expectTypeOf } from "vitest"
import { Tool, ToolDefinition, ToolError, Toolkit, ToolResult, ToolSchema } from "../src/index.js"
import { checkExamples } from "./examples.js"

// #region make
class FileNotFound extends Schema.TaggedError<FileNotFound>()("FileNotFound", { path: Schema.String }) {
  override get message() {
    return `no such file: ${this.path}`
  }
}

const files: Record<string, string> = { "/etc/hostname": "example\n" }

const ReadFile = Tool.make("read_file", {
  description: "Read a file from disk",
  parameters: {
    path: Schema.String.annotations({ description: "Absolute path to read" }),
    max_bytes: Schema.optional(Schema.Int.pipe(Schema.positive()))
  },
  success: Schema.String,
  failure: FileNotFound,
  annotations: { readOnly: true },
  handler: ({ max_bytes, path }) =>
    path in files
      ? Effect.succeed(files[path].slice(0, max_bytes))
      : Effect.fail(new FileNotFound({ path }))
})
// #endregion

// #region types
// continues the example "make"

const Stat = Tool.make("stat", {
  description: "Size and modification time of a file",
  parameters: { path: Schema.String },
  success: Schema.Struct({ size: Schema.Int, modified: Schema.Date }),
  handler: () => Effect.succeed({ size: 12, modified: new Date(0) })
})

const typedKit = Toolkit.make(ReadFile, Stat)

type StatParameters = Tool.Parameters<typeof Stat> // { readonly path: string }
type StatSuccess = Tool.Success<typeof Stat> // { readonly size: number; readonly modified: Date }
type StatStructured = Tool.Structured<typeof Stat> // { readonly size: number; readonly modified: string }
type ReadFileFailure = Tool.Failure<typeof ReadFile> // FileNotFound
type KitNames = Tool.Name<Toolkit.Tools<typeof typedKit>> // "read_file" | "stat"
const kitNames: ReadonlyArray<KitNames> = ["read_file", "stat"] // a typo here would not compile
// #endregion

// #region execute
// continues the example "make"

/** What the model reads back for one call: the output, or one `Error: ...` line. */
const modelText = (outcome: Either.Either<ToolResult.ToolResult, ToolError.ToolError>): string =>
  Either.isRight(outcome) ? ToolResult.toText(outcome.right) : ToolError.toModelText(outcome.left)

const executeDemo = Effect.forEach([
  "{\"path\": \"/etc/hostname\"}",
  "{\"path\": \"/etc/shadow\"}",
  "{\"path\": \"/etc/hostname\", \"max_bytes\": -1, \"encoding\": \"utf8\"}",
  "{\"path\": 42",
  "[\"/etc/hostname\"]"
], (args, i) => Effect.map(Tool.execute(ReadFile, { id: `call_${i}`, arguments: args }), modelText))
// => [
//   "example\n",
//   "Error: no such file: /etc/shadow",
//   "Error: invalid arguments: encoding: unexpected property; the known properties are path, max_bytes\n" +
//     "max_bytes: expected an integer > 0, got -1",
//   "Error: invalid arguments: not valid JSON (...); send the arguments as one JSON object",
//   "Error: invalid arguments: expected a JSON object, got an array"
// ]
// #endregion

// #region invalid
// continues the example "execute"

const Search = Tool.make("search", {
  description: "Search the issue tracker",
  parameters: {
    query: Schema.String.pipe(Schema.minLength(1)),
    state: Schema.Literal("open", "closed"),
    labels: Schema.optional(Schema.Array(Schema.String)),
    options: Schema.optional(Schema.Struct({ depth: Schema.Int.pipe(Schema.between(1, 5)) }))
  },
  handler: () => Effect.succeed([])
})

const invalidDemo = Effect.map(
  Tool.execute(Search, {
    id: "call_1",
    arguments: { query: "", state: "merged", labels: ["bug", 7], options: { depth: 9 } }
  }),
  modelText
)
// => "Error: invalid arguments: query: expected a string of at least 1 character, got \"\"\n" +
//    "state: expected one of \"open\", \"closed\", got \"merged\"\n" +
//    "labels[1]: expected a string, got 7\n" +
//    "options.depth: expected an integer between 1 and 5, got 9"
// #endregion

// #region typed-call
// continues the example "make"

const fsKit = Toolkit.make(ReadFile)

// Effect<string, ToolError, never>: FileNotFound is handled, by its tag, and is gone from the error type
const hostname = Toolkit.call(fsKit, "read_file", { path: "/etc/hostnames" }).pipe(
  Effect.catchTag("FileNotFound", ({ path }) => Effect.succeed(`(${path} is missing)`))
)
// => "(/etc/hostnames is missing)"

const smuggled: any = { path: 42 }
const refused = Effect.flip(Tool.call(ReadFile, smuggled))
// => InvalidArguments: "invalid arguments: path: expected a string, got 42"
// #endregion

// #region output
const Stats = Tool.make("stats", {
  description: "Count the lines of a text",
  parameters: { text: Schema.String },
  success: Schema.Struct({ lines: Schema.Int, empty: Schema.Boolean }),
  handler: ({ text }) => Effect.succeed({ lines: text.split("\n").length, empty: text === "" })
})

const outputDemo = Effect.map(
  Tool.execute(Stats, { id: "call_1", arguments: { text: "a\nb" } }),
  Either.map((result) => ({ text: ToolResult.toText(result), structured: result.structured }))
)
// => Either.right({ text: "{\"lines\":2,\"empty\":false}", structured: { lines: 2, empty: false } })
// #endregion

// #region model-output
const ListDir = Tool.make("list_dir", {
  description: "List a folder",
  parameters: { path: Schema.String },
  success: Schema.Struct({ entries: Schema.Array(Schema.Struct({ name: Schema.String, bytes: Schema.Int })) }),
  // the model reads one line per entry; the program gets every field
  toModelOutput: ({ entries }) => entries.map((entry) => `${entry.name} (${entry.bytes} bytes)`).join("\n"),
  handler: () => Effect.succeed({ entries: [{ name: "a.txt", bytes: 12 }, { name: "b.txt", bytes: 40 }] })
})

const modelOutputDemo = Effect.map(
  Tool.execute(ListDir, { id: "call_1", arguments: { path: "." } }),
  (outcome) => Either.map(outcome, (result) => ({ text: ToolResult.toText(result), structured: result.structured }))
)
// => Either.right({
//   text: "a.txt (12 bytes)\nb.txt (40 bytes)",
//   structured: { entries: [{ name: "a.txt", bytes: 12 }, { name: "b.txt", bytes: 40 }] }
// })
// #endregion

// #region progress
// continues the example "execute"

const Index = Tool.make("index", {
  description: "Index a folder",
  parameters: { folder: Schema.String },
  handler: ({ folder }) =>
    Effect.gen(function*() {
      const caller = Option.match(yield* Tool.currentCall, { onNone: () => "nobody", onSome: (call) => call.id })
      for (let done = 1; done <= 3; done++) {
        yield* Tool.progress({ progress: done, total: 3, message: `indexed part ${done} of ${folder}` })
      }
      return `indexed ${folder} for ${caller}`
    })
})

const progressDemo = Effect.gen(function*() {
  const seen: Array<string> = []
  const outcome = yield* Tool.execute(Index, { id: "call_7", arguments: { folder: "src" } }, {
    onProgress: (p) => Effect.sync(() => seen.push(`${p.progress}/${p.total} ${p.message}`))
  })
  return { seen, text: modelText(outcome) }
})
// => {
//   seen: ["1/3 indexed part 1 of src", "2/3 indexed part 2 of src", "3/3 indexed part 3 of src"],
//   text: "indexed src for call_7"
// }
// #endregion

// #region json-schema
// continues the example "execute"

const Echo = Tool.fromJsonSchema("echo", {
  description: "Echo a message back",
  parameters: {
    type: "object",
    properties: { message: { type: "string" }, times: { type: "integer", minimum: 1 } },
    required: ["message"],
    additionalProperties: false
  },
  handler: (args) => Effect.succeed(String(args.message).repeat(Number(args.times ?? 1)))
})

const jsonSchemaDemo = Effect.forEach(
  [{ message: "hi", times: 2 }, { times: 0 }],
  (args) => Effect.map(Tool.execute(Echo, { id: "e", arguments: args }), modelText)
)
// => [
//   "hihi",
//   "Error: invalid arguments: message: missing required property, expected a string\n" +
//     "times: expected a number >= 1, got 0"
// ]
// #endregion

// #region wrap
// continues the example "execute"

const cache = new Map<string, string>()
const reads: Array<string> = []
const CachedRead = Tool.wrap(ReadFile, (params, next) => {
  const cached = cache.get(params.path)
  if (cached !== undefined) return Effect.succeed(cached)
  reads.push(params.path)
  return Effect.tap(next(params), (text) => Effect.sync(() => cache.set(params.path, text)))
}, { description: "Read a file from disk (repeated reads come from a cache)" })

const wrapDemo = Effect.gen(function*() {
  const first = yield* Tool.execute(CachedRead, { id: "r1", arguments: { path: "/etc/hostname" } })
  const again = yield* Tool.execute(CachedRead, { id: "r2", arguments: { path: "/etc/hostname" } })
  const missing = yield* Tool.execute(CachedRead, { id: "r3", arguments: { path: "/etc/shadow" } })
  return {
    texts: [first, again, missing].map(modelText),
    reads,
    name: CachedRead.name,
    readOnly: CachedRead.annotations.readOnly
  }
})
// => {
//   texts: ["example\n", "example\n", "Error: no such file: /etc/shadow"],
//   reads: ["/etc/hostname", "/etc/shadow"],
//   name: "read_file",
//   readOnly: true
// }
// #endregion

// #region toolkit
// continues the examples "make", "invalid" and "json-schema"

const kit = Toolkit.make(ReadFile, Search)
const docs = Toolkit.prefix(Toolkit.make(Echo), "docs")
const everything = Toolkit.merge(kit, docs)

const names = Toolkit.names(everything)
// => ["read_file", "search", "docs__echo"]
const forAnthropic = Toolkit.definitions(everything, "anthropic")
// => [{ name: "read_file", description: "Read a file from disk", input_schema: { type: "object", ... } }, ...]
// #endregion

// #region subsets
// continues the example "toolkit"

const readOnly = Toolkit.pick(everything, "read_file", "search")
// => Toolkit<typeof ReadFile | typeof Search>, names ["read_file", "search"]
const withoutDocs = Toolkit.names(Toolkit.omit(everything, "docs__echo"))
// => ["read_file", "search"]
// #endregion

// #region definitions
// continues the example "execute"

const Add = Tool.make("add", {
  description: "Add two integers",
  strict: true,
  parameters: { a: Schema.Int, b: Schema.Int, note: Schema.optional(Schema.String) },
  handler: ({ a, b }) => Effect.succeed({ sum: a + b })
})

const openAi = ToolDefinition.openAiChat(Add)
// => {
//   type: "function",
//   function: {
//     name: "add",
//     description: "Add two integers",
//     parameters: {
//       type: "object",
//       properties: {
//         a: { type: "integer", description: "an integer" },
//         b: { type: "integer", description: "an integer" },
//         note: { anyOf: [{ type: "string" }, { type: "null" }] }
//       },
//       required: ["a", "b", "note"],
//       additionalProperties: false
//     },
//     strict: true
//   }
// }
const mcp = ToolDefinition.mcp(ReadFile)
// => { name: "read_file", description: "Read a file from disk", inputSchema: { ... }, annotations: { readOnlyHint: true } }
const strictNull = Effect.map(Tool.execute(Add, { id: "a", arguments: { a: 2, b: 3, note: null } }), modelText)
// => "{\"sum\":5}"  (under strict mode the model sends null for an absent optional; it is read as absent)
// #endregion

// #region projections
const Filter = Tool.make("filter", {
  description: "Filter records",
  parameters: {
    since: Schema.Date,
    limit: Schema.optional(Schema.NumberFromString),
    owner: Schema.NullOr(Schema.String)
  },
  handler: () => Effect.succeed([])
})

const standard = ToolSchema.jsonSchema(Filter)
// => {
//   type: "object",
//   properties: {
//     since: { type: "string", format: "date-time" },
//     limit: { type: "string", pattern: "...", description: "a string to be decoded into a number" },
//     owner: { anyOf: [{ type: "string" }, { type: "null" }] }
//   },
//   required: ["since", "owner"],
//   additionalProperties: false
// }
const gemini = ToolSchema.jsonSchema(Filter, { target: "gemini" }).properties
// => { since: {...}, limit: {...}, owner: { type: "string", nullable: true } }
// #endregion

describe("docs/tools.md", () => {
  it("shows each example exactly as this file runs it", () =>
    checkExamples(new URL("./tools.md", import.meta.url), new URL("./tools.test.ts", import.meta.url)))

  it("types: what each extractor reads back, as the comments say", () => {
    expectTypeOf<StatParameters>().toEqualTypeOf<{ readonly path: string }>()
    expectTypeOf<StatSuccess>().toEqualTypeOf<{ readonly size: number; readonly modified: Date }>()
    expectTypeOf<StatStructured>().toEqualTypeOf<{ readonly size: number; readonly modified: string }>()
    expectTypeOf<ReadFileFailure>().toEqualTypeOf<FileNotFound>()
    expectTypeOf<KitNames>().toEqualTypeOf<"read_file" | "stat">()
    expect(Toolkit.names(typedKit)).toEqual(kitNames)
  })

  it.effect("typed call: the tool's failure handled by its tag, wrong parameters from `any` refused", () =>
    Effect.gen(function*() {
      expectTypeOf(hostname).toEqualTypeOf<Effect.Effect<string, ToolError.ToolError, never>>()
      expect(yield* hostname).toBe("(/etc/hostnames is missing)")
      const error = yield* refused
      expect(error).toBeInstanceOf(ToolError.InvalidArguments)
      expect(error.message).toBe("invalid arguments: path: expected a string, got 42")
    }))

  it.effect("toModelOutput: the model reads the shaped text, structured keeps the value", () =>
    Effect.map(modelOutputDemo, (outcome) =>
      expect(outcome).toEqual(Either.right({
        text: "a.txt (12 bytes)\nb.txt (40 bytes)",
        structured: { entries: [{ name: "a.txt", bytes: 12 }, { name: "b.txt", bytes: 40 }] }
      }))))

  it("subsets: pick and omit keep the toolkit's order, and their types only those tools", () => {
    expectTypeOf(readOnly).toEqualTypeOf<Toolkit.Toolkit<typeof ReadFile | typeof Search>>()
    expect(Toolkit.names(readOnly)).toEqual(["read_file", "search"])
    expect(withoutDocs).toEqual(["read_file", "search"])
  })

  it.effect("execute: output, typed failure, invalid arguments, not JSON, not an object", () =>
    Effect.map(executeDemo, (texts) => {
      expect(texts[0]).toBe("example\n")
      expect(texts[1]).toBe("Error: no such file: /etc/shadow")
      expect(texts[2]).toBe(
        "Error: invalid arguments: encoding: unexpected property; the known properties are path, max_bytes\n" +
          "max_bytes: expected an integer > 0, got -1"
      )
      expect(texts[3]).toMatch(
        /^Error: invalid arguments: not valid JSON \(.*\); send the arguments as one JSON object$/
      )
      expect(texts[4]).toBe("Error: invalid arguments: expected a JSON object, got an array")
    }))

  it.effect("invalid arguments: every offending path in one message", () =>
    Effect.map(invalidDemo, (text) =>
      expect(text).toBe(
        "Error: invalid arguments: query: expected a string of at least 1 character, got \"\"\n" +
          "state: expected one of \"open\", \"closed\", got \"merged\"\n" +
          "labels[1]: expected a string, got 7\n" +
          "options.depth: expected an integer between 1 and 5, got 9"
      )))

  it.effect("output: a success schema gives JSON text and structured output", () =>
    Effect.map(
      outputDemo,
      (outcome) =>
        expect(outcome).toEqual(
          Either.right({ text: "{\"lines\":2,\"empty\":false}", structured: { lines: 2, empty: false } })
        )
    ))

  it.effect("progress and the current call", () =>
    Effect.map(progressDemo, (result) =>
      expect(result).toEqual({
        seen: ["1/3 indexed part 1 of src", "2/3 indexed part 2 of src", "3/3 indexed part 3 of src"],
        text: "indexed src for call_7"
      })))

  it.effect("a JSON Schema tool checks its arguments with Ajv", () =>
    Effect.map(jsonSchemaDemo, (texts) =>
      expect(texts).toEqual([
        "hihi",
        "Error: invalid arguments: message: missing required property, expected a string\n" +
        "times: expected a number >= 1, got 0"
      ])))

  it.effect("wrap: the wrapper runs, the rest is the original's", () =>
    Effect.map(wrapDemo, (demo) => {
      expect(demo).toEqual({
        texts: ["example\n", "example\n", "Error: no such file: /etc/shadow"],
        reads: ["/etc/hostname", "/etc/shadow"],
        name: "read_file",
        readOnly: true
      })
      expect(CachedRead.description).toBe("Read a file from disk (repeated reads come from a cache)")
      expect(CachedRead.inputSchema).toBe(ReadFile.inputSchema)
    }))

  it("toolkits: merge, prefix, definitions", () => {
    expect(names).toEqual(["read_file", "search", "docs__echo"])
    expect(forAnthropic[0]).toMatchObject({ name: "read_file", description: "Read a file from disk" })
    expect(forAnthropic[0].input_schema.type).toBe("object")
  })

  it.effect("definitions: strict for OpenAI, hints for MCP, null read as absent", () =>
    Effect.gen(function*() {
      expect(openAi).toEqual({
        type: "function",
        function: {
          name: "add",
          description: "Add two integers",
          parameters: {
            type: "object",
            properties: {
              a: { type: "integer", description: "an integer" },
              b: { type: "integer", description: "an integer" },
              note: { anyOf: [{ type: "string" }, { type: "null" }] }
            },
            required: ["a", "b", "note"],
            additionalProperties: false
          },
          strict: true
        }
      })
      expect(mcp).toMatchObject({ name: "read_file", annotations: { readOnlyHint: true } })
      expect(mcp).not.toHaveProperty("title")
      expect(yield* strictNull).toBe("{\"sum\":5}")
    }))

  it("projections: dates, encoded sides, nullable", () => {
    expect(standard.required).toEqual(["since", "owner"])
    const properties = standard.properties as Record<string, Record<string, unknown>>
    expect(properties.since).toEqual({ type: "string", format: "date-time" })
    expect(properties.limit).toMatchObject({ type: "string", description: "a string to be decoded into a number" })
    expect(properties.owner).toEqual({ anyOf: [{ type: "string" }, { type: "null" }] })
    expect((gemini as Record<string, unknown>).owner).toEqual({ type: "string", nullable: true })
  })
})
