/**
 * The examples of docs/middleware.md, run (see ./examples.ts for how the page and this file are kept the same).
 */
import { describe, expect, it } from "@effect/vitest"
import { InMemoryTransport } from "@modelcontextprotocol/client"
import { Context, Effect, Either, Fiber, HashMap, Layer, Logger, Schema, TestClock } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as nodePath from "node:path"
import { Executor, McpClient, McpServer, Middleware, Tool, ToolError, Toolkit, ToolResult } from "../src/index.js"
import { checkExamples } from "./examples.js"

/** Where the budget example spills (the page names it in prose). */
const spillFolder = fs.mkdtempSync(nodePath.join(os.tmpdir(), "docs-spill-"))

// #region write
const Weather = Tool.make("weather", {
  description: "Today's weather in a city",
  parameters: { city: Schema.String },
  handler: ({ city }) =>
    city === "Atlantis" ? Effect.fail(`no weather for ${city}`) : Effect.succeed(`sunny in ${city}`)
})
const kit = Toolkit.make(Weather)

/** What the model reads back for one call. */
const modelText = (outcome: Executor.Outcome): string =>
  Either.isRight(outcome) ? ToolResult.toText(outcome.right) : ToolError.toModelText(outcome.left)

/** Keeps a line per call: what was asked, with the decoded parameters, and how it ended. */
const audit: Array<string> = []
const auditing: Middleware.Middleware = (call, next) =>
  Effect.tap(next, (outcome) =>
    Effect.sync(() => {
      const ended = Either.isRight(outcome) ? "ok" : outcome.left._tag
      audit.push(`${call.name} ${JSON.stringify(call.parameters)}: ${ended}`)
    }))

const writeDemo = Effect.map(
  Executor.run(kit, [
    { id: "1", name: "weather", arguments: "{\"city\":\"Paris\"}" },
    { id: "2", name: "weather", arguments: { city: "Atlantis" } },
    { id: "3", name: "weather", arguments: {} }
  ], { middleware: [auditing] }),
  (outcomes) => ({ outcomes: outcomes.map(modelText), audit })
)
// => {
//   outcomes: ["sunny in Paris", "Error: no weather for Atlantis",
//              "Error: invalid arguments: city: missing required property, expected a string"],
//   audit: ["weather {\"city\":\"Paris\"}: ok", "weather {\"city\":\"Atlantis\"}: ToolFailure"]
// }
// #endregion

// #region short-circuit
// continues the example "write"

/** Answers a repeated call from a cache: the handler runs once per city. */
const answers = new Map<string, Executor.Outcome>()
const caching: Middleware.Middleware = (call, next) => {
  const key = `${call.name} ${JSON.stringify(call.parameters)}`
  const cached = answers.get(key)
  // an outcome made in the tool's place: the cache vouches it is what the tool gave
  if (cached !== undefined) return Effect.succeed(cached as Effect.Effect.Success<typeof next>)
  return Effect.tap(next, (outcome) => Effect.sync(() => Either.isRight(outcome) && answers.set(key, outcome)))
}

/** Refuses calls for a city in a block list, in the model's words. */
const blocked: Middleware.Middleware = (call, next) =>
  (call.parameters as { city?: string }).city === "Mordor"
    ? Effect.fail(new ToolError.PermissionDenied({ tool: call.name, description: "weather in Mordor" }))
    : next

const shortCircuitDemo = Effect.map(
  Executor.run(kit, [
    { id: "a", name: "weather", arguments: { city: "Oslo" } },
    { id: "b", name: "weather", arguments: { city: "Mordor" } }
  ], { middleware: [blocked, caching] }),
  (outcomes) => outcomes.map(modelText)
)
// => ["sunny in Oslo", "Error: permission denied: weather in Mordor"]
// (a second batch asking for Oslo is answered by the cache, and the handler does not run)
// #endregion

// #region order
// continues the example "write"

const log: Array<string> = []
const named = (name: string): Middleware.Middleware => (call, next) =>
  Effect.suspend(() => {
    log.push(`${name} sees ${call.id}`)
    return Effect.tap(next, () => Effect.sync(() => log.push(`${name} sees the outcome of ${call.id}`)))
  })

const orderDemo = Executor.run(kit, [{ id: "1", name: "weather", arguments: { city: "Rome" } }], {
  middleware: [named("batch's first"), named("batch's second")]
}).pipe(
  Effect.provide(Middleware.layer(named("installed"))),
  Effect.as(log)
)
// => [
//   "installed sees 1",
//   "batch's first sees 1",
//   "batch's second sees 1",
//   "batch's second sees the outcome of 1",
//   "batch's first sees the outcome of 1",
//   "installed sees the outcome of 1"
// ]
// #endregion

// #region served
// continues the example "write"

/** One MCP server, every call logged and cut to 20,000 characters. */
const serveLogged = McpServer.stdio(kit, { name: "weather", version: "1.0.0" }).pipe(
  Effect.provide(Middleware.layer(Middleware.logging, Middleware.outputBudget({ maxChars: 20_000 })))
)
// #endregion

// #region logging
// continues the example "write"

