/**
 * Middleware around calls: the order (the first installed outermost; installed in the context around a batch's
 * own), what it sees (the call as written, its decoded parameters, its tool), where it sits (after the arguments
 * are checked and permission given, before `onStart` and the handler), what it can do (answer in the tool's place,
 * change the outcome, run `next` again), what its failures become, and that it reaches every way a call runs:
 * batches, `Tool.execute` and `Tool.call`, the MCP server, a stdio provider. Then `Middleware.logging`.
 */
import { describe, expect, it } from "@effect/vitest"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import {
  Context,
  Deferred,
  Effect,
  Either,
  Fiber,
  HashMap,
  Layer,
  Logger,
  LogLevel,
  Schema,
  Stream,
  TestClock
} from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as nodePath from "node:path"
import { expectTypeOf } from "vitest"
import {
  Executor,
  McpClient,
  McpServer,
  Middleware,
  Permission,
  StdioProvider,
  Tool,
  ToolError,
  Toolkit,
  ToolResult
} from "../src/index.js"
import { fixture } from "./fixtures/compiled.js"
import { modelText } from "./helpers.js"

/** A middleware that writes `<name> before` and `<name> after` around `next`. */
const tracing = (log: Array<string>, name: string): Middleware.Middleware => (call, next) =>
  Effect.suspend(() => {
    log.push(`${name} before ${call.id}`)
    return Effect.tap(next, () => Effect.sync(() => log.push(`${name} after ${call.id}`)))
  })

const echoing = (log: Array<string>) =>
  Tool.make("echo", {
    description: "Echo a text",
    parameters: { text: Schema.String },
    handler: ({ text }) =>
      Effect.sync(() => {
        log.push(`handler ${text}`)
        return text
      })
  })

const echoCall = (id: string, text = id) => ({ id, name: "echo", arguments: { text } })

