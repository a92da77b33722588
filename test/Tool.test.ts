import { describe, expect, it } from "@effect/vitest"
import { Cause, Deferred, Duration, Effect, Either, Fiber, Option, Ref, Schema, TestClock } from "effect"
import { inspect } from "node:util"
import { Permission, Tool, ToolError, ToolResult } from "../src/index.js"
import { modelText } from "./helpers.js"

// ---------------------------------------------------------------------------------------------------------------
// helpers
// ---------------------------------------------------------------------------------------------------------------

type Outcome = Either.Either<ToolResult.ToolResult, ToolError.ToolError>

const call = <T extends Tool.Any>(
  tool: T,
  args: unknown,
  options?: Parameters<typeof Tool.execute>[2]
): Effect.Effect<Outcome, never, Tool.Requirements<T>> => Tool.execute(tool, { id: "call_1", arguments: args }, options)

const resultOf = (outcome: Outcome): ToolResult.ToolResult => {
  if (Either.isLeft(outcome)) throw new Error(`expected a result, got ${ToolError.toModelText(outcome.left)}`)
  return outcome.right
}

const errorOf = (outcome: Outcome): ToolError.ToolError => {
  if (Either.isRight(outcome)) throw new Error(`expected an error, got ${ToolResult.toText(outcome.right)}`)
  return outcome.left
}

/** A tool that returns what its handler gives, for the output-mapping tests. */
const returning = (output: unknown) =>
  Tool.make("out", { description: "Return a fixed output", handler: () => Effect.succeed(output) })

/** A tool with one parameter of every kind the argument errors talk about. */
const Rich = Tool.make("rich", {
  description: "Parameters of many kinds",
  parameters: {
    path: Schema.String,
    max_bytes: Schema.optional(Schema.Int),
    mode: Schema.optional(Schema.Literal("fast", "slow")),
    level: Schema.optional(Schema.Enums({ Low: "low", High: "high" })),
    options: Schema.optional(Schema.Struct({ depth: Schema.Int.pipe(Schema.between(0, 5)) })),
    tags: Schema.optional(Schema.Array(Schema.String)),
    count: Schema.optional(Schema.NumberFromString)
  },
  handler: (params) => Effect.succeed(params)
})

const invalidText = (args: unknown): Effect.Effect<string> => Effect.map(call(Rich, args), modelText)

// ---------------------------------------------------------------------------------------------------------------
// construction
// ---------------------------------------------------------------------------------------------------------------

describe("Tool.make", () => {
  it.effect("takes Struct fields and hands the handler the decoded parameters", () =>
    Effect.gen(function*() {
      const Sum = Tool.make("sum", {
        description: "Add up numbers",
        parameters: { a: Schema.Int, b: Schema.NumberFromString, scale: Schema.optional(Schema.Number) },
        handler: ({ a, b, scale }) => Effect.succeed(String((a + b) * (scale ?? 1)))
      })
      expect(Sum.name).toBe("sum")
      expect(Sum.description).toBe("Add up numbers")
      expect(Sum.inputSchema).toMatchObject({ type: "object", required: ["a", "b"] })
      expect(Object.keys(Sum.inputSchema.properties as object)).toEqual(["a", "b", "scale"])
      expect(modelText(yield* call(Sum, "{\"a\":2,\"b\":\"3\"}"))).toBe("5")
      expect(modelText(yield* call(Sum, { a: 2, b: "3", scale: 10 }))).toBe("50")
    }))

  it.effect("takes a Struct schema", () =>
    Effect.gen(function*() {
      const Echo = Tool.make("echo", {
        description: "Echo",
        parameters: Schema.Struct({ message: Schema.String }),
        handler: ({ message }) => Effect.succeed(message)
      })
      expect(Echo.inputSchema).toEqual({
        type: "object",
        properties: { message: { type: "string" } },
        required: ["message"],
        additionalProperties: false
      })
      expect(modelText(yield* call(Echo, "{\"message\":\"hi\"}"))).toBe("hi")
    }))

  it.effect("takes a Class schema and hands the handler an instance", () =>
    Effect.gen(function*() {
      class ReadParams extends Schema.Class<ReadParams>("ReadParams")({ path: Schema.String }) {
        get upper() {
          return this.path.toUpperCase()
        }
      }
      const Read = Tool.make("read", {
        description: "Read",
        parameters: ReadParams,
        handler: (params) => Effect.succeed(`${params instanceof ReadParams} ${params.upper}`)
      })
      expect(Read.inputSchema).toEqual({
        type: "object",
        properties: { path: { type: "string" } },
        required: ["path"],
        additionalProperties: false
      })
      expect(modelText(yield* call(Read, "{\"path\":\"a.txt\"}"))).toBe("true A.TXT")
    }))

  it("without parameters takes an empty object", () => {
    const Ping = Tool.make("ping", { description: "Ping", handler: () => Effect.succeed("pong") })
    expect(Ping.inputSchema).toMatchObject({ type: "object", properties: {}, required: [] })
  })

  it("accepts names of 1 to 64 letters, digits, _ and -", () => {
    for (const name of ["a", "read_file", "Read-File-2", "n".repeat(64)]) {
      expect(Tool.make(name, { description: "ok", handler: () => Effect.void }).name).toBe(name)
    }
  })

  it("throws for an empty name", () => {
    expect(() => Tool.make("", { description: "bad", handler: () => Effect.void })).toThrow(
      "invalid tool name \"\": a tool name is 1 to 64 letters, digits, \"_\" or \"-\""
    )
  })

  it("throws for a name of 65 characters", () => {
    const name = "n".repeat(65)
    expect(() => Tool.make(name, { description: "bad", handler: () => Effect.void })).toThrow(
      `invalid tool name "${name}": a tool name is 1 to 64 letters, digits, "_" or "-"`
    )
  })

  it("throws for a name with spaces or other characters", () => {
    for (const name of ["read file", "read.file", "read/file", "lésen"]) {
      expect(() => Tool.make(name, { description: "bad", handler: () => Effect.void })).toThrow(
        `invalid tool name ${JSON.stringify(name)}`
      )
    }
  })

  it("throws for parameters that cannot be served as JSON Schema", () => {
    expect(() =>
      Tool.make("big", {
        description: "bad",
        parameters: { n: Schema.BigIntFromSelf },
        handler: () => Effect.void
      })
    ).toThrow("tool \"big\": parameters cannot be served as JSON Schema: at n: a bigint")
  })

  it("throws for parameters that are not an object", () => {
    expect(() =>
      Tool.make("prim", {
        description: "bad",
        parameters: Schema.String as unknown as Schema.Struct<{}>,
        handler: () => Effect.void
      })
    ).toThrow("tool \"prim\": parameters cannot be served as JSON Schema: parameters must be an object schema")
  })

  describe("options on the tool value", () => {
    const Plain = Tool.make("plain", { description: "Plain", handler: () => Effect.void })

    it("defaults: not strict, not sequential, no timeout, validating, no title, no hints, no permission", () => {
      expect(Plain.strict).toBe(false)
      expect(Plain.sequential).toBe(false)
      expect(Plain.timeout).toBeUndefined()
      expect(Plain.validate).toBe(true)
      expect(Plain.title).toBeUndefined()
      expect(Plain.annotations).toEqual({})
      expect(Plain.permissionAction).toBeUndefined()
      expect(Plain.outputSchema).toBeUndefined()
      expect(Plain[Tool.KernelId].resources({})).toEqual([])
    })

    it("reflects title, strict, sequential, timeout, annotations and validate", () => {
      const Full = Tool.make("full", {
        description: "Full",
        title: "A full tool",
        strict: true,
        sequential: true,
        timeout: "30 seconds",
        annotations: { readOnly: true, destructive: false },
        validate: false,
        permission: { action: "write" },
        handler: () => Effect.void
      })
      expect(Full.title).toBe("A full tool")
      expect(Full.strict).toBe(true)
      expect(Full.sequential).toBe(true)
      expect(Full.timeout).toEqual(Duration.seconds(30))
      expect(Full.annotations).toEqual({ readOnly: true, destructive: false })
      expect(Full.annotations.idempotent).toBeUndefined()
      expect(Full.validate).toBe(false)
      expect(Full.permissionAction).toBe("write")
    })

    it("takes the title from the annotations when the option is absent", () => {
      const Titled = Tool.make("titled", {
        description: "Titled",
        annotations: { title: "From hints" },
        handler: () => Effect.void
      })
      expect(Titled.title).toBe("From hints")
    })

    it("gives resource keys from a fixed key", () => {
      const Shell = Tool.make("shell", { description: "Shell", resource: "shell:session", handler: () => Effect.void })
      expect(Shell[Tool.KernelId].resources({})).toEqual(["shell:session"])
    })

    it("gives resource keys from a function of the decoded parameters", () => {
      const Write = Tool.make("write", {
        description: "Write",
        parameters: { path: Schema.String, also: Schema.optional(Schema.String) },
        resource: ({ also, path }) => also === undefined ? `file:${path}` : [`file:${path}`, `file:${also}`],
        handler: () => Effect.void
      })
      expect(Write[Tool.KernelId].resources({ path: "a" })).toEqual(["file:a"])
      expect(Write[Tool.KernelId].resources({ path: "a", also: "b" })).toEqual(["file:a", "file:b"])
      const None = Tool.make("none", { description: "None", resource: () => undefined, handler: () => Effect.void })
      expect(None[Tool.KernelId].resources({})).toEqual([])
    })

    it("serves an object-shaped success schema as the output schema", () => {
      const Stat = Tool.make("stat", {
        description: "Stat",
        success: Schema.Struct({ size: Schema.Number }),
        handler: () => Effect.succeed({ size: 1 })
      })
      expect(Stat.outputSchema).toMatchObject({ type: "object", properties: { size: { type: "number" } } })
      const Text = Tool.make("text", { description: "Text", success: Schema.String, handler: () => Effect.succeed("") })
      expect(Text.outputSchema).toBeUndefined()
    })

    it("is recognised by isTool", () => {
      expect(Tool.isTool(Plain)).toBe(true)
      expect(Tool.isTool({ name: "plain" })).toBe(false)
    })
  })
})