const Slow = Tool.make("slow_weather", {
  description: "The weather, slowly",
  parameters: { city: Schema.String },
  handler: ({ city }) => Effect.as(Effect.sleep("1200 millis"), `rainy in ${city}`)
})

const loggingDemo = Effect.gen(function*() {
  const lines: Array<string> = []
  const collect = Logger.make(({ annotations, logLevel, message }) => {
    const fields = [...HashMap.toEntries(annotations)].map(([key, value]) => `${key}=${value}`).sort()
    lines.push(`${logLevel.label} ${String(message)} ${fields.join(" ")}`)
  })
  const fiber = yield* Effect.fork(
    Executor.run(Toolkit.make(Slow, Weather), [
      { id: "s1", name: "slow_weather", arguments: { city: "Bergen" } },
      { id: "s2", name: "weather", arguments: { city: "Atlantis" } }
    ], { middleware: [Middleware.logging] }).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, collect)))
  )
  yield* TestClock.adjust("2 seconds")
  yield* Fiber.join(fiber)
  return lines.sort()
})
// => [
//   "INFO tool call tool.call_id=s1 tool.duration_ms=1200 tool.name=slow_weather tool.outcome=Success",
//   "WARN tool call tool.call_id=s2 tool.duration_ms=0 tool.error=no weather for Atlantis tool.name=weather " +
//     "tool.outcome=ToolFailure"
// ]
// #endregion

// #region budget
// continues the example "write"
// given: spillFolder: string

const Logs = Tool.make("logs", {
  description: "A service's log",
  parameters: { service: Schema.String },
  handler: ({ service }) =>
    Effect.succeed(Array.from({ length: 100_000 }, (_, i) => `${service} request ${i}: 200 OK`).join("\n"))
})

const budgetDemo = Effect.gen(function*() {
  const [outcome] = yield* Executor.run(
    Toolkit.make(Logs),
    [{ id: "l1", name: "logs", arguments: { service: "api" } }],
    {
      middleware: [Middleware.outputBudget({ maxChars: 300, spill: { directory: spillFolder } })]
    }
  )
  const result = Either.getOrThrow(outcome)
  return {
    model: ToolResult.toText(result),
    whole: result.truncation?.content.length,
    location: result.truncation?.location
  }
})
// => {
//   model: "api request 0: 200 OK\napi request 1: 200 OK\napi request 2: 200 OK\napi request 3: 200 OK\n" +
//          "… [2588725 characters cut; the whole output is at <spillFolder>/<pid>-<random>/1-l1.txt] …\n" +
//          "api request 99997: 200 OK\napi request 99998: 200 OK\napi request 99999: 200 OK",
//   whole: 1,                                           (the tool's one text part, whole, for the program)
//   location: "<spillFolder>/<pid>-<random>/1-l1.txt"   (the file holds all 2,588,889 characters)
// }
// #endregion

// #region stages
// continues the example "write"

const Stuck = Tool.make("stuck", { description: "Never answers", timeout: "2 seconds", handler: () => Effect.never })
const Broken = Tool.make("broken", {
  description: "Throws",
  handler: (): Effect.Effect<string> => {
    throw new Error("the parser broke")
  }
})

const seen: Array<string> = []
const watching: Middleware.Middleware = (call, next) =>
  Effect.tap(
    next,
    (outcome) => Effect.sync(() => seen.push(`${call.name}: ${Either.isLeft(outcome) ? outcome.left._tag : "ok"}`))
  )

const stagesDemo = Effect.gen(function*() {
  const fiber = yield* Effect.fork(
    Executor.run(Toolkit.make(Stuck, Broken), [
      { id: "1", name: "stuck", arguments: {} },
      { id: "2", name: "broken", arguments: {} }
    ], { middleware: [watching] })
  )
  yield* TestClock.adjust("2 seconds")
  const outcomes = yield* Fiber.join(fiber)
  return { outcomes: outcomes.map(modelText), seen: seen.sort() }
})
// => {
//   outcomes: ["Error: tool \"stuck\" timed out after 2s", "Error: tool \"broken\" panicked: the parser broke"],
//   seen: ["broken: ToolDefect", "stuck: ToolTimeout"]
// }
// #endregion

// #region facts
// continues the example "write"

/** Who the task is for: provided by the host around the batch (or the server), read by whoever needs it. */
class Task extends Context.Tag("app/Task")<Task, { readonly user: string; readonly project: string }>() {}

const Deploy = Tool.make("deploy", {
  description: "Deploy the current project",
  handler: () => Effect.map(Task, (task) => `deployed ${task.project} for ${task.user}`)
})

/** Every log line of a call says whose task it is. */
const taskLogs: Middleware.Middleware<Task> = (_call, next) =>
  Effect.flatMap(Task, (task) => Effect.annotateLogs(next, { user: task.user, project: task.project }))

const factsDemo = Executor.run(Toolkit.make(Deploy), [{ id: "d1", name: "deploy", arguments: {} }], {
  middleware: [taskLogs]
}).pipe(
  Effect.map((outcomes) => outcomes.map(modelText)),
  Effect.provide(Layer.succeed(Task, { user: "ada", project: "engine" }))
)
// => ["deployed engine for ada"]
// #endregion

