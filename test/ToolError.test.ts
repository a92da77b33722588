import { describe, expect, it } from "@effect/vitest"
import { Cause, Duration, Either, Equal, Schema } from "effect"
import { ToolError } from "../src/index.js"

const defectError = new Error("disk on fire")
defectError.stack = "Error: disk on fire\n    at readFile (/app/src/tools.ts:12:7)\n    at run (/app/src/main.ts:3:1)"

/** One value of every tag, with the message each must carry (DESIGN, "ToolError and what the model sees"). */
const samples: ReadonlyArray<readonly [ToolError.ToolError, string]> = [
  [
    new ToolError.ToolNotFound({ tool: "x", available: ["a", "b", "c"] }),
    "unknown tool \"x\"; available tools: a, b, c"
  ],
  [
    new ToolError.InvalidArguments({
      tool: "read_file",
      problems: [
        new ToolError.ArgumentProblem({ path: "options.depth", message: "expected an integer, got 1.5" }),
        new ToolError.ArgumentProblem({ path: "tags[1]", message: "expected a string, got 5" })
      ]
    }),
    "invalid arguments: options.depth: expected an integer, got 1.5\ntags[1]: expected a string, got 5"
  ],
  [
    new ToolError.ToolFailure({ tool: "read_file", message: "no such file: a.txt", error: { path: "a.txt" } }),
    "no such file: a.txt"
  ],
  [
    new ToolError.ToolDefect({ tool: "x", reason: "disk on fire", cause: Cause.die(defectError) }),
    "tool \"x\" panicked: disk on fire"
  ],
  [
    new ToolError.ToolTimeout({ tool: "x", timeout: Duration.seconds(5) }),
    "tool \"x\" timed out after 5s"
  ],
  [
    new ToolError.PermissionDenied({ tool: "bash", description: "run rm -rf /", reason: "too risky" }),
    "permission denied: run rm -rf /: too risky"
  ],
  [
    new ToolError.PermissionDenied({ tool: "bash", description: "run rm -rf /" }),
    "permission denied: run rm -rf /"
  ],
  [
    new ToolError.ToolInterrupted({ tool: "bash", partial: "line 1\nline 2" }),
    "the call was cancelled before it finished"
  ],
  [
    new ToolError.ToolOutcomeUnknown({ tool: "send_email", idempotencyKey: "k-1" }),
    "the call was running when its process stopped, so whether it took effect is unknown: check its effect " +
    "before calling it again"
  ]
]