// ---------------------------------------------------------------------------------------------------------------
// arguments
// ---------------------------------------------------------------------------------------------------------------

describe("Tool.execute arguments", () => {
  const Opt = Tool.make("opt", {
    description: "All optional",
    parameters: { a: Schema.optional(Schema.String) },
    handler: (params) => Effect.succeed(params)
  })

  it.effect("takes a JSON string", () =>
    Effect.gen(function*() {
      expect(modelText(yield* call(Opt, "{\"a\":\"x\"}"))).toBe("{\"a\":\"x\"}")
    }))

  it.effect("takes an already-parsed object", () =>
    Effect.gen(function*() {
      expect(modelText(yield* call(Opt, { a: "x" }))).toBe("{\"a\":\"x\"}")
    }))

  it.effect("takes an empty string as {}", () =>
    Effect.gen(function*() {
      expect(modelText(yield* call(Opt, ""))).toBe("{}")
      expect(modelText(yield* call(Opt, "  \n"))).toBe("{}")
    }))

  it.effect("takes undefined as {}", () =>
    Effect.gen(function*() {
      expect(modelText(yield* call(Opt, undefined))).toBe("{}")
    }))

  it.effect("checks an empty string against required parameters", () =>
    Effect.gen(function*() {
      expect(yield* invalidText("")).toBe(
        "Error: invalid arguments: path: missing required property, expected a string"
      )
    }))

  it.effect("refuses text that is not JSON", () =>
    Effect.gen(function*() {
      const error = errorOf(yield* call(Opt, "not json"))
      expect(error._tag).toBe("InvalidArguments")
      expect(error.message).toMatch(
        /^invalid arguments: not valid JSON \(.+\); send the arguments as one JSON object$/
      )
    }))

  it.effect("refuses an array", () =>
    Effect.gen(function*() {
      expect(modelText(yield* call(Opt, "[1,2]"))).toBe(
        "Error: invalid arguments: expected a JSON object, got an array"
      )
      expect(modelText(yield* call(Opt, [1, 2]))).toBe(
        "Error: invalid arguments: expected a JSON object, got an array"
      )
    }))

  it.effect("refuses null", () =>
    Effect.gen(function*() {
      expect(modelText(yield* call(Opt, "null"))).toBe("Error: invalid arguments: expected a JSON object, got null")
      expect(modelText(yield* call(Opt, null))).toBe("Error: invalid arguments: expected a JSON object, got null")
    }))

  it.effect("refuses other JSON values", () =>
    Effect.gen(function*() {
      expect(modelText(yield* call(Opt, "42"))).toBe("Error: invalid arguments: expected a JSON object, got 42")
      expect(modelText(yield* call(Opt, "\"a\""))).toBe(
        "Error: invalid arguments: expected a JSON object, got \"a\""
      )
      expect(modelText(yield* call(Opt, true))).toBe("Error: invalid arguments: expected a JSON object, got true")
    }))

  it.effect("does not run the handler for invalid arguments", () =>
    Effect.gen(function*() {
      let ran = false
      const Guarded = Tool.make("guarded", {
        description: "Guarded",
        parameters: { n: Schema.Number },
        handler: () => Effect.sync(() => (ran = true))
      })
      const error = errorOf(yield* call(Guarded, "{\"n\":\"x\"}"))
      expect(error._tag).toBe("InvalidArguments")
      expect(error.tool).toBe("guarded")
      expect(ran).toBe(false)
    }))

  it.effect("maps null to absent for an optional property of a strict tool", () =>
    Effect.gen(function*() {
      const Strict = Tool.make("strict", {
        description: "Strict",
        strict: true,
        parameters: { a: Schema.String, b: Schema.optional(Schema.String) },
        handler: (params) => Effect.succeed(params)
      })
      const result = resultOf(yield* call(Strict, "{\"a\":\"x\",\"b\":null}"))
      expect(result.structured).toEqual({ a: "x" })
      expect("b" in (result.structured as object)).toBe(false)
    }))

  it.effect("with validate: false hands the handler the parsed JSON untouched", () =>
    Effect.gen(function*() {
      const Loose = Tool.make("loose", {
        description: "Loose",
        validate: false,
        parameters: { n: Schema.NumberFromString },
        handler: (params) => Effect.succeed(params)
      })
      expect(resultOf(yield* call(Loose, "{\"n\":5,\"extra\":true}")).structured).toEqual({ n: 5, extra: true })
      expect(modelText(yield* call(Loose, "[]"))).toBe("Error: invalid arguments: expected a JSON object, got an array")
    }))

  it.effect("a refinement that throws while checking is the call's defect", () =>
    Effect.gen(function*() {
      const Throws = Tool.make("throws", {
        description: "Throws",
        parameters: {
          a: Schema.String.pipe(Schema.filter((): boolean => {
            throw new Error("refinement broke")
          }))
        },
        handler: () => Effect.succeed("ran")
      })
      expect(modelText(yield* call(Throws, "{\"a\":\"x\"}"))).toBe(
        "Error: tool \"throws\" panicked: checking the arguments failed: refinement broke"
      )
    }))
})

describe("invalid arguments text", () => {
  it.effect("names every offending path, nested and in arrays", () =>
    Effect.gen(function*() {
      expect(yield* invalidText({ path: "a", options: { depth: 9 }, tags: ["x", 5, "y", false] })).toBe(
        "Error: invalid arguments: options.depth: expected an integer between 0 and 5, got 9\n" +
          "tags[1]: expected a string, got 5\n" +
          "tags[3]: expected a string, got false"
      )
    }))

  it.effect("lists every problem, one a line", () =>
    Effect.gen(function*() {
      const text = yield* invalidText(
        "{\"path\":3,\"max_bytes\":1.5,\"mode\":\"medium\",\"options\":{\"depth\":1.5},\"tags\":[\"a\",5]}"
      )
      expect(text).toBe(
        "Error: invalid arguments: path: expected a string, got 3\n" +
          "max_bytes: expected an integer, got 1.5\n" +
          "mode: expected one of \"fast\", \"slow\", got \"medium\"\n" +
          "options.depth: expected an integer between 0 and 5, got 1.5\n" +
          "tags[1]: expected a string, got 5"
      )
    }))

  it.effect("lists the allowed values of a literal", () =>
    Effect.gen(function*() {
      expect(yield* invalidText({ path: "a", mode: "medium" })).toBe(
        "Error: invalid arguments: mode: expected one of \"fast\", \"slow\", got \"medium\""
      )
    }))

  it.effect("lists the allowed values of an enum", () =>
    Effect.gen(function*() {
      expect(yield* invalidText({ path: "a", level: "Low" })).toBe(
        "Error: invalid arguments: level: expected one of \"low\", \"high\", got \"Low\""
      )
    }))

  it.effect("names an unexpected property and the known ones", () =>
    Effect.gen(function*() {
      expect(yield* invalidText({ path: "a", colour: "red" })).toBe(
        "Error: invalid arguments: colour: unexpected property; the known properties are " +
          "path, max_bytes, mode, level, options, tags, count"
      )
    }))

  it.effect("names a missing property and what it expects", () =>
    Effect.gen(function*() {
      expect(yield* invalidText({ options: {} })).toBe(
        "Error: invalid arguments: path: missing required property, expected a string\n" +
          "options.depth: missing required property, expected an integer between 0 and 5"
      )
    }))

  it.effect("describes a chain of refinements whole, whichever link failed", () =>
    Effect.gen(function*() {
      const Bounded = Tool.make("bounded", {
        description: "Bounded",
        parameters: {
          code: Schema.optional(Schema.String.pipe(Schema.minLength(2), Schema.maxLength(4))),
          depth: Schema.optional(Schema.Int.pipe(Schema.between(0, 5)))
        },
        handler: () => Effect.void
      })
      expect(modelText(yield* call(Bounded, { code: "a", depth: 1.5 }))).toBe(
        "Error: invalid arguments: code: expected a string of 2 to 4 characters, got \"a\"\n" +
          "depth: expected an integer between 0 and 5, got 1.5"
      )
      expect(modelText(yield* call(Bounded, { code: "abcde", depth: 6 }))).toBe(
        "Error: invalid arguments: code: expected a string of 2 to 4 characters, got \"abcde\"\n" +
          "depth: expected an integer between 0 and 5, got 6"
      )
      expect(modelText(yield* call(Bounded, { code: 12, depth: "deep" }))).toBe(
        "Error: invalid arguments: code: expected a string of 2 to 4 characters, got 12\n" +
          "depth: expected an integer between 0 and 5, got \"deep\""
      )
    }))

  it.effect("names the refinement, not its base type, for a required value of the wrong type", () =>
    Effect.gen(function*() {
      const Sleep = Tool.make("sleep", {
        description: "Sleep",
        parameters: { ms: Schema.Int },
        handler: () => Effect.void
      })
      expect(modelText(yield* call(Sleep, { ms: "ten" }))).toBe(
        "Error: invalid arguments: ms: expected an integer, got \"ten\""
      )
    }))

  it.effect("shows an author's own message for a refinement, on required and optional properties", () =>
    Effect.gen(function*() {
      const Absolute = Schema.String.pipe(Schema.filter((s) => s.startsWith("/") || "must be an absolute path"))
      const Rooted = Schema.String.pipe(Schema.filter((s) => s.startsWith("/"), { message: () => "must start at /" }))
      const Paths = Tool.make("paths", {
        description: "Paths",
        parameters: {
          a: Absolute,
          b: Rooted,
          c: Schema.optional(Absolute),
          d: Schema.optional(Rooted)
        },
        handler: () => Effect.void
      })
      expect(modelText(yield* call(Paths, { a: "x", b: "x", c: "x", d: "x" }))).toBe(
        "Error: invalid arguments: a: must be an absolute path\n" +
          "b: must start at /\n" +
          "c: must be an absolute path\n" +
          "d: must start at /"
      )
    }))

  it.effect("names the base type when a refinement states nothing more", () =>
    Effect.gen(function*() {
      const Absolute = Schema.String.pipe(Schema.filter((s) => s.startsWith("/")))
      const Paths = Tool.make("paths", {
        description: "Paths",
        parameters: { a: Absolute, b: Schema.optional(Absolute) },
        handler: () => Effect.void
      })
      expect(modelText(yield* call(Paths, { a: 1, b: 2 }))).toBe(
        "Error: invalid arguments: a: expected a string, got 1\nb: expected a string, got 2"
      )
    }))

  it.effect("describes what a transformation expects on the wire", () =>
    Effect.gen(function*() {
      expect(yield* invalidText({ path: "a", count: "many" })).toBe(
        "Error: invalid arguments: count: expected a string to be decoded into a number, got \"many\""
      )
    }))

  it.effect("cuts a long value, stating its length", () =>
    Effect.gen(function*() {
      expect(yield* invalidText({ path: "a", max_bytes: "y".repeat(500) })).toBe(
        `Error: invalid arguments: max_bytes: expected an integer, got "${"y".repeat(78)}…" (500 characters)`
      )
    }))

  it.effect("cuts a large object value", () =>
    Effect.gen(function*() {
      const text = yield* invalidText({ path: { long: "z".repeat(10_000), more: Array(1000).fill(1) } })
      expect(text.startsWith("Error: invalid arguments: path: expected a string, got {\"long\":\"zzz")).toBe(true)
      expect(text).toContain("(10000 characters)")
      expect(text.length).toBeLessThan(200)
    }))

  it.effect("lists at most 20 problems and counts the rest", () =>
    Effect.gen(function*() {
      const text = yield* invalidText({ path: "a", tags: Array.from({ length: 25 }, (_, i) => i) })
      const lines = text.split("\n")
      expect(lines.length).toBe(21)
      expect(lines[0]).toBe("Error: invalid arguments: tags[0]: expected a string, got 0")
      expect(lines[19]).toBe("tags[19]: expected a string, got 19")
      expect(lines[20]).toBe("…and 5 more problems")
    }))

  it.effect("shows no Effect internals, parse trees or stacks", () =>
    Effect.gen(function*() {
      const text = yield* invalidText(
        { path: 1, mode: 2, level: 3, options: { depth: "x" }, tags: "no", count: 4, other: 5 }
      )
      for (const internal of ["ParseError", "Expected ", "└", "├", "Struct", "Refinement", "readonly", "    at "]) {
        expect(text).not.toContain(internal)
      }
      expect(text.split("\n").every((line) => line.includes(": "))).toBe(true)
    }))
})

