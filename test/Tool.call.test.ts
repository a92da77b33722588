/**
 * `Tool.call` and `Toolkit.call`, a program's typed call: it must get exactly what a model's call gets (the checks,
 * permission, timeout, records, span, metrics), and read the outcome back as typed values.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Option, Ref, Schema, TestClock } from "effect"
import { Permission, Recorder, Tool, ToolError, Toolkit, ToolResult } from "../src/index.js"
import { callsTotal, collectingTracer } from "./helpers.js"

class FileNotFound extends Schema.TaggedError<FileNotFound>()("FileNotFound", { path: Schema.String }) {
  override get message() {
    return `no such file: ${this.path}`
  }
}

class PreviewFailed extends Schema.TaggedError<PreviewFailed>()("PreviewFailed", { path: Schema.String }) {}

const files: Record<string, string> = { "a.txt": "hello" }

const ReadFile = Tool.make("read_file", {
  description: "Read a file",
  parameters: { path: Schema.String, max_bytes: Schema.optional(Schema.Int) },
  success: Schema.String,
  failure: FileNotFound,
  handler: ({ max_bytes, path }) =>
    path in files
      ? Effect.succeed(files[path].slice(0, max_bytes))
      : Effect.fail(new FileNotFound({ path }))
})

const Touch = Tool.make("touch", {
  description: "Set a file's modification time",
  parameters: { path: Schema.String, at: Schema.Date },
  success: Schema.Struct({ path: Schema.String, at: Schema.Date }),
  handler: ({ at, path }) => Effect.succeed({ path, at })
})

const Write = Tool.make("write_file", {
  description: "Write a file",
  parameters: { path: Schema.String },
  permission: {
    action: "write",
    describe: ({ path }) => `write ${path}`,
    preview: ({ path }) => path === "broken" ? Effect.fail(new PreviewFailed({ path })) : Effect.succeed(`+++ ${path}`)
  },
  handler: ({ path }) => Effect.succeed(`wrote ${path}`)
})

const Hang = Tool.make("hang", { description: "Wait forever", timeout: "1 second", handler: () => Effect.never })

const kit = Toolkit.make(ReadFile, Touch, Write, Hang)

const denyAll = Permission.layer(() => Effect.succeed(Permission.deny("read-only session")))

describe("Tool.call", () => {
  it.effect("gives the handler's value and its typed failure as itself", () =>
    Effect.gen(function*() {
      expect(yield* Tool.call(ReadFile, { path: "a.txt", max_bytes: 4 })).toBe("hell")
      const failed = yield* Effect.flip(Tool.call(ReadFile, { path: "b.txt" }))
      expect(failed).toBeInstanceOf(FileNotFound)
      expect(failed).toEqual(new FileNotFound({ path: "b.txt" }))
      const recovered = yield* Tool.call(ReadFile, { path: "b.txt" }).pipe(
        Effect.catchTag("FileNotFound", ({ path }) => Effect.succeed(`(no ${path})`))
      )
      expect(recovered).toBe("(no b.txt)")
    }))

  it.effect("takes decoded parameters and gives the decoded value: a Date both ways", () =>
    Effect.gen(function*() {
      const at = new Date("2024-05-01T10:00:00.000Z")
      const touched = yield* Tool.call(Touch, { path: "a.txt", at })
      expect(touched).toEqual({ path: "a.txt", at })
      expect(touched.at).toBeInstanceOf(Date)
    }))

  it.effect("checks the parameters as a model's arguments: wrong ones from `any` are InvalidArguments", () =>
    Effect.gen(function*() {
      const smuggled: any = { path: 42, max_bytes: "all" }
      const error = yield* Effect.flip(Tool.call(ReadFile, smuggled))
      expect(error._tag).toBe("InvalidArguments")
      expect(ToolError.toModelText(error as ToolError.ToolError)).toBe(
        "Error: invalid arguments: path: expected a string, got 42\nmax_bytes: expected an integer, got \"all\""
      )
      const extra: any = { path: "a.txt", mode: "fast" }
      expect((yield* Effect.flip(Tool.call(ReadFile, extra)))._tag).toBe("InvalidArguments")
    }))

  it.effect("asks permission: a denial is PermissionDenied and the handler does not run", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Tool.call(Write, { path: "src/a.ts" }).pipe(Effect.provide(denyAll)))
      expect(error).toBeInstanceOf(ToolError.PermissionDenied)
      expect(ToolError.isToolError(error) && ToolError.toModelText(error)).toBe(
        "Error: permission denied: write src/a.ts: read-only session"
      )
      expect(yield* Tool.call(Write, { path: "src/a.ts" })).toBe("wrote src/a.ts")
    }))

  it.effect("a permission preview's typed failure is the call's failure, as itself", () =>
    Effect.gen(function*() {
      const asked = Permission.layer(() => Effect.succeed(Permission.allow))
      const error = yield* Effect.flip(Tool.call(Write, { path: "broken" }).pipe(Effect.provide(asked)))
      expect(error).toEqual(new PreviewFailed({ path: "broken" }))
    }))

  it.effect("the tool's timeout applies: ToolTimeout", () =>
    Effect.gen(function*() {
      const fiber = yield* Effect.fork(Effect.flip(Tool.call(Hang, {})))
      yield* TestClock.adjust("1 second")
      const error = yield* Fiber.join(fiber)
      expect(error).toBeInstanceOf(ToolError.ToolTimeout)
      expect(ToolError.toModelText(error)).toBe("Error: tool \"hang\" timed out after 1s")
    }))

  it.effect("options.timeout applies when the tool sets none", () =>
    Effect.gen(function*() {
      const Forever = Tool.make("forever", { description: "Wait", handler: () => Effect.never })
      const fiber = yield* Effect.fork(Effect.flip(Tool.call(Forever, {}, { timeout: "5 seconds" })))
      yield* TestClock.adjust("5 seconds")
      expect((yield* Fiber.join(fiber))._tag).toBe("ToolTimeout")
    }))

  it.effect("a defect, output that breaks the success schema, and a handler that interrupts itself are ToolErrors", () =>
    Effect.gen(function*() {
      const Crash = Tool.make("crash", { description: "Die", handler: () => Effect.die(new Error("boom")) })
      const crashed = yield* Effect.flip(Tool.call(Crash, {}))
      expect(ToolError.toModelText(crashed)).toBe("Error: tool \"crash\" panicked: boom")
      const Liar = Tool.make("liar", {
        description: "Breaks its own schema",
        success: Schema.Int,
        handler: () => Effect.succeed(1.5)
      })
      expect((yield* Effect.flip(Tool.call(Liar, {})))._tag).toBe("ToolDefect")
      const Quit = Tool.make("quit", { description: "Stop itself", handler: () => Effect.interrupt })
      expect((yield* Effect.flip(Tool.call(Quit, {})))._tag).toBe("ToolInterrupted")
    }))

  it.effect("a ToolError the handler fails with stays itself", () =>
    Effect.gen(function*() {
      const Guarded = Tool.make("guarded", {
        description: "Asks mid-call",
        handler: () => Permission.require({ action: "read", description: "read the secrets" })
      })
      const error = yield* Effect.flip(Tool.call(Guarded, {}).pipe(Effect.provide(denyAll)))
      expect(error).toBeInstanceOf(ToolError.PermissionDenied)
    }))

  it.effect("records the result's details, with the call's id", () =>
    Effect.gen(function*() {
      const Job = Tool.make("job", {
        description: "Run a job",
        handler: () =>
          Effect.succeed(
            ToolResult.withDetails(
              ToolResult.text("done"),
              Recorder.makeRecord("job/ended", Schema.Struct({ code: Schema.Int }), { code: 0 })
            )
          )
      })
      const entries = yield* Ref.make<ReadonlyArray<Recorder.Entry>>([])
      const result = yield* Tool.call(Job, {}, { id: "job-1" }).pipe(Effect.provide(Recorder.layerMemory(entries)))
      expect(ToolResult.toText(result)).toBe("done")
      expect((yield* Ref.get(entries)).map(Recorder.toJsonLine)).toEqual([
        "{\"callId\":\"job-1\",\"tool\":\"job\",\"phase\":\"end\",\"namespace\":\"job/ended\",\"data\":{\"code\":0}}"
      ])
    }))

  it.effect("runs in the call context: Tool.currentCall and Tool.progress", () =>
    Effect.gen(function*() {
      const Who = Tool.make("who", {
        description: "Say which call this is",
        handler: () =>
          Effect.zipRight(
            Tool.progress({ message: "looking" }),
            Effect.map(Tool.currentCall, Option.map((call) => `${call.name}/${call.id}`))
          )
      })
      const reports: Array<string> = []
      const named = yield* Tool.call(Who, {}, {
        id: "mine",
        onProgress: (progress) => Effect.sync(() => reports.push(progress.message ?? ""))
      })
      expect(named).toEqual(Option.some("who/mine"))
      expect(reports).toEqual(["looking"])
      const minted = yield* Tool.call(Who, {})
      expect(Option.getOrThrow(minted)).toMatch(/^who\/call_[0-9a-f-]{36}$/)
    }))

  it.effect("is a span Executor.call and counts in the metrics, as a batch's call", () =>
    Effect.gen(function*() {
      const Counted = Tool.make("counted_by_tool_call", {
        description: "Count",
        parameters: { n: Schema.Int },
        handler: ({ n }) => Effect.succeed(n)
      })
      const { spans, tracer } = yield* collectingTracer
      yield* Tool.call(Counted, { n: 1 }, { id: "c1" }).pipe(Effect.withTracer(tracer))
      const notAnInt: any = { n: "one" }
      yield* Effect.flip(Tool.call(Counted, notAnInt))
      expect(spans.map((span) => [span.name, Object.fromEntries(span.attributes)])).toEqual([
        ["Executor.call", {
          "tool.name": "counted_by_tool_call",
          "tool.call_id": "c1",
          "tool.resource_keys": "",
          "tool.outcome": "Success"
        }]
      ])
      expect(yield* callsTotal("counted_by_tool_call", "Success")).toBe(1)
      expect(yield* callsTotal("counted_by_tool_call", "InvalidArguments")).toBe(1)
    }))

  it.effect("a tool that does not check its arguments gets the program's parameters as they are", () =>
    Effect.gen(function*() {
      const Raw = Tool.make("raw", {
        description: "Checks nothing",
        parameters: { at: Schema.Date },
        validate: false,
        handler: ({ at }) => Effect.succeed(at instanceof Date)
      })
      expect(yield* Tool.call(Raw, { at: new Date(0) })).toBe(true)
    }))

  it.effect("interrupting the caller interrupts the handler", () =>
    Effect.gen(function*() {
      const released = yield* Ref.make(false)
      const Held = Tool.make("held", {
        description: "Hold a resource",
        handler: () => Effect.scoped(Effect.zipRight(Effect.addFinalizer(() => Ref.set(released, true)), Effect.never))
      })
      const fiber = yield* Effect.fork(Tool.call(Held, {}))
      yield* Effect.yieldNow()
      const exit = yield* Fiber.interrupt(fiber)
      expect(Exit.isInterrupted(exit)).toBe(true)
      expect(yield* Ref.get(released)).toBe(true)
    }))
})

describe("Toolkit.call", () => {
  it.effect("calls the named tool, with the same checks as a model's call", () =>
    Effect.gen(function*() {
      expect(yield* Toolkit.call(kit, "read_file", { path: "a.txt" })).toBe("hello")
      const missing = yield* Toolkit.call(kit, "read_file", { path: "b.txt" }).pipe(
        Effect.catchTag("FileNotFound", (error) => Effect.succeed(error.message))
      )
      expect(missing).toBe("no such file: b.txt")
      const wrong: any = { path: ["a.txt"] }
      const invalid = yield* Effect.flip(Toolkit.call(kit, "read_file", wrong))
      expect(ToolError.toModelText(invalid as ToolError.ToolError)).toBe(
        "Error: invalid arguments: path: expected a string, got [\"a.txt\"]"
      )
      const denied = yield* Effect.flip(Toolkit.call(kit, "write_file", { path: "x" }).pipe(Effect.provide(denyAll)))
      expect(denied._tag).toBe("PermissionDenied")
    }))

  it.effect("a name that is not the toolkit's (through `any`) is ToolNotFound, worded as for a model", () =>
    Effect.gen(function*() {
      const name: any = "read_files"
      const error = yield* Effect.flip(Toolkit.call(kit, name as "read_file", { path: "a.txt" }))
      expect(error).toBeInstanceOf(ToolError.ToolNotFound)
      expect(ToolError.toModelText(error as ToolError.ToolError)).toBe(
        "Error: unknown tool \"read_files\"; available tools: read_file, touch, write_file, hang"
      )
    }))
})