describe("ToolError", () => {
  describe("messages", () => {
    it("ToolNotFound names the tool and lists the available ones", () => {
      const error = new ToolError.ToolNotFound({ tool: "x", available: ["a", "b", "c"] })
      expect(error.message).toBe("unknown tool \"x\"; available tools: a, b, c")
    })

    it("ToolNotFound says so when no tool is available", () => {
      const error = new ToolError.ToolNotFound({ tool: "x", available: [] })
      expect(error.message).toBe("unknown tool \"x\"; available tools: (none)")
    })

    it("InvalidArguments puts one problem on each line, with its path", () => {
      const error = new ToolError.InvalidArguments({
        tool: "t",
        problems: [
          new ToolError.ArgumentProblem({ path: "options.depth", message: "expected an integer, got 1.5" }),
          new ToolError.ArgumentProblem({ path: "tags[1]", message: "expected a string, got 5" })
        ]
      })
      expect(error.message).toBe(
        "invalid arguments: options.depth: expected an integer, got 1.5\ntags[1]: expected a string, got 5"
      )
    })

    it("InvalidArguments leaves out the path of a problem with the whole arguments", () => {
      const error = new ToolError.InvalidArguments({
        tool: "t",
        problems: [new ToolError.ArgumentProblem({ path: "", message: "expected a JSON object, got an array" })]
      })
      expect(error.message).toBe("invalid arguments: expected a JSON object, got an array")
    })

    it("ToolFailure is the handler error's message", () => {
      const error = new ToolError.ToolFailure({ tool: "t", message: "no such file: a.txt", error: { code: 2 } })
      expect(error.message).toBe("no such file: a.txt")
    })

    it("ToolDefect is one line naming the tool; the Cause stays on the value", () => {
      const cause = Cause.die(defectError)
      const error = new ToolError.ToolDefect({ tool: "x", reason: "disk on fire", cause })
      expect(error.message).toBe("tool \"x\" panicked: disk on fire")
      expect(error.message).not.toContain("\n")
      expect(error.message).not.toContain("readFile")
      expect(Equal.equals(error.cause, cause)).toBe(true)
      expect(Cause.squash(error.cause)).toBe(defectError)
    })

    it("ToolTimeout names the tool and the duration", () => {
      expect(new ToolError.ToolTimeout({ tool: "x", timeout: Duration.seconds(5) }).message).toBe(
        "tool \"x\" timed out after 5s"
      )
      expect(new ToolError.ToolTimeout({ tool: "x", timeout: Duration.millis(1500) }).message).toBe(
        "tool \"x\" timed out after 1s 500ms"
      )
    })

    it("PermissionDenied gives the description and the reason", () => {
      const error = new ToolError.PermissionDenied({ tool: "bash", description: "run ls", reason: "no shell today" })
      expect(error.message).toBe("permission denied: run ls: no shell today")
    })

    it("PermissionDenied without a reason gives the description only", () => {
      const error = new ToolError.PermissionDenied({ tool: "bash", description: "run ls" })
      expect(error.message).toBe("permission denied: run ls")
    })

    it("ToolInterrupted says the call was cancelled and keeps the partial output", () => {
      const error = new ToolError.ToolInterrupted({ tool: "bash", partial: { lines: 2 } })
      expect(error.message).toBe("the call was cancelled before it finished")
      expect(error.partial).toEqual({ lines: 2 })
      expect(new ToolError.ToolInterrupted({ tool: "bash" }).partial).toBeUndefined()
    })

    it("ToolOutcomeUnknown says the call may have taken effect and must be checked; the key stays on the value", () => {
      const error = new ToolError.ToolOutcomeUnknown({ tool: "send_email", idempotencyKey: "k-1" })
      expect(error.message).toBe(
        "the call was running when its process stopped, so whether it took effect is unknown: check its effect " +
          "before calling it again"
      )
      expect(error.idempotencyKey).toBe("k-1")
      expect(new ToolError.ToolOutcomeUnknown({ tool: "x" }).idempotencyKey).toBeUndefined()
    })

    it("the union has one member per tag, each a tool error", () => {
      expect(ToolError.ToolError.members.map((member) => member._tag)).toEqual([
        "ToolNotFound",
        "InvalidArguments",
        "ToolFailure",
        "ToolDefect",
        "ToolTimeout",
        "PermissionDenied",
        "ToolInterrupted",
        "ToolOutcomeUnknown"
      ])
      expect(new Set(samples.map(([error]) => error._tag)).size).toBe(ToolError.ToolError.members.length)
    })

    it("every tag carries the documented message", () => {
      for (const [error, message] of samples) expect(error.message).toBe(message)
    })
  })

  describe("toModelText", () => {
    it("is \"Error: \" followed by the message", () => {
      for (const [error, message] of samples) expect(ToolError.toModelText(error)).toBe(`Error: ${message}`)
    })

    it("adds the prefix exactly once: no message starts with it", () => {
      for (const [error] of samples) {
        const text = ToolError.toModelText(error)
        expect(text.startsWith("Error: ")).toBe(true)
        expect(text.slice("Error: ".length).startsWith("Error")).toBe(false)
        expect(text.split("Error: ").length).toBe(2)
      }
    })

    it("uses the MODEL_PREFIX constant", () => {
      expect(ToolError.MODEL_PREFIX).toBe("Error: ")
    })
  })

  describe("the ToolError schema", () => {
    it("round-trips every tag through encode, JSON and decode", () => {
      for (const [error, message] of samples) {
        const encoded = Schema.encodeSync(ToolError.ToolError)(error)
        const wire = JSON.stringify(encoded)
        const decoded = Schema.decodeUnknownSync(ToolError.ToolError)(JSON.parse(wire))
        expect(decoded._tag).toBe(error._tag)
        expect(decoded.constructor).toBe(error.constructor)
        expect(decoded.message).toBe(message)
        expect(ToolError.isToolError(decoded)).toBe(true)
      }
    })

    it("encodes the tag and the fields, not the message getter", () => {
      const encoded = Schema.encodeSync(ToolError.ToolError)(
        new ToolError.ToolTimeout({ tool: "x", timeout: Duration.seconds(5) })
      )
      expect(JSON.parse(JSON.stringify(encoded))).toEqual({
        _tag: "ToolTimeout",
        tool: "x",
        timeout: { _tag: "Millis", millis: 5000 }
      })
    })

    it("keeps a defect's Cause across the wire", () => {
      const error = new ToolError.ToolDefect({ tool: "x", reason: "disk on fire", cause: Cause.die(defectError) })
      const wire = JSON.stringify(Schema.encodeSync(ToolError.ToolError)(error))
      const decoded = Schema.decodeUnknownSync(ToolError.ToolError)(JSON.parse(wire))
      expect(decoded._tag).toBe("ToolDefect")
      if (decoded._tag !== "ToolDefect") return
      expect(Cause.isDie(decoded.cause)).toBe(true)
      const defect = Cause.squash(decoded.cause)
      expect(defect).toBeInstanceOf(Error)
      expect((defect as Error).message).toBe("disk on fire")
    })

    it("keeps the argument problems, the partial output and the failure's error", () => {
      const roundTrip = (error: ToolError.ToolError) =>
        Schema.decodeUnknownSync(ToolError.ToolError)(
          JSON.parse(JSON.stringify(Schema.encodeSync(ToolError.ToolError)(error)))
        )
      const invalid = roundTrip(samples[1][0])
      expect(invalid._tag === "InvalidArguments" && invalid.problems.map((p) => p.path)).toEqual([
        "options.depth",
        "tags[1]"
      ])
      const unknown = roundTrip(new ToolError.ToolOutcomeUnknown({ tool: "t", idempotencyKey: "k" }))
      expect(unknown._tag === "ToolOutcomeUnknown" && unknown.idempotencyKey).toBe("k")
      const interrupted = roundTrip(new ToolError.ToolInterrupted({ tool: "t", partial: { done: 3 } }))
      expect(interrupted._tag === "ToolInterrupted" && interrupted.partial).toEqual({ done: 3 })
      const failure = roundTrip(new ToolError.ToolFailure({ tool: "t", message: "m", error: { code: 2 } }))
      expect(failure._tag === "ToolFailure" && failure.error).toEqual({ code: 2 })
    })

    it("refuses a value that is none of the tags", () => {
      const decoded = Schema.decodeUnknownEither(ToolError.ToolError)({ _tag: "Nope", tool: "x" })
      expect(Either.isLeft(decoded)).toBe(true)
    })
  })

  describe("isToolError", () => {
    it("is true for every tag", () => {
      for (const [error] of samples) expect(ToolError.isToolError(error)).toBe(true)
    })

    it("is false for other errors and values", () => {
      expect(ToolError.isToolError(new Error("x"))).toBe(false)
      expect(ToolError.isToolError({ _tag: "ToolFailure", tool: "x", message: "m" })).toBe(false)
      expect(ToolError.isToolError(null)).toBe(false)
      expect(ToolError.isToolError("Error: x")).toBe(false)
    })
  })
})