describe("Middleware", () => {
  describe("order", () => {
    it.effect("the first of a batch's middleware is the outermost", () =>
      Effect.gen(function*() {
        const log: Array<string> = []
        yield* Executor.run(Toolkit.make(echoing(log)), [echoCall("1")], {
          middleware: [tracing(log, "a"), tracing(log, "b")]
        })
        expect(log).toEqual(["a before 1", "b before 1", "handler 1", "b after 1", "a after 1"])
      }))

    it.effect("middleware installed in the context is around a batch's own; layers nest outside in", () =>
      Effect.gen(function*() {
        const log: Array<string> = []
        yield* Executor.run(Toolkit.make(echoing(log)), [echoCall("1")], { middleware: [tracing(log, "own")] }).pipe(
          Effect.provide(Middleware.layer(tracing(log, "inner"))),
          Effect.provide(Middleware.layer(tracing(log, "outer1"), tracing(log, "outer2")))
        )
        expect(log).toEqual([
          "outer1 before 1",
          "outer2 before 1",
          "inner before 1",
          "own before 1",
          "handler 1",
          "own after 1",
          "inner after 1",
          "outer2 after 1",
          "outer1 after 1"
        ])
        expect(yield* Middleware.Installed).toEqual([])
      }))
  })

  describe("what it sees", () => {
    it.effect("the call as written, its decoded parameters and its tool", () =>
      Effect.gen(function*() {
        const seen: Array<Middleware.Call> = []
        const Repeat = Tool.make("repeat", {
          description: "Repeat a text",
          parameters: { text: Schema.String, times: Schema.NumberFromString },
          handler: ({ text, times }) => Effect.succeed(text.repeat(times))
        })
        const args = "{\"text\":\"ab\",\"times\":\"3\"}"
        const [outcome] = yield* Executor.run(Toolkit.make(Repeat), [{ id: "c1", name: "repeat", arguments: args }], {
          middleware: [(call, next) => Effect.zipRight(Effect.sync(() => seen.push(call)), next)]
        })
        expect(modelText(outcome)).toBe("ababab")
        expect(seen).toHaveLength(1)
        expect(seen[0]).toEqual({
          id: "c1",
          name: "repeat",
          arguments: args,
          parameters: { text: "ab", times: 3 },
          tool: Repeat
        })
        expect(seen[0].tool).toBe(Repeat)
      }))

    it.effect("never a call refused before it could run: an unknown tool, invalid arguments, a denial", () =>
      Effect.gen(function*() {
        const seen: Array<string> = []
        const Write = Tool.make("write", {
          description: "Write",
          permission: { action: "write" },
          handler: () => Effect.succeed("written")
        })
        const kit = Toolkit.make(echoing([]), Write)
        const outcomes = yield* Executor.run(kit, [
          { id: "unknown", name: "nope", arguments: {} },
          { id: "invalid", name: "echo", arguments: {} },
          { id: "denied", name: "write", arguments: {} },
          echoCall("fine")
        ], { middleware: [(call, next) => Effect.zipRight(Effect.sync(() => seen.push(call.id)), next)] }).pipe(
          Effect.provide(Permission.layer(() => Effect.succeed(Permission.deny("no"))))
        )
        expect(outcomes.map((o) => Either.isLeft(o) ? o.left._tag : "Success")).toEqual([
          "ToolNotFound",
          "InvalidArguments",
          "PermissionDenied",
          "Success"
        ])
        expect(seen).toEqual(["fine"])
      }))

    it.effect("runs after permission is given and before onStart and the handler", () =>
      Effect.gen(function*() {
        const log: Array<string> = []
        const Write = Tool.make("write", {
          description: "Write",
          permission: { action: "write" },
          handler: () => Effect.sync(() => log.push("handler"))
        })
        yield* Executor.run(Toolkit.make(Write), [{ id: "w", name: "write", arguments: {} }], {
          middleware: [tracing(log, "m")],
          onStart: () => Effect.sync(() => log.push("onStart"))
        }).pipe(
          Effect.provide(
            Permission.layer(() => Effect.sync(() => log.push("permission")).pipe(Effect.as(Permission.allow)))
          )
        )
        expect(log).toEqual(["permission", "m before w", "onStart", "handler", "m after w"])
      }))
  })

  describe("what it can do", () => {
    it.effect("answer in the tool's place: the handler never runs, no Started, onStart not run", () =>
      Effect.gen(function*() {
        const log: Array<string> = []
        const cached = ToolResult.text("from the cache")
        const cache: Middleware.Middleware = (call, next) =>
          call.id === "hit" ? Effect.succeed(Either.right(cached) as never) : next
        const events = yield* Executor.stream(Toolkit.make(echoing(log)), [echoCall("hit"), echoCall("miss")], {
          middleware: [cache],
          onStart: (call) => Effect.sync(() => log.push(`onStart ${call.id}`))
        }).pipe(Stream.runCollect)
        expect(log).toEqual(["onStart miss", "handler miss"])
        const tags = [...events].map((e) => `${e._tag} ${e.call.id}`)
        expect(tags).not.toContain("Started hit")
        expect(tags).toContain("Started miss")
        const finished = [...events].filter((e): e is Executor.Finished => e._tag === "Finished")
        expect(finished.find((e) => e.call.id === "hit")!.outcome).toEqual(Either.right(cached))
      }))

    it.effect("fail the call with a ToolError, or change what next gave", () =>
      Effect.gen(function*() {
        const refuse: Middleware.Middleware = (call, next) =>
          call.id === "no"
            ? Effect.fail(new ToolError.PermissionDenied({ tool: call.name, description: "echo", reason: "not today" }))
            : next
        const shout: Middleware.Middleware = (_call, next) =>
          Effect.map(next, (outcome) =>
            Either.map(outcome, (result) =>
              ToolResult.text(ToolResult.toText(result).toUpperCase())) as typeof outcome)
        const outcomes = yield* Executor.run(Toolkit.make(echoing([])), [echoCall("no"), echoCall("yes")], {
          middleware: [refuse, shout]
        })
        expect(outcomes.map(modelText)).toEqual(["Error: permission denied: echo: not today", "YES"])
      }))

    it.effect("run next again: the handler runs twice and the call has one Started", () =>
      Effect.gen(function*() {
        let runs = 0
        const Flaky = Tool.make("flaky", {
          description: "Fails the first time",
          handler: () => Effect.suspend(() => ++runs === 1 ? Effect.fail("try again") : Effect.succeed(`run ${runs}`))
        })
        const retry: Middleware.Middleware = (_call, next) =>
          Effect.flatMap(next, (outcome) => Either.isLeft(outcome) ? next : Effect.succeed(outcome))
        const events = yield* Executor.stream(Toolkit.make(Flaky), [{ id: "f", name: "flaky", arguments: {} }], {
          middleware: [retry]
        }).pipe(Stream.runCollect)
        expect([...events].map((e) => e._tag)).toEqual(["Started", "Finished"])
        const last = [...events][1] as Executor.Finished
        expect(modelText(last.outcome)).toBe("run 2")
      }))

    it.effect("what a middleware fails or dies with is the call's outcome, and the one around it sees that", () =>
      Effect.gen(function*() {
        const outer: Array<string> = []
        const watch: Middleware.Middleware = (_call, next) =>
          Effect.tap(
            next,
            (outcome) => Effect.sync(() => outer.push(Either.isLeft(outcome) ? outcome.left._tag : "ok"))
          )
        const broken: Middleware.Middleware = (call) =>
          call.id === "dies"
            ? Effect.die(new Error("the middleware broke"))
            : call.id === "throws"
            ? (() => {
              throw new Error("thrown")
            })()
            : call.id === "garbage"
            ? Effect.succeed("not an outcome" as never)
            : Effect.fail("not a ToolError" as unknown as ToolError.ToolError)
        const outcomes = yield* Executor.run(
          Toolkit.make(echoing([])),
          [echoCall("dies"), echoCall("throws"), echoCall("garbage"), echoCall("fails")],
          { middleware: [watch, broken] }
        )
        expect(outcomes.map(modelText)).toEqual([
          "Error: tool \"echo\" panicked: the middleware broke",
          "Error: tool \"echo\" panicked: thrown",
          "Error: tool \"echo\" panicked: a middleware gave something that is not an outcome",
          "Error: not a ToolError"
        ])
        expect(outer).toEqual(["ToolDefect", "ToolDefect", "ToolDefect", "ToolFailure"])
      }))

    it.effect("read the services of the batch, like a handler", () =>
      Effect.gen(function*() {
        class Audit extends Context.Tag("Audit")<Audit, Array<string>>() {}
        const audit: Middleware.Middleware<Audit> = (call, next) =>
          Effect.zipRight(Effect.flatMap(Audit, (lines) => Effect.sync(() => lines.push(call.id))), next)
        const lines: Array<string> = []
        const batch = Executor.run(Toolkit.make(echoing([])), [echoCall("1"), echoCall("2")], { middleware: [audit] })
        // what the middleware needs, the batch needs
        expectTypeOf<Effect.Effect.Context<typeof batch>>().toEqualTypeOf<Audit>()
        yield* batch.pipe(Effect.provideService(Audit, lines))
        expect(lines).toEqual(["1", "2"])
      }))
  })

  describe("reaches every way a call runs", () => {
    it.effect("Tool.execute, Tool.call and Toolkit.call", () =>
      Effect.gen(function*() {
        const log: Array<string> = []
        const Echo = echoing([])
        yield* Effect.gen(function*() {
          yield* Tool.execute(Echo, { id: "x", arguments: { text: "a" } })
          expect(yield* Tool.call(Echo, { text: "b" }, { id: "y" })).toBe("b")
          yield* Toolkit.call(Toolkit.make(Echo), "echo", { text: "c" }, { id: "z" })
        }).pipe(Effect.provide(Middleware.layer(tracing(log, "m"))))
        expect(log).toEqual(["m before x", "m after x", "m before y", "m after y", "m before z", "m after z"])
      }))

    it.scoped("calls served over MCP, including those the server would answer at once", () =>
      Effect.gen(function*() {
        const log: Array<string> = []
        const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
        yield* McpServer.serve(Toolkit.make(echoing([])), { name: "s", version: "1.0.0" }, serverSide).pipe(
          Effect.provide(
            Middleware.layer((call, next) => Effect.zipRight(Effect.sync(() => log.push(call.name)), next))
          )
        )
        const client = yield* McpClient.connect(clientSide)
        const [remote] = (yield* client.toolkit).tools
        const outcome = yield* Tool.execute(remote, { id: "1", arguments: { text: "over mcp" } })
        expect(modelText(outcome)).toBe("over mcp")
        expect(log).toEqual(["echo"])
      }))

    it.scoped(
      "calls served by a stdio provider (an output budget installed around StdioProvider.serve)",
      () =>
        Effect.gen(function*() {
          const spill = fs.mkdtempSync(nodePath.join(os.tmpdir(), "provider-spill-"))
          const provider = yield* StdioProvider.connect({
            command: process.execPath,
            args: [fixture("provider-budgeted")],
            env: { ...process.env, MAX_CHARS: "500", SPILL_DIR: spill } as Record<string, string>
          })
          const [big] = (yield* provider.toolkit).tools
          const text = modelText(yield* Tool.execute(big, { id: "1", arguments: { n: 1_000 } }))
          expect(text.length).toBeLessThanOrEqual(500)
          const location = /the whole output is at (\S+)\] …/.exec(text)![1]
          expect(fs.readFileSync(location, "utf8")).toBe(
            Array.from({ length: 1_000 }, (_, i) => `line ${i}`).join("\n")
          )
        }),
      { timeout: 60_000 }
    )

    it.effect("none installed: the fast path, and the same outcomes", () =>
      Effect.gen(function*() {
        expect(yield* Middleware.Installed).toEqual([])
        const outcomes = yield* Executor.run(Toolkit.make(echoing([])), [echoCall("1")])
        expect(outcomes.map(modelText)).toEqual(["1"])
      }))
  })
})

