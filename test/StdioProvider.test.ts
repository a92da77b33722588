/**
 * StdioProvider without processes: `serve` over an in-memory input and output, the content mapping both ways, and
 * the working directory. Real processes on both sides are in StdioProvider.connect.test.ts and
 * StdioProvider.serve.test.ts.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  Cause,
  Context,
  Deferred,
  Duration,
  Effect,
  Either,
  Exit,
  Fiber,
  Layer,
  Logger,
  Option,
  Schema,
  Stream,
  TestClock
} from "effect"
import { Executor, Tool, ToolDefinition, ToolError, Toolkit, ToolResult } from "../src/index.js"
import { fromContent, toContent } from "../src/internal/stdioProvider.js"
import * as StdioProvider from "../src/StdioProvider.js"

class Refused extends Schema.TaggedError<Refused>()("Refused", { why: Schema.String }) {
  override get message() {
    return `refused: ${this.why}`
  }
}

const Upper = Tool.make("upper", {
  description: "Uppercase a string",
  parameters: { text: Schema.String },
  handler: ({ text }) => Effect.succeed(text.toUpperCase())
})

const Add = Tool.make("add", {
  description: "Add two integers",
  strict: true,
  parameters: { a: Schema.Int, b: Schema.Int },
  success: Schema.Struct({ sum: Schema.Int }),
  handler: ({ a, b }) => Effect.succeed({ sum: a + b })
})

const Refuse = Tool.make("refuse", {
  description: "Always fails",
  failure: Refused,
  handler: () => Effect.fail(new Refused({ why: "not today" }))
})

const Crash = Tool.make("crash", {
  description: "Always dies",
  handler: () => Effect.die(new Error("boom"))
})

const Picture = Tool.make("picture", {
  description: "A caption and an image",
  handler: () =>
    Effect.succeed(ToolResult.parts([
      { type: "text", text: "a pixel" },
      { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" }
    ]))
})

const Lines = Tool.make("lines", {
  description: "Two text parts",
  handler: () => Effect.succeed(ToolResult.parts([{ type: "text", text: "one" }, { type: "text", text: "two" }]))
})

const Nothing = Tool.make("nothing", { description: "Returns nothing", handler: () => Effect.void })

const Where = Tool.make("where", { description: "The host's directory", handler: () => StdioProvider.directory })

const Sleep = Tool.make("sleep", {
  description: "Sleep on Effect's clock",
  parameters: { ms: Schema.Int },
  handler: ({ ms }) => Effect.as(Effect.sleep(ms), `slept ${ms}`)
})

const kit = Toolkit.make(Upper, Add, Refuse, Crash, Picture, Lines, Nothing, Where, Sleep)

/** A request line as a host writes it. */
const request = (id: string, name: string, args?: unknown, dir?: string): string =>
  JSON.stringify({
    call_id: id,
    function: { name, arguments: args === undefined ? "" : JSON.stringify(args) },
    ...(dir === undefined ? {} : { context: { dir } })
  })

interface Served {
  readonly exit: Exit.Exit<void, StdioProvider.StdioProviderError>
  /** Every write, in order; the first is the header. */
  readonly writes: ReadonlyArray<string>
  /** The answers, in the order they were written. */
  readonly answers: ReadonlyArray<{ readonly call_id: string; readonly content: unknown }>
  readonly byId: ReadonlyMap<string, unknown>
}

/** Serves `lines` (then end of input) and collects what was written, letting Effect's clock run as needed. */
const serveLines = <Tools extends Tool.Any>(
  toolkit: Toolkit.Toolkit<Tools>,
  lines: ReadonlyArray<string>,
  options: { readonly maxParallel?: number; readonly advance?: Duration.DurationInput } = {}
) =>
  Effect.gen(function*() {
    const writes: Array<string> = []
    const fiber = yield* Effect.fork(Effect.exit(StdioProvider.serve(toolkit, {
      input: Stream.fromIterable(lines.map((line) => line + "\n")),
      output: (text) => Effect.sync(() => void writes.push(text)),
      maxParallel: options.maxParallel
    })))
    yield* TestClock.adjust(options.advance ?? "1 hour")
    const exit = yield* Fiber.join(fiber)
    const answers = writes.slice(1).map((line) => JSON.parse(line) as { call_id: string; content: unknown })
    return {
      exit,
      writes,
      answers,
      byId: new Map(answers.map((answer) => [answer.call_id, answer.content]))
    } satisfies Served
  })

