import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Fiber, Option, Schema, TestClock } from "effect"
import { inspect } from "node:util"
import { Tool, ToolError, Toolkit, ToolResult } from "../src/index.js"

const Upper = Tool.make("upper", {
  description: "Uppercase a string",
  parameters: { text: Schema.String },
  handler: ({ text }) => Effect.succeed(text.toUpperCase())
})

const Lower = Tool.make("lower", {
  description: "Lowercase a string",
  parameters: { text: Schema.String },
  handler: ({ text }) => Effect.succeed(text.toLowerCase())
})

const Add = Tool.make("add", {
  description: "Add two integers",
  strict: true,
  parameters: { a: Schema.Int, b: Schema.Int },
  handler: ({ a, b }) => Effect.succeed({ sum: a + b })
})

const Crash = Tool.make("crash", {
  description: "Always dies",
  handler: () => Effect.die(new Error("boom"))
})

const Slow = Tool.make("slow", {
  description: "Never finishes in time",
  timeout: "1 second",
  handler: () => Effect.never
})

const WhoAmI = Tool.make("who_am_i", {
  description: "The current call's tool name",
  handler: () => Effect.map(Tool.currentCall, Option.match({ onNone: () => "none", onSome: (call) => call.name }))
})

/** The same tool value under another name, bypassing the constructor's check (as a hand-built tool could). */
const forgeName = (tool: Tool.Any, name: string): Tool.Any =>
  Object.create(Object.getPrototypeOf(tool), { ...Object.getOwnPropertyDescriptors(tool), name: { value: name } })