describe("hostile arguments", () => {
  const Open = Tool.make("open", {
    description: "Takes anything",
    parameters: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
    handler: (params) => Effect.succeed(Object.assign({}, params))
  })

  const refusesProto = (args: unknown) =>
    Effect.gen(function*() {
      const error = errorOf(yield* call(Open, args))
      expect(error._tag).toBe("InvalidArguments")
      expect(error.message).toBe("invalid arguments: \"__proto__\" is not allowed as a property name")
      expect(({} as Record<string, unknown>).polluted).toBeUndefined()
      expect(Object.prototype).not.toHaveProperty("polluted")
    })

  it.effect("refuses a __proto__ key in a JSON string", () =>
    refusesProto("{\"path\":\"x\",\"__proto__\":{\"polluted\":true}}"))

  it.effect("refuses a __proto__ key spelled with \\u escapes", () =>
    refusesProto("{\"\\u005f\\u005fproto\\u005f\\u005f\":{\"polluted\":true}}"))

  it.effect("refuses a nested __proto__ key", () =>
    refusesProto("{\"a\":[{\"b\":{\"__proto__\":{\"polluted\":true}}}]}"))

  it.effect("refuses a __proto__ key in an object made by JSON.parse", () =>
    refusesProto(JSON.parse("{\"__proto__\":{\"polluted\":true}}")))

  it.effect("refuses a __proto__ key with validation off", () =>
    Effect.gen(function*() {
      const Loose = Tool.make("loose", {
        description: "Loose",
        validate: false,
        handler: (params) => Effect.succeed(Object.assign({}, params))
      })
      expect(modelText(yield* call(Loose, "{\"__proto__\":{\"polluted\":true}}"))).toBe(
        "Error: invalid arguments: \"__proto__\" is not allowed as a property name"
      )
      expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    }))

  it.effect("refuses constructor.prototype like __proto__, as JSON text, nested, and with validation off", () =>
    Effect.gen(function*() {
      const Loose = Tool.make("loose", {
        description: "Loose",
        validate: false,
        handler: (params) => Effect.succeed(Object.assign({}, params))
      })
      const refused = "Error: invalid arguments: \"constructor.prototype\" is not allowed as a property path"
      const polluting = "{\"constructor\":{\"prototype\":{\"polluted\":true}}}"
      expect(modelText(yield* call(Open, polluting))).toBe(refused)
      expect(modelText(yield* call(Open, JSON.parse(polluting)))).toBe(refused)
      expect(modelText(yield* call(Open, `{"a":[${polluting}]}`))).toBe(refused)
      expect(modelText(yield* call(Loose, polluting))).toBe(refused)
      expect(({} as Record<string, unknown>).polluted).toBeUndefined()
      // a property named constructor, or prototype, is an ordinary one
      expect(modelText(yield* call(Open, "{\"constructor\":\"x\",\"prototype\":1}"))).toBe(
        "{\"constructor\":\"x\",\"prototype\":1}"
      )
    }))

  it.effect("1e400 in JSON text is not a number a Schema.Number parameter gets", () =>
    Effect.gen(function*() {
      const Add = Tool.make("add", {
        description: "Adds",
        parameters: { a: Schema.Number },
        handler: ({ a }) => Effect.succeed(String(a))
      })
      expect(modelText(yield* call(Add, "{\"a\":1e400}"))).toBe(
        "Error: invalid arguments: a: expected a finite number, got 1e400"
      )
      expect(modelText(yield* call(Add, { a: Infinity }))).toBe(
        "Error: invalid arguments: a: expected a finite number, got a number out of range (Infinity)"
      )
      expect(modelText(yield* call(Add, "{\"a\":1e300}"))).toBe("1e+300")
    }))

  it.effect("accepts a 10 MB string argument in reasonable time", () =>
    Effect.gen(function*() {
      const Len = Tool.make("len", {
        description: "Length",
        parameters: { text: Schema.String },
        handler: ({ text }) => Effect.succeed(String(text.length))
      })
      const args = JSON.stringify({ text: "x".repeat(10_000_000) })
      const started = Date.now()
      expect(modelText(yield* call(Len, args))).toBe("10000000")
      expect(Date.now() - started).toBeLessThan(5_000)
    }))

  it.effect("refuses 100,000 levels of nesting in a JSON string", () =>
    Effect.gen(function*() {
      const args = "{\"a\":".repeat(100_000) + "{}" + "}".repeat(100_000)
      expect(modelText(yield* call(Open, args))).toBe(
        "Error: invalid arguments: arguments are nested deeper than 256 levels"
      )
    }))

  it.effect("refuses 100,000 levels of array nesting in a JSON string", () =>
    Effect.gen(function*() {
      const args = "{\"a\":" + "[".repeat(100_000) + "]".repeat(100_000) + "}"
      expect(modelText(yield* call(Rich, args))).toBe(
        "Error: invalid arguments: arguments are nested deeper than 256 levels"
      )
    }))

  it.effect("refuses 100,000 levels of nesting in a parsed value", () =>
    Effect.gen(function*() {
      let deep: Record<string, unknown> = {}
      for (let i = 0; i < 100_000; i++) deep = { a: deep }
      expect(modelText(yield* call(Open, deep))).toBe(
        "Error: invalid arguments: arguments are nested deeper than 256 levels"
      )
    }))

  it.effect("gives a short message for 10 MB of invalid JSON", () =>
    Effect.gen(function*() {
      const args = "{\"a\":\"" + "x".repeat(10_000_000) + "\" oops"
      const error = errorOf(yield* call(Open, args))
      expect(error._tag).toBe("InvalidArguments")
      expect(error.message.startsWith("invalid arguments: not valid JSON")).toBe(true)
      expect(error.message.length).toBeLessThan(500)
    }))

  it.effect("gives a short message for a 10 MB wrong value", () =>
    Effect.gen(function*() {
      const error = errorOf(yield* call(Rich, JSON.stringify({ path: ["x".repeat(10_000_000)] })))
      expect(error.message).toBe(
        `invalid arguments: path: expected a string, got ["${"x".repeat(76)}…" (10000000 characters)]`
      )
    }))

  it.effect("lists 20 of a million wrong array items in reasonable time", () =>
    Effect.gen(function*() {
      const args = "{\"path\":\"a\",\"tags\":[" + Array(1_000_000).fill("1").join(",") + "]}"
      const started = Date.now()
      const error = errorOf(yield* call(Rich, args))
      const elapsed = Date.now() - started
      const lines = error.message.split("\n")
      expect(lines.length).toBe(21)
      expect(lines[20]).toBe("…and 999980 more problems")
      expect(elapsed).toBeLessThan(10_000)
    }))

  it.effect("renders only the problems it lists, not every wrong item", () =>
    Effect.gen(function*() {
      // Each item counts the reads of its one property: the argument guard reads it once, a preview once more.
      let reads = 0
      const item = () =>
        Object.defineProperty({}, "x", {
          enumerable: true,
          get: () => {
            reads++
            return 1
          }
        })
      const tags = Array.from({ length: 1000 }, item)
      const error = errorOf(yield* call(Rich, { path: "a", tags }))
      expect(error.message.split("\n")[20]).toBe("…and 980 more problems")
      expect(reads).toBe(1000 + 20)
    }))

  // formatting stops at the cap: a huge invalid input costs a count, not a line per item
  it.effect("lists 20 of a million wrong array items of a JSON Schema tool in reasonable time", () =>
    Effect.gen(function*() {
      const Tags = Tool.fromJsonSchema("tags", {
        description: "Tags",
        parameters: { type: "object", properties: { tags: { type: "array", items: { type: "string" } } } },
        handler: () => Effect.void
      })
      const args = "{\"tags\":[" + Array(1_000_000).fill("1").join(",") + "]}"
      const started = Date.now()
      const error = errorOf(yield* call(Tags, args))
      expect(error.message.split("\n")[20]).toBe("…and 999980 more problems")
      expect(Date.now() - started).toBeLessThan(10_000)
    }))
})