describe("Middleware.logging", () => {
  interface Line {
    readonly message: unknown
    readonly level: string
    readonly annotations: Record<string, unknown>
  }
  const capture = (lines: Array<Line>) =>
    Logger.replace(
      Logger.defaultLogger,
      Logger.make(({ annotations, logLevel, message }) =>
        lines.push({
          message: Array.isArray(message) ? message[0] : message,
          level: logLevel.label,
          annotations: Object.fromEntries(HashMap.toEntries(annotations))
        })
      )
    )

  it.effect("logs each call once it is over: tool, call id, outcome, duration, and the error's message", () =>
    Effect.gen(function*() {
      const lines: Array<Line> = []
      const Slow = Tool.make("slow", {
        description: "Sleeps, then answers or fails",
        parameters: { ms: Schema.Int, fail: Schema.optional(Schema.Boolean) },
        handler: ({ fail, ms }) =>
          Effect.zipRight(Effect.sleep(ms), fail === true ? Effect.fail("it broke") : Effect.succeed("done"))
      })
      const Boom = Tool.make("boom", { description: "Dies", handler: () => Effect.die(new Error("boom")) })
      const fiber = yield* Effect.fork(
        Executor.run(Toolkit.make(Slow, Boom), [
          { id: "ok", name: "slow", arguments: { ms: 250 } },
          { id: "bad", name: "slow", arguments: { ms: 100, fail: true } },
          { id: "dead", name: "boom", arguments: {} }
        ], { middleware: [Middleware.logging] }).pipe(
          Effect.provide(capture(lines)),
          Logger.withMinimumLogLevel(LogLevel.All)
        )
      )
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(fiber)
      const byCall = Object.fromEntries(lines.map((line) => [line.annotations["tool.call_id"], line]))
      expect(lines.every((line) => line.message === "tool call")).toBe(true)
      expect(byCall.ok).toEqual({
        message: "tool call",
        level: "INFO",
        annotations: { "tool.name": "slow", "tool.call_id": "ok", "tool.outcome": "Success", "tool.duration_ms": 250 }
      })
      expect(byCall.bad).toEqual({
        message: "tool call",
        level: "WARN",
        annotations: {
          "tool.name": "slow",
          "tool.call_id": "bad",
          "tool.outcome": "ToolFailure",
          "tool.duration_ms": 100,
          "tool.error": "it broke"
        }
      })
      expect(byCall.dead.level).toBe("ERROR")
      expect(byCall.dead.annotations["tool.outcome"]).toBe("ToolDefect")
      expect(byCall.dead.annotations["tool.error"]).toBe("tool \"boom\" panicked: boom")
    }))

  it.effect("a call cancelled while it runs is logged as ToolInterrupted", () =>
    Effect.gen(function*() {
      const lines: Array<Line> = []
      const started = yield* Deferred.make<void>()
      const Hang = Tool.make("hang", {
        description: "Never answers",
        handler: () => Effect.zipRight(Deferred.succeed(started, undefined), Effect.never)
      })
      yield* Effect.scoped(Effect.gen(function*() {
        const batch = yield* Executor.start(Toolkit.make(Hang), [{ id: "h", name: "hang", arguments: {} }], {
          middleware: [Middleware.logging]
        })
        yield* Deferred.await(started)
        yield* batch.cancel("h")
      })).pipe(Effect.provide(capture(lines)))
      expect(lines.map((line) => [line.level, line.annotations["tool.outcome"]])).toEqual([["WARN", "ToolInterrupted"]])
    }))

  it.effect("installed with a layer, it logs calls of every batch run with it", () =>
    Effect.gen(function*() {
      const lines: Array<Line> = []
      const kit = Toolkit.make(echoing([]))
      yield* Effect.zipRight(Executor.run(kit, [echoCall("1")]), Executor.run(kit, [echoCall("2")])).pipe(
        Effect.provide(Layer.merge(Middleware.layer(Middleware.logging), capture(lines)))
      )
      expect(lines.map((line) => line.annotations["tool.call_id"])).toEqual(["1", "2"])
    }))
})