const withLogs = <A, E, R>(f: (logs: Array<string>) => Effect.Effect<A, E, R>) => {
  const logs: Array<string> = []
  const logger = Logger.make(({ message }) =>
    void logs.push(Array.isArray(message) ? message.join(" ") : String(message))
  )
  return Effect.provide(f(logs), Logger.replace(Logger.defaultLogger, logger))
}

describe("StdioProvider.serve", () => {
  it.effect("writes the header first: one OpenAI chat definition per line, then the empty ready line", () =>
    Effect.gen(function*() {
      const served = yield* serveLines(kit, [])
      expect(served.exit).toEqual(Exit.void)
      expect(served.writes).toHaveLength(1)
      const expected = kit.tools.map((tool) => JSON.stringify(ToolDefinition.openAiChat(tool))).join("\n") + "\n\n"
      expect(served.writes[0]).toBe(expected)
      const strict = JSON.parse(served.writes[0].split("\n")[1])
      expect(strict.function).toMatchObject({ name: "add", strict: true })
    }))

  it.effect("answers every request by its call_id, content by the module's rule", () =>
    Effect.gen(function*() {
      const served = yield* serveLines(kit, [
        request("text", "upper", { text: "hi" }),
        request("json", "add", { a: 2, b: 3 }),
        request("parts", "picture"),
        request("joined", "lines"),
        request("empty", "nothing"),
        request("failure", "refuse"),
        request("defect", "crash"),
        request("bad", "upper", { text: 7 }),
        request("not-object", "upper", ["hi"]),
        request("unknown", "reed_file", {})
      ])
      expect(served.exit).toEqual(Exit.void)
      expect(served.answers).toHaveLength(10)
      expect(Object.fromEntries(served.byId)).toEqual({
        text: "HI",
        json: { sum: 5 },
        parts: [
          { type: "text", text: "a pixel" },
          { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" }
        ],
        joined: "one\ntwo",
        empty: "",
        failure: "Error: refused: not today",
        defect: "Error: tool \"crash\" panicked: boom",
        bad: "Bad arguments: text: expected a string, got 7",
        "not-object": "Bad arguments: expected a JSON object, got an array",
        unknown: "Error: unknown tool \"reed_file\"; available tools: upper, add, refuse, crash, picture, lines, " +
          "nothing, where, sleep"
      })
    }))

  it.effect("takes absent arguments as {} and already-parsed arguments as they are", () =>
    Effect.gen(function*() {
      const served = yield* serveLines(kit, [
        JSON.stringify({ call_id: "absent", function: { name: "nothing" } }),
        JSON.stringify({ call_id: "object", function: { name: "upper", arguments: { text: "ok" } } })
      ])
      expect(Object.fromEntries(served.byId)).toEqual({ absent: "", object: "OK" })
    }))

  it.effect("answers a malformed request that has a call_id with Error:, and logs one without", () =>
    withLogs((logs) =>
      Effect.gen(function*() {
        const served = yield* serveLines(kit, [
          JSON.stringify({ call_id: "a", function: "upper" }),
          JSON.stringify({ call_id: "b", function: { arguments: "{}" } }),
          JSON.stringify({ call_id: "c", function: { name: "upper", arguments: 42 } }),
          JSON.stringify({ call_id: "d", function: { name: "where" }, context: { dir: 7 } }),
          JSON.stringify({ function: { name: "upper", arguments: "{}" } }),
          JSON.stringify({ call_id: 12, function: { name: "upper", arguments: "{}" } }),
          "[1, 2]",
          "   ",
          request("after", "upper", { text: "still here" })
        ])
        expect(served.exit).toEqual(Exit.void)
        expect(Object.fromEntries(served.byId)).toEqual({
          a: "Error: malformed request: function must be an object",
          b: "Error: malformed request: function.name must be a string",
          c: "Error: malformed request: function.arguments must be a string of JSON",
          d: "Error: malformed request: context.dir must be a string",
          after: "STILL HERE"
        })
        expect(logs).toEqual([
          "stdio provider: ignored line 5: the request has no string call_id: " +
          JSON.stringify(JSON.stringify({ function: { name: "upper", arguments: "{}" } })),
          "stdio provider: ignored line 6: the request has no string call_id: " +
          JSON.stringify(JSON.stringify({ call_id: 12, function: { name: "upper", arguments: "{}" } })),
          "stdio provider: ignored line 7: a request is a JSON object: \"[1, 2]\""
        ])
      })
    ))

  it.effect("gives a handler the request's context.dir, and the process's directory when it sent none", () =>
    Effect.gen(function*() {
      const served = yield* serveLines(kit, [
        request("given", "where", {}, "/home/someone/project"),
        request("none", "where", {})
      ])
      expect(Object.fromEntries(served.byId)).toEqual({ given: "/home/someone/project", none: process.cwd() })
    }))

  it.effect("end of input: the calls in flight finish and are answered before serve succeeds", () =>
    Effect.gen(function*() {
      const writes: Array<string> = []
      const fiber = yield* Effect.fork(StdioProvider.serve(kit, {
        input: Stream.make(request("1", "sleep", { ms: 5_000 }) + "\n", request("2", "sleep", { ms: 1_000 }) + "\n"),
        output: (text) => Effect.sync(() => void writes.push(text))
      }))
      yield* TestClock.adjust("1 second")
      expect(writes.slice(1)).toEqual([JSON.stringify({ call_id: "2", content: "slept 1000" }) + "\n"])
      expect(Option.isNone(yield* Fiber.poll(fiber))).toBe(true)
      yield* TestClock.adjust("4 seconds")
      expect(yield* Fiber.await(fiber)).toEqual(Exit.void)
      expect(writes.slice(1)).toEqual([
        JSON.stringify({ call_id: "2", content: "slept 1000" }) + "\n",
        JSON.stringify({ call_id: "1", content: "slept 5000" }) + "\n"
      ])
    }))

  it.effect("a line that is not JSON is fatal: nothing after it starts, the calls in flight are answered", () =>
    Effect.gen(function*() {
      const served = yield* serveLines(kit, [
        request("before", "sleep", { ms: 1_000 }),
        "{\"call_id\": \"broken\", ",
        request("after", "upper", { text: "never" })
      ])
      expect(Object.fromEntries(served.byId)).toEqual({ before: "slept 1000" })
      expect(Exit.isFailure(served.exit)).toBe(true)
      const error = Cause.failureOption((served.exit as Exit.Failure<void, StdioProvider.StdioProviderError>).cause)
      expect(Option.getOrThrow(error)).toMatchObject({ _tag: "StdioProviderError", reason: "Protocol" })
      expect(Option.getOrThrow(error).message).toMatch(
        /^line 2 of the input is not JSON \(.+\): "\{\\"call_id\\": \\"broken\\", "$/
      )
    }))

  it.effect("writes each answer whole, one write at a time, however the calls overlap; a busy output gets them together", () =>
    Effect.gen(function*() {
      let writing = 0
      let overlapped = false
      const writes: Array<string> = []
      const lines = Array.from({ length: 50 }, (_, i) => request(`c${i}`, "upper", { text: `n${i}` }) + "\n")
      yield* StdioProvider.serve(kit, {
        input: Stream.fromIterable(lines),
        maxParallel: 50,
        output: (text) =>
          Effect.gen(function*() {
            writing++
            if (writing > 1) overlapped = true
            yield* Effect.yieldNow()
            yield* Effect.yieldNow()
            writes.push(text)
            writing--
          })
      })
      expect(overlapped).toBe(false)
      // the answers that came while a write was in flight went out together in the next write, each a whole line
      expect(writes.length).toBeGreaterThan(1)
      expect(writes.length).toBeLessThan(51)
      const answers = writes.slice(1).flatMap((text) => {
        expect(text.endsWith("\n")).toBe(true)
        return text.slice(0, -1).split("\n").map((line) => JSON.parse(line).content)
      })
      expect(answers).toHaveLength(50)
      expect(new Set(answers)).toEqual(new Set(Array.from({ length: 50 }, (_, i) => `N${i}`)))
    }))

  it.effect("a failed write fails serve with Output at once and interrupts the calls in flight", () =>
    Effect.gen(function*() {
      const interrupted = yield* Deferred.make<void>()
      const Forever = Tool.make("forever", {
        description: "Never returns",
        handler: () => Effect.onInterrupt(Effect.never, () => Deferred.succeed(interrupted, undefined))
      })
      let writes = 0
      const exit = yield* Effect.exit(StdioProvider.serve(Toolkit.make(Upper, Forever), {
        input: Stream.make(request("1", "forever") + "\n", request("2", "upper", { text: "x" }) + "\n"),
        output: () => writes++ === 0 ? Effect.void : Effect.fail(new Error("EPIPE: the host went away"))
      }))
      expect(exit).toEqual(Exit.fail(
        new StdioProvider.StdioProviderError({
          reason: "Output",
          message: "writing to the output failed: EPIPE: the host went away",
          cause: new Error("EPIPE: the host went away")
        })
      ))
      expect(yield* Deferred.isDone(interrupted)).toBe(true)
    }))

  it.effect("resource keys and maxParallel hold across requests, in arrival order", () =>
    Effect.gen(function*() {
      const events: Array<string> = []
      let running = 0
      let maxRunning = 0
      let runningOnA = 0
      let maxOnA = 0
      const Track = Tool.make("track", {
        description: "Sleep on a key",
        parameters: { label: Schema.String, key: Schema.optional(Schema.String) },
        resource: ({ key }) => key,
        handler: ({ key, label }) =>
          Effect.acquireUseRelease(
            Effect.sync(() => {
              running++
              maxRunning = Math.max(maxRunning, running)
              if (key === "a") maxOnA = Math.max(maxOnA, ++runningOnA)
              events.push(`start ${label}`)
            }),
            () => Effect.sleep("100 millis"),
            () =>
              Effect.sync(() => {
                running--
                if (key === "a") runningOnA--
              })
          )
      })
      const served = yield* serveLines(Toolkit.make(Track), [
        request("1", "track", { label: "a1", key: "a" }),
        request("2", "track", { label: "n1" }),
        request("3", "track", { label: "a2", key: "a" }),
        request("4", "track", { label: "n2" }),
        request("5", "track", { label: "n3" }),
        request("6", "track", { label: "a3", key: "a" })
      ], { maxParallel: 2 })
      expect(served.answers).toHaveLength(6)
      expect(maxRunning).toBe(2)
      expect(maxOnA).toBe(1)
      expect(events.filter((event) => event.includes(" a"))).toEqual(["start a1", "start a2", "start a3"])
    }))
})

describe("StdioProvider.main", () => {
  class Greeting extends Context.Tag("Greeting")<Greeting, string>() {}
  const Greet = Tool.make("greet", { description: "Greet", handler: () => Greeting })

  it("asks for a layer exactly when the handlers need services (checked by the compiler)", () => {
    // compiled, never called: main takes over the process
    const _typed = () => {
      StdioProvider.main(Toolkit.make(Upper))
      StdioProvider.main(Toolkit.make(Upper), { maxParallel: 2 })
      StdioProvider.main(Toolkit.make(Greet), { layer: Layer.succeed(Greeting, "hello") })
      // @ts-expect-error the handlers need Greeting
      StdioProvider.main(Toolkit.make(Greet))
      // @ts-expect-error the layer does not provide Greeting
      StdioProvider.main(Toolkit.make(Greet), { layer: Layer.empty })
    }
    expect(typeof _typed).toBe("function")
  })
})

describe("StdioProvider.directory", () => {
  it.effect("is the process's working directory outside a served call", () =>
    Effect.map(StdioProvider.directory, (dir) => expect(dir).toBe(process.cwd())))

  it.effect("withDirectory sets it for the Effect, and for the calls the executor starts inside", () =>
    Effect.gen(function*() {
      expect(yield* StdioProvider.withDirectory(StdioProvider.directory, "/srv/a")).toBe("/srv/a")
      const outcomes = yield* Executor.run(Toolkit.make(Where), [{ id: "1", name: "where", arguments: "{}" }]).pipe(
        StdioProvider.withDirectory("/srv/b")
      )
      expect(outcomes.map((o) => Either.map(o, ToolResult.toText))).toEqual([Either.right("/srv/b")])
    }))
})

describe("the content mapping", () => {
  /** What the model reads, and the structured output, of an outcome. */
  const view = (outcome: Executor.Outcome) =>
    Either.isRight(outcome)
      ? { text: ToolResult.toText(outcome.right), structured: outcome.right.structured, parts: outcome.right.content }
      : { text: ToolError.toModelText(outcome.left) }

  /** An outcome as it arrives on the other side: to content, across the wire as JSON, and back. */
  const acrossTheWire = (outcome: Executor.Outcome) => {
    const content = JSON.parse(JSON.stringify({ content: toContent(outcome) })).content
    return Either.mapLeft(
      fromContent(content),
      (error) => new ToolError.ToolFailure({ tool: "t", message: error.message, error })
    )
  }

  const outcomesOf = <T extends Tool.Any>(toolkit: Toolkit.Toolkit<T>, calls: ReadonlyArray<[string, unknown]>) =>
    Executor.run(toolkit, calls.map(([name, args], i) => ({ id: `${i}`, name, arguments: args ?? {} })))

  it.effect("a served outcome reads the same to the model after connect maps it back", () =>
    Effect.gen(function*() {
      const outcomes = yield* outcomesOf(kit, [
        ["upper", { text: "hi" }],
        ["add", { a: 2, b: 3 }],
        ["picture", {}],
        ["lines", {}],
        ["nothing", {}],
        ["refuse", {}],
        ["crash", {}],
        ["upper", { text: 7 }],
        ["upper", { text: 7, extra: true }],
        ["reed_file", {}]
      ])
      const all: ReadonlyArray<Executor.Outcome> = [
        ...outcomes,
        Either.right(ToolResult.json("a string")),
        Either.right(ToolResult.json(7))
      ]
      for (const outcome of all) {
        const back = acrossTheWire(outcome)
        expect(view(back).text).toBe(view(outcome).text)
        expect(Either.isLeft(back)).toBe(Either.isLeft(outcome))
        if (Either.isRight(outcome) && Either.isRight(back)) {
          if (typeof outcome.right.structured !== "string") {
            expect(back.right.structured).toEqual(outcome.right.structured)
          }
          if (!outcome.right.content.every((part) => part.type === "text")) {
            expect(back.right.content).toEqual(outcome.right.content)
          }
        }
      }
    }))

  it("reads answers: errors by their prefix, strings as text, parts as parts, anything else as JSON", () => {
    const errorOf = (content: unknown) => Either.flip(fromContent(content)).pipe(Either.getOrThrow)
    expect(errorOf("Error: it failed")).toMatchObject({
      reason: "Answer",
      message: "it failed",
      cause: "Error: it failed"
    })
    expect(errorOf("Error: ").message).toBe("tool call failed")
    expect(errorOf("Bad arguments: a must be positive").message).toBe("invalid arguments: a must be positive")
    const resultOf = (content: unknown) => Either.getOrThrow(fromContent(content))
    expect(resultOf("plain").content).toEqual([{ type: "text", text: "plain" }])
    expect(resultOf("error: lower case is text").content).toEqual([{ type: "text", text: "error: lower case is text" }])
    expect(resultOf(null).content).toEqual([{ type: "text", text: "" }])
    expect(resultOf(undefined).content).toEqual([{ type: "text", text: "" }])
    expect(resultOf({ sum: 5 })).toMatchObject({
      content: [{ type: "text", text: "{\"sum\":5}" }],
      structured: { sum: 5 }
    })
    expect(resultOf([1, 2])).toMatchObject({ content: [{ type: "text", text: "[1,2]" }], structured: [1, 2] })
    expect(resultOf([])).toMatchObject({ content: [{ type: "text", text: "[]" }], structured: [] })
    expect(resultOf([{ type: "text", text: "a" }]).content).toEqual([{ type: "text", text: "a" }])
    expect(resultOf(false)).toMatchObject({ content: [{ type: "text", text: "false" }], structured: false })
  })

  it("writes results: structured output as JSON, text-only as a string, other parts as parts", () => {
    expect(toContent(Either.right(ToolResult.json({ a: 1 })))).toEqual({ a: 1 })
    expect(toContent(Either.right(ToolResult.json("s")))).toBe("\"s\"")
    // a result whose text is not its structured value's JSON (shaped by toModelOutput) sends what the model reads
    const shaped = ToolResult.make({ content: [{ type: "text", text: "3 files" }], structured: { count: 3 } })
    expect(toContent(Either.right(shaped))).toBe("3 files")
    expect(toContent(Either.right(ToolResult.parts([])))).toBe("")
    expect(toContent(Either.right(ToolResult.image("iVBORw0KGgo=", "image/png")))).toEqual([
      { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" }
    ])
    expect(toContent(Either.left(new ToolError.ToolTimeout({ tool: "x", timeout: Duration.seconds(2) })))).toBe(
      "Error: tool \"x\" timed out after 2s"
    )
  })
})