// ---------------------------------------------------------------------------------------------------------------
// output mapping
// ---------------------------------------------------------------------------------------------------------------

describe("output mapping", () => {
  it.effect("a string is text", () =>
    Effect.gen(function*() {
      const result = resultOf(yield* call(returning("hello"), "{}"))
      expect(result.content).toEqual([{ type: "text", text: "hello" }])
      expect(result.structured).toBeUndefined()
    }))

  it.effect("a ToolResult is used as is", () =>
    Effect.gen(function*() {
      const given = ToolResult.withTerminate(ToolResult.withDetails(ToolResult.text("done"), { pid: 1 }))
      expect(resultOf(yield* call(returning(given), "{}"))).toBe(given)
    }))

  it.effect("an array of content parts is those parts", () =>
    Effect.gen(function*() {
      const parts = [
        { type: "text", text: "a chart:" },
        { type: "image", data: "iVBORw==", mimeType: "image/png" }
      ]
      const result = resultOf(yield* call(returning(parts), "{}"))
      expect(result.content).toEqual(parts)
      expect(result.structured).toBeUndefined()
    }))

  it.effect("an array that is not all content parts is JSON", () =>
    Effect.gen(function*() {
      const mixed = [{ type: "text", text: "a" }, { type: "text" }]
      const result = resultOf(yield* call(returning(mixed), "{}"))
      expect(ToolResult.toText(result)).toBe("[{\"type\":\"text\",\"text\":\"a\"},{\"type\":\"text\"}]")
      expect(result.structured).toEqual(mixed)
    }))

  it.effect("an empty array is JSON []", () =>
    Effect.gen(function*() {
      const result = resultOf(yield* call(returning([]), "{}"))
      expect(result.content).toEqual([{ type: "text", text: "[]" }])
      expect(result.structured).toEqual([])
    }))

  it.effect("undefined is empty text", () =>
    Effect.gen(function*() {
      const Void = Tool.make("void", { description: "Nothing", handler: () => Effect.void })
      const result = resultOf(yield* call(Void, "{}"))
      expect(result.content).toEqual([{ type: "text", text: "" }])
      expect(result.structured).toBeUndefined()
    }))

  it.effect("null is empty text", () =>
    Effect.gen(function*() {
      const result = resultOf(yield* call(returning(null), "{}"))
      expect(result.content).toEqual([{ type: "text", text: "" }])
      expect(result.structured).toBeUndefined()
    }))

  it.effect("an object is its JSON, with the value as structured output", () =>
    Effect.gen(function*() {
      const value = { sum: 5, items: ["a", "b"] }
      const result = resultOf(yield* call(returning(value), "{}"))
      expect(result.content).toEqual([{ type: "text", text: "{\"sum\":5,\"items\":[\"a\",\"b\"]}" }])
      expect(result.structured).toEqual(value)
      expect(result.terminate).toBe(false)
    }))

  it.effect("a number or a boolean is its JSON", () =>
    Effect.gen(function*() {
      expect(modelText(yield* call(returning(42), "{}"))).toBe("42")
      expect(modelText(yield* call(returning(false), "{}"))).toBe("false")
    }))

  it.effect("with a success schema, the value is encoded first", () =>
    Effect.gen(function*() {
      const Stamp = Tool.make("stamp", {
        description: "Stamp",
        success: Schema.Struct({ at: Schema.Date, count: Schema.NumberFromString }),
        handler: () => Effect.succeed({ at: new Date(0), count: 3 })
      })
      const result = resultOf(yield* call(Stamp, "{}"))
      expect(result.structured).toEqual({ at: "1970-01-01T00:00:00.000Z", count: "3" })
      expect(ToolResult.toText(result)).toBe("{\"at\":\"1970-01-01T00:00:00.000Z\",\"count\":\"3\"}")
    }))

  it.effect("with a success schema, a string output is still text", () =>
    Effect.gen(function*() {
      const Text = Tool.make("text", {
        description: "Text",
        success: Schema.String,
        handler: () => Effect.succeed("hi")
      })
      expect(resultOf(yield* call(Text, "{}")).content).toEqual([{ type: "text", text: "hi" }])
    }))

  it.effect("an output that does not match the success schema is a defect", () =>
    Effect.gen(function*() {
      const Wrong = Tool.make("wrong", {
        description: "Wrong",
        success: Schema.Struct({ n: Schema.Number }),
        handler: () => Effect.succeed({ n: "x" } as unknown as { n: number })
      })
      expect(modelText(yield* call(Wrong, "{}"))).toBe(
        "Error: tool \"wrong\" panicked: output does not match the tool's success schema: n: expected a number, got \"x\""
      )
    }))

  it.effect("a success schema whose encoding throws is a defect, not a crash", () =>
    Effect.gen(function*() {
      const Throwing = Schema.transform(Schema.String, Schema.String, {
        decode: (s) => s,
        encode: (): string => {
          throw new Error("encoder broke")
        }
      })
      const Tool1 = Tool.make("enc", { description: "Enc", success: Throwing, handler: () => Effect.succeed("x") })
      const error = errorOf(yield* call(Tool1, "{}"))
      expect(error._tag).toBe("ToolDefect")
      expect(error.message).toBe(
        "tool \"enc\" panicked: encoding the output with the tool's success schema failed: encoder broke"
      )
    }))

  it.effect("a cyclic output is a defect saying it cannot be converted to JSON", () =>
    Effect.gen(function*() {
      const cyclic: Record<string, unknown> = { a: 1 }
      cyclic.self = cyclic
      const error = errorOf(yield* call(returning(cyclic), "{}"))
      expect(error._tag).toBe("ToolDefect")
      expect(error.message).toBe(
        "tool \"out\" panicked: output cannot be converted to JSON: Converting circular structure to JSON"
      )
    }))

  it.effect("a BigInt in the output is a defect saying it cannot be converted to JSON", () =>
    Effect.gen(function*() {
      const error = errorOf(yield* call(returning({ n: 10n }), "{}"))
      expect(error._tag).toBe("ToolDefect")
      expect(error.message).toBe(
        "tool \"out\" panicked: output cannot be converted to JSON: Do not know how to serialize a BigInt"
      )
    }))

  it.effect("a function output is a defect saying it cannot be converted to JSON", () =>
    Effect.gen(function*() {
      expect(modelText(yield* call(returning(() => 1), "{}"))).toBe(
        "Error: tool \"out\" panicked: output cannot be converted to JSON: it is a function"
      )
    }))

  it.effect("an output whose toJSON throws is a defect with one line", () =>
    Effect.gen(function*() {
      const output = {
        toJSON() {
          throw new Error("no JSON here\n    at toJSON (x.ts:1:1)")
        }
      }
      expect(modelText(yield* call(returning(output), "{}"))).toBe(
        "Error: tool \"out\" panicked: output cannot be converted to JSON: no JSON here"
      )
    }))
})