describe("Toolkit", () => {
  describe("make", () => {
    it("keeps the tools in the order given", () => {
      const kit = Toolkit.make(Upper, Lower, Add)
      expect(Toolkit.names(kit)).toEqual(["upper", "lower", "add"])
      expect(kit.tools).toEqual([Upper, Lower, Add])
      expect(Toolkit.isToolkit(kit)).toBe(true)
    })

    it("may be empty", () => {
      expect(Toolkit.names(Toolkit.make())).toEqual([])
    })

    it("throws on a duplicate name", () => {
      const Other = Tool.make("upper", { description: "Another upper", handler: () => Effect.succeed("") })
      expect(() => Toolkit.make(Upper, Other)).toThrow("duplicate tool name \"upper\" in a toolkit")
    })

    it("throws on a malformed name", () => {
      expect(() => Toolkit.make(forgeName(Upper, "has space"))).toThrow(
        "invalid tool name \"has space\": a tool name is 1 to 64 letters, digits, \"_\" or \"-\""
      )
      expect(() => Toolkit.make(forgeName(Upper, ""))).toThrow("invalid tool name \"\"")
    })
  })

  describe("merge", () => {
    it("concatenates the kits in order", () => {
      const kit = Toolkit.merge(Toolkit.make(Upper), Toolkit.make(Lower, Add))
      expect(Toolkit.names(kit)).toEqual(["upper", "lower", "add"])
    })

    it("throws when two kits share a name", () => {
      expect(() => Toolkit.merge(Toolkit.make(Upper, Lower), Toolkit.make(Lower))).toThrow(
        "duplicate tool name \"lower\" in a toolkit"
      )
    })
  })

  describe("prefix", () => {
    it("renames every tool p__name", () => {
      const kit = Toolkit.prefix(Toolkit.make(Upper, Lower), "docs")
      expect(Toolkit.names(kit)).toEqual(["docs__upper", "docs__lower"])
      expect(kit.tools.map((tool) => tool.description)).toEqual(["Uppercase a string", "Lowercase a string"])
    })

    it("works data-last in a pipe and leaves the original kit alone", () => {
      const kit = Toolkit.make(Upper)
      const prefixed = kit.pipe(Toolkit.prefix("a"))
      expect(Toolkit.names(prefixed)).toEqual(["a__upper"])
      expect(Toolkit.names(kit)).toEqual(["upper"])
      expect(Upper.name).toBe("upper")
    })

    it("lets two kits with the same tool names be merged", () => {
      const kit = Toolkit.merge(Toolkit.prefix(Toolkit.make(Upper), "a"), Toolkit.prefix(Toolkit.make(Upper), "b"))
      expect(Toolkit.names(kit)).toEqual(["a__upper", "b__upper"])
    })

    it.effect("a prefixed tool still executes", () =>
      Effect.gen(function*() {
        const tool = Option.getOrThrow(Toolkit.lookup(Toolkit.prefix(Toolkit.make(Upper), "p"), "p__upper"))
        const outcome = yield* Tool.execute(tool, { id: "1", arguments: "{\"text\":\"abc\"}" })
        expect(Either.map(outcome, ToolResult.toText)).toEqual(Either.right("ABC"))
      }))

    it.effect("a prefixed tool's call context names the prefixed tool", () =>
      Effect.gen(function*() {
        const tool = Option.getOrThrow(Toolkit.lookup(Toolkit.prefix(Toolkit.make(WhoAmI), "p"), "p__who_am_i"))
        const outcome = yield* Tool.execute(tool, { id: "1", arguments: "{}" })
        expect(Either.map(outcome, ToolResult.toText)).toEqual(Either.right("p__who_am_i"))
      }))

    it.effect("a prefixed tool's errors name the prefixed tool", () =>
      Effect.gen(function*() {
        const kit = Toolkit.prefix(Toolkit.make(Upper, Crash, Slow), "p")
        const tool = (name: string) => Option.getOrThrow(Toolkit.lookup(kit, name))

        const invalid = yield* Tool.execute(tool("p__upper"), { id: "1", arguments: "{}" })
        expect(Either.isLeft(invalid) && invalid.left.tool).toBe("p__upper")

        const crashed = yield* Tool.execute(tool("p__crash"), { id: "2", arguments: "{}" })
        expect(Either.mapLeft(crashed, ToolError.toModelText)).toEqual(
          Either.left("Error: tool \"p__crash\" panicked: boom")
        )

        const fiber = yield* Effect.fork(Tool.execute(tool("p__slow"), { id: "3", arguments: "{}" }))
        yield* TestClock.adjust("1 second")
        const timedOut = yield* Fiber.join(fiber)
        expect(Either.mapLeft(timedOut, ToolError.toModelText)).toEqual(
          Either.left("Error: tool \"p__slow\" timed out after 1s")
        )
      }))

    it("throws when a prefixed name is longer than 64 characters", () => {
      const name60 = "n".repeat(60)
      const Long = Tool.make(name60, { description: "long", handler: () => Effect.void })
      expect(Toolkit.names(Toolkit.prefix(Toolkit.make(Long), "ab"))).toEqual([`ab__${name60}`])
      expect(() => Toolkit.prefix(Toolkit.make(Long), "abc")).toThrow(`invalid tool name "abc__${name60}"`)
    })

    it("throws for a prefix with characters a name cannot have", () => {
      expect(() => Toolkit.prefix(Toolkit.make(Upper), "my server")).toThrow("invalid tool name \"my server__upper\"")
    })
  })

  describe("pick and omit", () => {
    it("keep or drop the named tools, in the toolkit's order", () => {
      const kit = Toolkit.make(Upper, Lower, Add, Crash)
      expect(Toolkit.names(Toolkit.pick(kit, "add", "upper"))).toEqual(["upper", "add"])
      expect(Toolkit.names(Toolkit.omit(kit, "lower", "crash"))).toEqual(["upper", "add"])
      expect(Toolkit.names(Toolkit.pick(kit))).toEqual([])
      expect(Toolkit.names(Toolkit.omit(kit))).toEqual(["upper", "lower", "add", "crash"])
      // the same tool values: a subset serves and runs as the whole did
      expect(Toolkit.pick(kit, "add").tools).toEqual([Add])
    })

    it("throw for a name the toolkit does not have (one that came through `any`), naming its tools", () => {
      const kit = Toolkit.make(Upper, Lower)
      const typo: any = "uper"
      expect(() => Toolkit.pick(kit, typo)).toThrow("no tool \"uper\" in this toolkit; its tools: upper, lower")
      expect(() => Toolkit.omit(kit, typo)).toThrow("no tool \"uper\" in this toolkit; its tools: upper, lower")
    })

    it.effect("a call of a tool picked away is ToolNotFound, listing what is left", () =>
      Effect.gen(function*() {
        const step = Toolkit.pick(Toolkit.make(Upper, Lower, Add), "upper")
        const outcome = yield* Tool.execute(Toolkit.lookup(step, "upper").pipe(Option.getOrThrow), {
          id: "1",
          arguments: { text: "a" }
        })
        expect(Either.map(outcome, ToolResult.toText)).toEqual(Either.right("A"))
        const lower: any = "lower"
        const error = yield* Effect.flip(Toolkit.call(step, lower as "upper", { text: "a" }))
        expect(ToolError.toModelText(error)).toBe("Error: unknown tool \"lower\"; available tools: upper")
      }))
  })

  describe("lookup", () => {
    it("finds a tool by name", () => {
      const kit = Toolkit.make(Upper, Lower)
      expect(Toolkit.lookup(kit, "lower")).toEqual(Option.some(Lower))
      expect(kit.pipe(Toolkit.lookup("upper"))).toEqual(Option.some(Upper))
    })

    it("is none for an unknown name", () => {
      expect(Toolkit.lookup(Toolkit.make(Upper), "Upper")).toEqual(Option.none())
      expect(Toolkit.lookup(Toolkit.make(Upper), "__proto__")).toEqual(Option.none())
    })
  })

  describe("definitions", () => {
    it("gives every tool's definition in order, in the format asked for", () => {
      const kit = Toolkit.make(Upper, Add)
      const anthropic = Toolkit.definitions(kit, "anthropic")
      expect(anthropic.map((d) => d.name)).toEqual(["upper", "add"])
      expect(anthropic[0]).toEqual({
        name: "upper",
        description: "Uppercase a string",
        input_schema: {
          type: "object",
          properties: { text: { type: "string" } },
          required: ["text"],
          additionalProperties: false
        }
      })
    })

    it("states strict only for strict tools", () => {
      const chat = Toolkit.definitions(Toolkit.make(Upper, Add), "openAiChat")
      expect(chat.map((d) => d.type)).toEqual(["function", "function"])
      expect("strict" in chat[0].function).toBe(false)
      expect(chat[1].function.strict).toBe(true)
    })

    it("works data-last in a pipe and uses prefixed names", () => {
      const mcp = Toolkit.make(Upper).pipe(Toolkit.prefix("p"), Toolkit.definitions("mcp"))
      expect(mcp.map((d) => d.name)).toEqual(["p__upper"])
      expect(mcp[0].description).toBe("Uppercase a string")
    })
  })

  describe("a value", () => {
    it("shows its tools' names in toJSON, toString and util.inspect", () => {
      const kit = Toolkit.make(Upper, Lower)
      const json = { _id: "Toolkit", tools: ["upper", "lower"] }
      expect(kit.toJSON()).toEqual(json)
      expect(String(kit)).toBe(JSON.stringify(json, null, 2))
      expect(inspect(kit)).toBe(inspect(json))
      expect(inspect(Toolkit.prefix(kit, "p"))).toBe(inspect({ _id: "Toolkit", tools: ["p__upper", "p__lower"] }))
    })
  })
})