describe("docs/middleware.md", () => {
  it("shows each example exactly as this file runs it", () =>
    checkExamples(new URL("./middleware.md", import.meta.url), new URL("./middleware.test.ts", import.meta.url)))

  it.effect("write: the middleware sees the calls that run, with their decoded parameters", () =>
    Effect.map(writeDemo, (demo) =>
      expect(demo).toEqual({
        outcomes: [
          "sunny in Paris",
          "Error: no weather for Atlantis",
          "Error: invalid arguments: city: missing required property, expected a string"
        ],
        audit: ["weather {\"city\":\"Paris\"}: ok", "weather {\"city\":\"Atlantis\"}: ToolFailure"]
      })))

  it.effect("short circuit: a refusal in the model's words, and a cache the second batch is answered from", () =>
    Effect.gen(function*() {
      expect(yield* shortCircuitDemo).toEqual(["sunny in Oslo", "Error: permission denied: weather in Mordor"])
      let ran = 0
      const Counted = Tool.wrap(Weather, (params, next) => Effect.zipRight(Effect.sync(() => ran++), next(params)))
      const again = yield* Executor.run(Toolkit.make(Counted), [{
        id: "c",
        name: "weather",
        arguments: { city: "Oslo" }
      }], {
        middleware: [caching]
      })
      expect(again.map(modelText)).toEqual(["sunny in Oslo"])
      expect(ran).toBe(0)
    }))

  it.effect("order: installed around the batch's own, the first outermost", () =>
    Effect.map(orderDemo, (lines) =>
      expect(lines).toEqual([
        "installed sees 1",
        "batch's first sees 1",
        "batch's second sees 1",
        "batch's second sees the outcome of 1",
        "batch's first sees the outcome of 1",
        "installed sees the outcome of 1"
      ])))

  it("served: the server's program is an Effect like any other", () => {
    expect(Effect.isEffect(serveLogged)).toBe(true)
  })

  it.scoped("served: a served call goes through the installed middleware", () =>
    Effect.gen(function*() {
      const lines: Array<string> = []
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
      yield* McpServer.serve(kit, { name: "weather", version: "1.0.0" }, serverSide).pipe(
        Effect.provide(Middleware.layer(Middleware.logging)),
        Effect.provide(
          Logger.replace(Logger.defaultLogger, Logger.make(({ message }) => void lines.push(String(message))))
        )
      )
      const client = yield* McpClient.connect(clientSide)
      const [remote] = (yield* client.toolkit).tools
      expect(modelText(yield* Tool.execute(remote, { id: "m", arguments: { city: "Lima" } }))).toBe("sunny in Lima")
      expect(lines).toContain("tool call")
    }))

  it.effect("logging: one line per call, its level by how it ended", () =>
    Effect.map(loggingDemo, (lines) =>
      expect(lines).toEqual([
        "INFO tool call tool.call_id=s1 tool.duration_ms=1200 tool.name=slow_weather tool.outcome=Success",
        "WARN tool call tool.call_id=s2 tool.duration_ms=0 tool.error=no weather for Atlantis tool.name=weather " +
        "tool.outcome=ToolFailure"
      ])))

  it.effect("budget: head, marker and tail; the whole output spilled and kept for the program", () =>
    Effect.gen(function*() {
      const demo = yield* budgetDemo
      const location = demo.location!
      expect(nodePath.relative(spillFolder, location)).toMatch(new RegExp(`^${process.pid}-\\w{6}/1-l1\\.txt$`))
      const whole = fs.readFileSync(location, "utf8")
      expect(whole.length).toBe(2_588_889)
      expect(demo.model.length).toBeLessThanOrEqual(300)
      const [, head, cut, tail] = /^([^…]*)\n… \[(\d+) characters cut; the whole output is at (?:\S+)\] …\n([^…]*)$/
        .exec(demo.model)!
      // whole lines from the start and from the end, a few of each
      expect(whole.startsWith(head + "\n")).toBe(true)
      expect(whole.endsWith("\n" + tail)).toBe(true)
      expect(head.split("\n").length).toBeGreaterThanOrEqual(3)
      expect(tail.split("\n").length).toBeGreaterThanOrEqual(3)
      expect(Number(cut)).toBe(whole.length - head.length - tail.length)
      expect(demo.model).toContain(`the whole output is at ${location}] …`)
      expect(demo.whole).toBe(1)
    }))

  it.effect("stages: the timeout and recover stages give outcomes the middleware sees", () =>
    Effect.map(stagesDemo, (demo) =>
      expect(demo).toEqual({
        outcomes: ["Error: tool \"stuck\" timed out after 2s", "Error: tool \"broken\" panicked: the parser broke"],
        seen: ["broken: ToolDefect", "stuck: ToolTimeout"]
      })))

  it.effect("facts: a service the host provides, read by the handler and the middleware", () =>
    Effect.map(factsDemo, (texts) => expect(texts).toEqual(["deployed engine for ada"])))
})