describe("toModelOutput", () => {
  const Entry = Schema.Struct({ name: Schema.String, modified: Schema.Date })
  const Listing = Tool.make("list", {
    description: "List a folder",
    success: Schema.Struct({ entries: Schema.Array(Entry) }),
    toModelOutput: ({ entries }) =>
      entries.map((entry) => `${entry.name} (${entry.modified.getUTCFullYear()})`).join("\n"),
    handler: () =>
      Effect.succeed({
        entries: [{ name: "a.txt", modified: new Date("2023-01-02T00:00:00.000Z") }, {
          name: "b.txt",
          modified: new Date("2024-03-04T00:00:00.000Z")
        }]
      })
  })

  it.effect("the model reads what it makes of the typed value; structured keeps the encoded value", () =>
    Effect.gen(function*() {
      const result = resultOf(yield* call(Listing, {}))
      expect(result.content).toEqual([{ type: "text", text: "a.txt (2023)\nb.txt (2024)" }])
      expect(result.structured).toEqual({
        entries: [{ name: "a.txt", modified: "2023-01-02T00:00:00.000Z" }, {
          name: "b.txt",
          modified: "2024-03-04T00:00:00.000Z"
        }]
      })
    }))

  it.effect("content parts are those parts; without a success schema structured is the value itself", () =>
    Effect.gen(function*() {
      const Chart = Tool.make("chart", {
        description: "Draw a chart",
        toModelOutput: ({ png }) => [{ type: "text", text: "the chart:" }, {
          type: "image",
          data: png,
          mimeType: "image/png"
        }],
        handler: () => Effect.succeed({ png: "iVBORw0KGgo=", points: 3 })
      })
      const result = resultOf(yield* call(Chart, {}))
      expect(result.content).toEqual([{ type: "text", text: "the chart:" }, {
        type: "image",
        data: "iVBORw0KGgo=",
        mimeType: "image/png"
      }])
      expect(result.structured).toEqual({ png: "iVBORw0KGgo=", points: 3 })
    }))

  it.effect("a string or nothing has no structured value, as without it", () =>
    Effect.gen(function*() {
      const Shout = Tool.make("shout", {
        description: "Shout",
        toModelOutput: (text) => text.toUpperCase(),
        handler: () => Effect.succeed("hi")
      })
      const result = resultOf(yield* call(Shout, {}))
      expect(ToolResult.toText(result)).toBe("HI")
      expect(result.structured).toBeUndefined()
    }))

  it.effect("a handler-made ToolResult is used as is", () =>
    Effect.gen(function*() {
      const Made = Tool.make("made", {
        description: "Make its own result",
        toModelOutput: () => "not this",
        handler: () => Effect.succeed(ToolResult.text("this"))
      })
      expect(ToolResult.toText(resultOf(yield* call(Made, {})))).toBe("this")
    }))

  it.effect("the output is checked against the success schema first; a throwing toModelOutput is a defect", () =>
    Effect.gen(function*() {
      const Liar = Tool.make("liar", {
        description: "Breaks its schema",
        success: Schema.Int,
        toModelOutput: (n) => `${n}`,
        handler: () => Effect.succeed(1.5)
      })
      expect(modelText(yield* call(Liar, {}))).toBe(
        "Error: tool \"liar\" panicked: output does not match the tool's success schema: expected an integer, got 1.5"
      )
      const Thrower = Tool.make("thrower", {
        description: "Cannot shape",
        toModelOutput: (): string => {
          throw new Error("no shape")
        },
        handler: () => Effect.succeed({ a: 1 })
      })
      expect(modelText(yield* call(Thrower, {}))).toBe(
        "Error: tool \"thrower\" panicked: shaping the output for the model failed: no shape"
      )
    }))

  it.effect("Tool.call still gives the program the handler's typed value", () =>
    Effect.gen(function*() {
      const listed = yield* Tool.call(Listing, {})
      expect(listed.entries[1].modified).toEqual(new Date("2024-03-04T00:00:00.000Z"))
    }))
})

// ---------------------------------------------------------------------------------------------------------------
// failures and defects
// ---------------------------------------------------------------------------------------------------------------

class FileNotFound extends Schema.TaggedError<FileNotFound>()("FileNotFound", { path: Schema.String }) {
  override get message() {
    return `no such file: ${this.path}`
  }
}

class Busy extends Schema.TaggedError<Busy>()("Busy", { retryAfter: Schema.Number }) {}

class Quota extends Schema.TaggedError<Quota>()("Quota", { message: Schema.String }) {}

const failing = <E>(error: E, failure?: Schema.Schema<E, any>) =>
  Tool.make("fails", {
    description: "Fails",
    ...(failure === undefined ? {} : { failure }),
    handler: () => Effect.fail(error)
  })

describe("typed failures", () => {
  it.effect("are ToolFailure with the error's message", () =>
    Effect.gen(function*() {
      const error = new FileNotFound({ path: "a.txt" })
      const outcome = errorOf(yield* call(failing(error, FileNotFound), "{}"))
      expect(outcome._tag).toBe("ToolFailure")
      expect(outcome.message).toBe("no such file: a.txt")
      expect(outcome._tag === "ToolFailure" && outcome.error).toBe(error)
      expect(outcome.tool).toBe("fails")
    }))

  it.effect("use a message field", () =>
    Effect.gen(function*() {
      expect(modelText(yield* call(failing(new Quota({ message: "quota exceeded" })), "{}"))).toBe(
        "Error: quota exceeded"
      )
    }))

  it.effect("use a plain Error's message", () =>
    Effect.gen(function*() {
      expect(modelText(yield* call(failing(new Error("nope")), "{}"))).toBe("Error: nope")
    }))

  it.effect("use a string as the message", () =>
    Effect.gen(function*() {
      expect(modelText(yield* call(failing("plain words"), "{}"))).toBe("Error: plain words")
    }))

  it.effect("without a message are their JSON", () =>
    Effect.gen(function*() {
      expect(modelText(yield* call(failing({ code: 42 }), "{}"))).toBe("Error: {\"code\":42}")
    }))

  it.effect("without a message are their JSON encoded by the failure schema", () =>
    Effect.gen(function*() {
      const Code = Schema.Struct({ code: Schema.NumberFromString })
      expect(modelText(yield* call(failing({ code: 42 }, Code), "{}"))).toBe("Error: {\"code\":\"42\"}")
    }))

  it.effect("a tagged error without a message is its encoded JSON, tag included", () =>
    Effect.gen(function*() {
      expect(modelText(yield* call(failing(new Busy({ retryAfter: 5 }), Busy), "{}"))).toBe(
        "Error: {\"retryAfter\":5,\"_tag\":\"Busy\"}"
      )
      expect(modelText(yield* call(failing(new Busy({ retryAfter: 5 })), "{}"))).toBe(
        "Error: {\"retryAfter\":5,\"_tag\":\"Busy\"}"
      )
    }))

  it.effect("an error whose message cannot be read is a defect, not a crash", () =>
    Effect.gen(function*() {
      const hostile = {
        get message(): string {
          throw new Error("message getter broke")
        }
      }
      const error = errorOf(yield* call(failing(hostile), "{}"))
      expect(error._tag).toBe("ToolDefect")
      expect(error.message).toBe("tool \"fails\" panicked: rendering its error failed: message getter broke")
    }))

  it.effect("a ToolError from the handler is kept as is", () =>
    Effect.gen(function*() {
      const denied = new ToolError.PermissionDenied({ tool: "fails", description: "delete /", reason: "no" })
      expect(errorOf(yield* call(failing(denied), "{}"))).toBe(denied)
      const timedOut = new ToolError.ToolTimeout({ tool: "inner", timeout: Duration.seconds(1) })
      expect(errorOf(yield* call(failing(timedOut), "{}"))).toBe(timedOut)
    }))

  it.effect("Permission.require refusing inside a handler ends the call with PermissionDenied", () =>
    Effect.gen(function*() {
      const Delete = Tool.make("delete", {
        description: "Delete",
        handler: () => Permission.require({ action: "delete", description: "delete every file" })
      })
      const outcome = yield* call(Delete, "{}").pipe(
        Effect.provide(Permission.layer(() => Effect.succeed(Permission.deny("read-only session"))))
      )
      const error = errorOf(outcome)
      expect(error._tag).toBe("PermissionDenied")
      expect(error.tool).toBe("delete")
      expect(error.message).toBe("permission denied: delete every file: read-only session")
    }))
})

describe("defects", () => {
  const stackLike = /\n|\s+at\s|\.ts:\d+/

  it.effect("Effect.die is a ToolDefect of one line, the Cause kept on the value", () =>
    Effect.gen(function*() {
      const boom = new Error("boom")
      const Dies = Tool.make("dies", { description: "Dies", handler: () => Effect.die(boom) })
      const error = errorOf(yield* call(Dies, "{}"))
      expect(error._tag).toBe("ToolDefect")
      expect(error.message).toBe("tool \"dies\" panicked: boom")
      expect(error.message).not.toMatch(stackLike)
      expect(error._tag === "ToolDefect" && Cause.squash(error.cause)).toBe(boom)
    }))

  it.effect("an exception thrown inside an Effect is a ToolDefect of one line", () =>
    Effect.gen(function*() {
      const Throws = Tool.make("throws", {
        description: "Throws",
        handler: () =>
          Effect.sync((): string => {
            throw new Error("kaboom\nsecond line")
          })
      })
      const error = errorOf(yield* call(Throws, "{}"))
      expect(error.message).toBe("tool \"throws\" panicked: kaboom")
      expect(error.message).not.toMatch(stackLike)
    }))

  it.effect("an exception thrown by the handler function itself is a ToolDefect", () =>
    Effect.gen(function*() {
      const Throws = Tool.make("throws", {
        description: "Throws",
        handler: (): Effect.Effect<string> => {
          throw new TypeError("cannot read properties of undefined")
        }
      })
      expect(modelText(yield* call(Throws, "{}"))).toBe(
        "Error: tool \"throws\" panicked: cannot read properties of undefined"
      )
    }))

  it.effect("a defect that is not an Error is shown briefly", () =>
    Effect.gen(function*() {
      const DiesString = Tool.make("s", { description: "S", handler: () => Effect.die("first\nsecond") })
      expect(modelText(yield* call(DiesString, "{}"))).toBe("Error: tool \"s\" panicked: first")
      const DiesObject = Tool.make("o", { description: "O", handler: () => Effect.die({ code: 1 }) })
      expect(modelText(yield* call(DiesObject, "{}"))).toBe("Error: tool \"o\" panicked: {\"code\":1}")
    }))

  it.effect("a defect that cannot even be shown is still a one-line ToolDefect", () =>
    Effect.gen(function*() {
      const unshowable = {
        get detail(): string {
          throw new Error("getter broke")
        }
      }
      const Dies = Tool.make("dies", { description: "Dies", handler: () => Effect.die(unshowable) })
      expect(modelText(yield* call(Dies, "{}"))).toBe("Error: tool \"dies\" panicked: a value that cannot be shown")
    }))

  it.effect("an error without a message is named by its class", () =>
    Effect.gen(function*() {
      const Dies = Tool.make("dies", { description: "Dies", handler: () => Effect.die(new RangeError()) })
      expect(modelText(yield* call(Dies, "{}"))).toBe("Error: tool \"dies\" panicked: RangeError")
    }))
})

// ---------------------------------------------------------------------------------------------------------------
// timeouts and interruption
// ---------------------------------------------------------------------------------------------------------------

/** A handler that never finishes and records that its finalizers ran. */
const hanging = (finalized: Ref.Ref<ReadonlyArray<string>>, started: Deferred.Deferred<void>) =>
  Effect.scoped(
    Effect.gen(function*() {
      yield* Effect.addFinalizer(() => Ref.update(finalized, (xs) => [...xs, "scope"]))
      yield* Deferred.succeed(started, undefined)
      return yield* Effect.never
    })
  ).pipe(Effect.ensuring(Ref.update(finalized, (xs) => [...xs, "ensuring"])))

describe("timeouts", () => {
  it.effect("the tool's timeout gives ToolTimeout after the handler's finalizers ran", () =>
    Effect.gen(function*() {
      const finalized = yield* Ref.make<ReadonlyArray<string>>([])
      const started = yield* Deferred.make<void>()
      const Slow = Tool.make("slow", {
        description: "Slow",
        timeout: "5 seconds",
        handler: () => hanging(finalized, started)
      })
      const fiber = yield* Effect.fork(call(Slow, "{}"))
      yield* Deferred.await(started)
      yield* TestClock.adjust("4 seconds")
      expect(fiber.unsafePoll()).toBeNull()
      yield* TestClock.adjust("1 second")
      const error = errorOf(yield* Fiber.join(fiber))
      expect(error._tag).toBe("ToolTimeout")
      expect(error.message).toBe("tool \"slow\" timed out after 5s")
      expect(yield* Ref.get(finalized)).toEqual(["scope", "ensuring"])
    }))

  it.effect("Tool.execute's timeout applies to a tool without its own", () =>
    Effect.gen(function*() {
      const finalized = yield* Ref.make<ReadonlyArray<string>>([])
      const started = yield* Deferred.make<void>()
      const Slow = Tool.make("slow", { description: "Slow", handler: () => hanging(finalized, started) })
      const fiber = yield* Effect.fork(call(Slow, "{}", { timeout: "2 seconds" }))
      yield* Deferred.await(started)
      yield* TestClock.adjust("2 seconds")
      const error = errorOf(yield* Fiber.join(fiber))
      expect(error._tag === "ToolTimeout" && Duration.toMillis(error.timeout)).toBe(2000)
      expect(error.message).toBe("tool \"slow\" timed out after 2s")
      expect(yield* Ref.get(finalized)).toEqual(["scope", "ensuring"])
    }))

  it.effect("the tool's own timeout wins over Tool.execute's", () =>
    Effect.gen(function*() {
      const finalized = yield* Ref.make<ReadonlyArray<string>>([])
      const started = yield* Deferred.make<void>()
      const Slow = Tool.make("slow", {
        description: "Slow",
        timeout: "10 seconds",
        handler: () => hanging(finalized, started)
      })
      const fiber = yield* Effect.fork(call(Slow, "{}", { timeout: "1 second" }))
      yield* Deferred.await(started)
      yield* TestClock.adjust("1 second")
      expect(fiber.unsafePoll()).toBeNull()
      yield* TestClock.adjust("9 seconds")
      expect(errorOf(yield* Fiber.join(fiber)).message).toBe("tool \"slow\" timed out after 10s")
    }))

  it.effect("a handler that finishes in time is not affected", () =>
    Effect.gen(function*() {
      const Quick = Tool.make("quick", {
        description: "Quick",
        timeout: "5 seconds",
        handler: () => Effect.as(Effect.sleep("4 seconds"), "done")
      })
      const fiber = yield* Effect.fork(call(Quick, "{}"))
      yield* TestClock.adjust("4 seconds")
      expect(modelText(yield* Fiber.join(fiber))).toBe("done")
    }))
})

describe("interruption", () => {
  it.effect("a handler interrupting itself gives ToolInterrupted with the last partial output", () =>
    Effect.gen(function*() {
      const Stops = Tool.make("stops", {
        description: "Stops",
        handler: () =>
          Effect.gen(function*() {
            yield* Tool.progress({ partial: "line 1" })
            yield* Tool.progress({ partial: "line 1\nline 2" })
            yield* Tool.progress({ message: "no partial here" })
            return yield* Effect.interrupt
          })
      })
      const error = errorOf(yield* call(Stops, "{}"))
      expect(error._tag).toBe("ToolInterrupted")
      expect(error.message).toBe("the call was cancelled before it finished")
      expect(error._tag === "ToolInterrupted" && error.partial).toBe("line 1\nline 2")
    }))

  it.effect("without partial output, ToolInterrupted carries none", () =>
    Effect.gen(function*() {
      const Stops = Tool.make("stops", { description: "Stops", handler: () => Effect.interrupt })
      const error = errorOf(yield* call(Stops, "{}"))
      expect(error._tag === "ToolInterrupted" && "partial" in error).toBe(false)
    }))

  it.effect("interrupting the fiber running Tool.execute interrupts the handler", () =>
    Effect.gen(function*() {
      const finalized = yield* Ref.make<ReadonlyArray<string>>([])
      const started = yield* Deferred.make<void>()
      const Slow = Tool.make("slow", { description: "Slow", handler: () => hanging(finalized, started) })
      const fiber = yield* Effect.fork(call(Slow, "{}"))
      yield* Deferred.await(started)
      yield* Fiber.interrupt(fiber)
      expect(yield* Ref.get(finalized)).toEqual(["scope", "ensuring"])
    }))
})

// ---------------------------------------------------------------------------------------------------------------
// inside a call
// ---------------------------------------------------------------------------------------------------------------

describe("Tool.progress", () => {
  it.effect("is delivered to execute's onProgress, in order", () =>
    Effect.gen(function*() {
      const seen = yield* Ref.make<ReadonlyArray<Tool.Progress>>([])
      const Steps = Tool.make("steps", {
        description: "Steps",
        handler: () =>
          Effect.gen(function*() {
            yield* Tool.progress({ progress: 1, total: 2, message: "first" })
            yield* Tool.progress({ progress: 2, total: 2, partial: { rows: 10 } })
            return "done"
          })
      })
      const outcome = yield* call(Steps, "{}", { onProgress: (p) => Ref.update(seen, (xs) => [...xs, p]) })
      expect(modelText(outcome)).toBe("done")
      expect(yield* Ref.get(seen)).toEqual([
        { progress: 1, total: 2, message: "first" },
        { progress: 2, total: 2, partial: { rows: 10 } }
      ])
    }))

  it.effect("arrives from a fiber forked by the handler", () =>
    Effect.gen(function*() {
      const seen = yield* Ref.make<ReadonlyArray<string>>([])
      const Forks = Tool.make("forks", {
        description: "Forks",
        handler: () =>
          Effect.gen(function*() {
            const child = yield* Effect.fork(Tool.progress({ message: "from the child" }))
            yield* Fiber.join(child)
            yield* Effect.forEach(["a", "b"], (m) => Tool.progress({ message: m }), { concurrency: 2 })
            return "done"
          })
      })
      yield* call(Forks, "{}", { onProgress: (p) => Ref.update(seen, (xs) => [...xs, p.message ?? ""]) })
      const messages = yield* Ref.get(seen)
      expect(messages[0]).toBe("from the child")
      expect([...messages.slice(1)].sort()).toEqual(["a", "b"])
    }))

  it.effect("is a no-op outside a call", () =>
    Effect.gen(function*() {
      yield* Tool.progress({ message: "nobody listens", partial: "x" })
    }))

  it("needs nothing in R, nor does Tool.currentCall", () => {
    const progress: Effect.Effect<void, never, never> = Tool.progress({ progress: 1 })
    const current: Effect.Effect<Option.Option<Tool.CallInfo>, never, never> = Tool.currentCall
    expect(Effect.isEffect(progress) && Effect.isEffect(current)).toBe(true)
  })

  it.effect("is a no-op in a call without onProgress", () =>
    Effect.gen(function*() {
      const Reports = Tool.make("reports", {
        description: "Reports",
        handler: () => Effect.as(Tool.progress({ progress: 1 }), "done")
      })
      expect(modelText(yield* call(Reports, "{}"))).toBe("done")
    }))
})

describe("Tool.currentCall", () => {
  const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

  it.effect("gives the call's id, name and idempotency key inside a handler", () =>
    Effect.gen(function*() {
      const WhoAmI = Tool.make("who_am_i", {
        description: "Who am I",
        handler: () => Effect.map(Tool.currentCall, Option.getOrThrow)
      })
      const outcome = yield* Tool.execute(WhoAmI, { id: "call_42", arguments: "{}" })
      const info = resultOf(outcome).structured as Tool.CallInfo
      expect({ id: info.id, name: info.name }).toEqual({ id: "call_42", name: "who_am_i" })
      expect(info.idempotencyKey).toMatch(UUID)
    }))

  it.effect("is seen by a fiber forked by the handler", () =>
    Effect.gen(function*() {
      const WhoAmI = Tool.make("who_am_i", {
        description: "Who am I",
        handler: () =>
          Effect.gen(function*() {
            const own = Option.getOrThrow(yield* Tool.currentCall)
            const forked = Option.getOrThrow(yield* Effect.flatMap(Effect.fork(Tool.currentCall), Fiber.join))
            return { same: own.idempotencyKey === forked.idempotencyKey, id: forked.id, name: forked.name }
          })
      })
      const outcome = yield* Tool.execute(WhoAmI, { id: "call_7", arguments: "{}" })
      expect(resultOf(outcome).structured).toEqual({ same: true, id: "call_7", name: "who_am_i" })
    }))

  it.effect("without a journal, each call has a key of its own: two calls of one id do not share one", () =>
    Effect.gen(function*() {
      const Key = Tool.make("key", {
        description: "The call's idempotency key",
        handler: () => Effect.map(Tool.currentCall, (call) => Option.getOrThrow(call).idempotencyKey)
      })
      const first = resultOf(yield* Tool.execute(Key, { id: "same", arguments: "{}" })).content
      const second = resultOf(yield* Tool.execute(Key, { id: "same", arguments: "{}" })).content
      expect(first).not.toEqual(second)
    }))

  it.effect("is none outside a call", () =>
    Effect.gen(function*() {
      expect(yield* Tool.currentCall).toEqual(Option.none())
    }))

  it.live("is set back however a call ends: a value, a failure, a defect, a timeout; a call inside a call", () =>
    Effect.gen(function*() {
      const idOf = Effect.map(Tool.currentCall, Option.map((call) => call.id))
      const Ok = Tool.make("ok", { description: "Ok", handler: () => Effect.map(Effect.yieldNow(), () => "ok") })
      // effects that must run (a handler answering with an `Exit` runs in no context at all)
      const Fails = Tool.make("fails", {
        description: "Fails",
        handler: () => Effect.flatMap(Effect.yieldNow(), () => Effect.fail("no"))
      })
      const Dies = Tool.make("dies", {
        description: "Dies",
        handler: () => Effect.flatMap(Effect.yieldNow(), () => Effect.die("boom"))
      })
      const Hangs = Tool.make("hangs", { description: "Hangs", timeout: "20 millis", handler: () => Effect.never })
      // a call made by a handler has its own context, and the outer call's is back when it returns
      const Outer = Tool.make("outer", {
        description: "Outer",
        handler: () =>
          Effect.gen(function*() {
            const before = yield* idOf
            yield* Tool.execute(Ok, { id: "inner", arguments: "{}" })
            return [Option.getOrNull(before), Option.getOrNull(yield* idOf)]
          })
      })
      for (const tool of [Ok, Fails, Dies, Hangs]) {
        yield* Tool.execute(tool, { id: `call_${tool.name}`, arguments: "{}" })
        expect(yield* idOf).toEqual(Option.none())
      }
      const outer = yield* Tool.execute(Outer, { id: "outer", arguments: "{}" })
      expect(resultOf(outer).structured).toEqual(["outer", "outer"])
      expect(yield* idOf).toEqual(Option.none())
    }))
})

// ---------------------------------------------------------------------------------------------------------------
// JSON Schema tools
// ---------------------------------------------------------------------------------------------------------------

describe("Tool.fromJsonSchema", () => {
  const Search = Tool.fromJsonSchema("search", {
    description: "Search",
    parameters: {
      type: "object",
      properties: {
        query: { type: "string" },
        mode: { type: "string", enum: ["fast", "deep"] },
        limit: { type: "integer" },
        filter: { type: "object", properties: { since: { type: "number" } } }
      },
      required: ["query"],
      additionalProperties: false
    },
    handler: (args) => Effect.succeed(args)
  })

  it.effect("hands the handler the parsed arguments", () =>
    Effect.gen(function*() {
      const result = resultOf(yield* call(Search, "{\"query\":\"cats\",\"limit\":3}"))
      expect(result.structured).toEqual({ query: "cats", limit: 3 })
    }))

  it.effect("names a missing required property", () =>
    Effect.gen(function*() {
      expect(modelText(yield* call(Search, "{}"))).toBe(
        "Error: invalid arguments: query: missing required property, expected a string"
      )
    }))

  it.effect("names a wrong type", () =>
    Effect.gen(function*() {
      expect(modelText(yield* call(Search, { query: 3 }))).toBe(
        "Error: invalid arguments: query: expected a string, got 3"
      )
    }))

  it.effect("lists the allowed values of an enum", () =>
    Effect.gen(function*() {
      expect(modelText(yield* call(Search, { query: "a", mode: "slow" }))).toBe(
        "Error: invalid arguments: mode: expected one of \"fast\", \"deep\", got \"slow\""
      )
    }))

  it.effect("names a property that additionalProperties: false refuses", () =>
    Effect.gen(function*() {
      expect(modelText(yield* call(Search, { query: "a", colour: "red" }))).toBe(
        "Error: invalid arguments: colour: unexpected property"
      )
    }))

  it.effect("lists every problem with its path", () =>
    Effect.gen(function*() {
      expect(modelText(yield* call(Search, { query: "a", limit: 1.5, filter: { since: "yesterday" } }))).toBe(
        "Error: invalid arguments: limit: expected an integer, got 1.5\n" +
          "filter.since: expected a number, got \"yesterday\""
      )
    }))

  it.effect("refuses non-objects and __proto__ like any tool", () =>
    Effect.gen(function*() {
      expect(modelText(yield* call(Search, "[]"))).toBe(
        "Error: invalid arguments: expected a JSON object, got an array"
      )
      expect(modelText(yield* call(Search, "{\"query\":\"a\",\"__proto__\":{}}"))).toBe(
        "Error: invalid arguments: \"__proto__\" is not allowed as a property name"
      )
    }))

  it.effect("with validate: false passes anything through", () =>
    Effect.gen(function*() {
      const Loose = Tool.fromJsonSchema("loose", {
        description: "Loose",
        validate: false,
        parameters: { type: "object", properties: { a: { type: "string" } }, required: ["a"] },
        handler: (args) => Effect.succeed(args)
      })
      expect(Loose.validate).toBe(false)
      expect(resultOf(yield* call(Loose, "{\"a\":5,\"b\":true}")).structured).toEqual({ a: 5, b: true })
    }))

  it.effect("compiles a draft-07 schema as draft-07", () =>
    Effect.gen(function*() {
      const Pair = Tool.fromJsonSchema("pair", {
        description: "Pair",
        parameters: {
          $schema: "http://json-schema.org/draft-07/schema#",
          type: "object",
          properties: {
            pair: { type: "array", items: [{ type: "string" }, { $ref: "#/definitions/count" }] }
          },
          definitions: { count: { type: "integer", minimum: 0 } },
          required: ["pair"]
        },
        handler: (args) => Effect.succeed(args)
      })
      // served in its own dialect, so a client reads the tuple form of `items` as draft-07 meant it
      expect(Pair.inputSchema.$schema).toBe("http://json-schema.org/draft-07/schema#")
      expect(resultOf(yield* call(Pair, "{\"pair\":[\"a\",1]}")).structured).toEqual({ pair: ["a", 1] })
      expect(modelText(yield* call(Pair, "{\"pair\":[\"a\",\"b\"]}"))).toBe(
        "Error: invalid arguments: pair[1]: expected an integer, got \"b\""
      )
      expect(modelText(yield* call(Pair, "{\"pair\":[\"a\",-1]}"))).toBe(
        "Error: invalid arguments: pair[1]: expected a number >= 0, got -1"
      )
    }))

  it("throws at construction for a schema Ajv cannot compile", () => {
    expect(() =>
      Tool.fromJsonSchema("broken", {
        description: "Broken",
        parameters: { type: "object", properties: { a: { type: "nonsense" } } },
        handler: () => Effect.void
      })
    ).toThrow(/^tool "broken": its JSON Schema cannot be compiled: schema is invalid: /)
  })

  it("throws at construction for a bad name", () => {
    expect(() => Tool.fromJsonSchema("bad name", { description: "Bad", handler: () => Effect.void })).toThrow(
      "invalid tool name \"bad name\""
    )
  })

  it.effect("without parameters serves and accepts an empty object", () =>
    Effect.gen(function*() {
      const Ping = Tool.fromJsonSchema("ping", { description: "Ping", handler: () => Effect.succeed("pong") })
      expect(Ping.inputSchema).toEqual({ type: "object", properties: {}, required: [] })
      expect(modelText(yield* call(Ping, ""))).toBe("pong")
    }))

  it("completes a schema without properties or required", () => {
    const Bare = Tool.fromJsonSchema("bare", {
      description: "Bare",
      parameters: { properties: { a: { type: "string" } } },
      handler: () => Effect.void
    })
    expect(Bare.inputSchema).toEqual({ type: "object", properties: { a: { type: "string" } }, required: [] })
  })

  it("reflects the common options and the output schema", () => {
    const Full = Tool.fromJsonSchema("full", {
      description: "Full",
      title: "Full tool",
      strict: true,
      sequential: true,
      timeout: 1000,
      resource: "db:main",
      annotations: { openWorld: false },
      outputSchema: { type: "object", properties: { ok: { type: "boolean" } } },
      handler: () => Effect.void
    })
    expect(Full.title).toBe("Full tool")
    expect(Full.strict).toBe(true)
    expect(Full.sequential).toBe(true)
    expect(Full.timeout).toEqual(Duration.seconds(1))
    expect(Full.annotations).toEqual({ openWorld: false })
    expect(Full[Tool.KernelId].resources({})).toEqual(["db:main"])
    expect(Full.outputSchema).toEqual({ type: "object", properties: { ok: { type: "boolean" } } })
  })
})

// ---------------------------------------------------------------------------------------------------------------
// permission
// ---------------------------------------------------------------------------------------------------------------

describe("permission", () => {
  const makeWrite = (ran: { value: boolean }, preview?: Effect.Effect<string | undefined, Error>) =>
    Tool.make("write_file", {
      description: "Write a file",
      parameters: { path: Schema.String, text: Schema.String, lines: Schema.optional(Schema.NumberFromString) },
      annotations: { destructive: true },
      permission: {
        action: "write",
        describe: ({ path, text }) => `write ${text.length} characters to ${path}`,
        path: ({ path }) => path,
        ...(preview === undefined ? {} : { preview: () => preview })
      },
      handler: () => Effect.sync(() => (ran.value = true)).pipe(Effect.as("written"))
    })

  const args = "{\"path\":\"src/a.ts\",\"text\":\"hello\",\"lines\":\"2\"}"

  it.effect("with no requester installed the call runs", () =>
    Effect.gen(function*() {
      const ran = { value: false }
      expect(modelText(yield* call(makeWrite(ran), args))).toBe("written")
      expect(ran.value).toBe(true)
    }))

  it.effect("a requester that allows lets the call run", () =>
    Effect.gen(function*() {
      const ran = { value: false }
      const outcome = yield* call(makeWrite(ran), args).pipe(
        Effect.provide(Permission.layer(() => Effect.succeed(Permission.allow)))
      )
      expect(modelText(outcome)).toBe("written")
      expect(ran.value).toBe(true)
    }))

  it.effect("a requester that denies stops the call before the handler runs", () =>
    Effect.gen(function*() {
      const ran = { value: false }
      const outcome = yield* call(makeWrite(ran), args).pipe(
        Effect.provide(Permission.layer(() => Effect.succeed(Permission.deny("writes need a review"))))
      )
      const error = errorOf(outcome)
      expect(error._tag).toBe("PermissionDenied")
      expect(error.tool).toBe("write_file")
      expect(error.message).toBe("permission denied: write 5 characters to src/a.ts: writes need a review")
      expect(ran.value).toBe(false)
    }))

  it.effect("a denial without a reason gives the description only", () =>
    Effect.gen(function*() {
      const ran = { value: false }
      const outcome = yield* call(makeWrite(ran), args).pipe(
        Effect.provide(Permission.layer(() => Effect.succeed(Permission.deny())))
      )
      expect(modelText(outcome)).toBe("Error: permission denied: write 5 characters to src/a.ts")
      expect(ran.value).toBe(false)
    }))

  it.effect("the request carries the call, the tool, the decoded parameters, the hints and the preview", () =>
    Effect.gen(function*() {
      const requests: Array<Permission.PermissionRequest> = []
      const ran = { value: false }
      const tool = makeWrite(ran, Effect.succeed("--- a/src/a.ts\n+++ b/src/a.ts\n+hello"))
      yield* Tool.execute(tool, { id: "call_9", arguments: args }).pipe(
        Effect.provide(Permission.layer((request) => {
          requests.push(request)
          return Effect.succeed(Permission.allow)
        }))
      )
      expect(requests).toEqual([{
        callId: "call_9",
        tool: "write_file",
        action: "write",
        description: "write 5 characters to src/a.ts",
        path: "src/a.ts",
        parameters: { path: "src/a.ts", text: "hello", lines: 2 },
        annotations: { destructive: true },
        preview: "--- a/src/a.ts\n+++ b/src/a.ts\n+hello"
      }])
      expect(ran.value).toBe(true)
    }))

  it.effect("without describe the description is the tool and the action", () =>
    Effect.gen(function*() {
      const descriptions: Array<string> = []
      const Run = Tool.make("run", {
        description: "Run",
        permission: { action: "execute" },
        handler: () => Effect.succeed("ran")
      })
      const outcome = yield* call(Run, "{}").pipe(
        Effect.provide(Permission.layer((request) => {
          descriptions.push(request.description)
          return Effect.succeed(Permission.deny("no"))
        }))
      )
      expect(descriptions).toEqual(["run (execute)"])
      expect(modelText(outcome)).toBe("Error: permission denied: run (execute): no")
    }))

  it.effect("a failing preview is the call's failure: nobody is asked and the handler does not run", () =>
    Effect.gen(function*() {
      let asked = false
      const ran = { value: false }
      const tool = makeWrite(ran, Effect.fail(new Error("cannot diff a binary file")))
      const outcome = yield* call(tool, args).pipe(
        Effect.provide(Permission.layer(() => Effect.sync(() => (asked = true)).pipe(Effect.as(Permission.allow))))
      )
      const error = errorOf(outcome)
      expect(error._tag).toBe("ToolFailure")
      expect(error.message).toBe("cannot diff a binary file")
      expect(asked).toBe(false)
      expect(ran.value).toBe(false)
    }))

  it.effect("a preview that dies is the call's defect", () =>
    Effect.gen(function*() {
      const ran = { value: false }
      const tool = makeWrite(ran, Effect.die(new Error("diff crashed")))
      const outcome = yield* call(tool, args).pipe(
        Effect.provide(Permission.layer(() => Effect.succeed(Permission.allow)))
      )
      expect(modelText(outcome)).toBe("Error: tool \"write_file\" panicked: diff crashed")
      expect(ran.value).toBe(false)
    }))

  it.effect("a requester that dies is the call's defect, and execute itself does not die", () =>
    Effect.gen(function*() {
      const ran = { value: false }
      const outcome = yield* call(makeWrite(ran), args).pipe(
        Effect.provide(Permission.layer(() => Effect.die(new Error("prompt crashed"))))
      )
      const error = errorOf(outcome)
      expect(error._tag).toBe("ToolDefect")
      expect(error.message).toBe("tool \"write_file\" panicked: asking for permission failed: prompt crashed")
      expect(ran.value).toBe(false)
    }))

  it.effect("invalid arguments are refused before anyone is asked", () =>
    Effect.gen(function*() {
      let asked = false
      const ran = { value: false }
      const outcome = yield* call(makeWrite(ran), "{\"path\":1}").pipe(
        Effect.provide(Permission.layer(() => Effect.sync(() => (asked = true)).pipe(Effect.as(Permission.allow))))
      )
      expect(errorOf(outcome)._tag).toBe("InvalidArguments")
      expect(asked).toBe(false)
    }))

  it.effect("a describe function that throws is the call's defect", () =>
    Effect.gen(function*() {
      const Broken = Tool.make("broken", {
        description: "Broken",
        permission: {
          action: "write",
          describe: (): string => {
            throw new Error("describe broke")
          }
        },
        handler: () => Effect.succeed("ran")
      })
      const outcome = yield* call(Broken, "{}").pipe(
        Effect.provide(Permission.layer(() => Effect.succeed(Permission.allow)))
      )
      expect(modelText(outcome)).toBe(
        "Error: tool \"broken\" panicked: describing the call for permission failed: describe broke"
      )
    }))
})

describe("a tool as a value", () => {
  const Write = Tool.make("write_file", {
    description: "Write a file",
    title: "Write",
    parameters: { path: Schema.String },
    success: Schema.Struct({ bytes: Schema.Int }),
    strict: true,
    timeout: "2 seconds",
    annotations: { destructive: true },
    permission: { action: "write" },
    handler: () => Effect.succeed({ bytes: 1 })
  })
  const json = {
    _id: "Tool",
    name: "write_file",
    title: "Write",
    description: "Write a file",
    annotations: { destructive: true },
    strict: true,
    sequential: false,
    replay: "unknown",
    timeout: { _id: "Duration", _tag: "Millis", millis: 2000 },
    validate: true,
    permissionAction: "write",
    inputSchema: Write.inputSchema,
    outputSchema: Write.outputSchema
  }

  it("shows what it is in toJSON and toString, leaving out what is unset", () => {
    expect(Write.toJSON()).toEqual(json)
    expect(String(Write)).toBe(JSON.stringify(json, null, 2))
    const Ping = Tool.make("ping", { description: "Ping", handler: () => Effect.void })
    expect(Ping.toJSON()).toEqual({
      _id: "Tool",
      name: "ping",
      description: "Ping",
      annotations: {},
      strict: false,
      sequential: false,
      replay: "unknown",
      validate: true,
      inputSchema: { type: "object", properties: {}, required: [], additionalProperties: false }
    })
  })

  it("util.inspect shows the same, with none of its call machinery", () => {
    const shown = inspect(Write, { depth: 10 })
    expect(shown).toBe(inspect(json, { depth: 10 }))
    expect(shown).not.toMatch(/Kernel|projections|decode|handle|Symbol/)
  })
})
