/**
 * StdioProvider.serve as a real provider program (test/fixtures/provider-served.ts, run by `StdioProvider.main`),
 * driven by a raw host over pipes, and both sides of this library talking to each other. Real processes, so
 * `it.live`; the fixture runs precompiled (test/fixtures/compiled.ts), and the tests start as few processes as they
 * can: one session covers the header, scheduling, every kind of answer and end of input.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Either, Option, Queue } from "effect"
import * as ChildProcess from "node:child_process"
import * as fs from "node:fs"
import { fileURLToPath } from "node:url"
import { Executor, ToolError, Toolkit } from "../src/index.js"
import { lineSplitter } from "../src/internal/lines.js"
import * as StdioProvider from "../src/StdioProvider.js"
import { fixture } from "./fixtures/compiled.js"
import { modelText } from "./helpers.js"

const SERVED = fixture("provider-served")
const ROOT = fileURLToPath(new URL("..", import.meta.url))

/** A generous bound: the precompiled fixture starts in well under a second, on a loaded machine in a few. */
const START_TIMEOUT = "60 seconds"

const NAMES = [
  "track",
  "stats",
  "upper",
  "add",
  "sleep",
  "refuse",
  "where",
  "big",
  "length",
  "picture",
  "halve",
  "chatty"
]

/** A host with nothing but pipes: write lines, read lines, see how the process ended. */
const rawHost = (env: Record<string, string> = {}) =>
  Effect.acquireRelease(
    Effect.gen(function*() {
      const lines = yield* Queue.unbounded<string>()
      const exited = yield* Deferred.make<number | null>()
      const proc = ChildProcess.spawn(process.execPath, [SERVED], {
        cwd: ROOT,
        env: { ...process.env, ...env },
        stdio: ["pipe", "pipe", "pipe"]
      })
      let stderr = ""
      proc.stderr.on("data", (chunk: Buffer) => void (stderr += chunk.toString("utf8")))
      const splitter = lineSplitter((line) => Queue.unsafeOffer(lines, line))
      proc.stdout.on("data", (chunk: Buffer) => splitter.push(chunk))
      proc.stdin.on("error", () => {})
      proc.on("exit", (code) => Deferred.unsafeDone(exited, Effect.succeed(code)))
      return {
        proc,
        send: (line: string) => Effect.sync(() => void proc.stdin.write(line + "\n")),
        /** Writes `head`, then `mib` MiB of `x`, then `tail` and a newline, heeding back-pressure. */
        sendLong: (head: string, mib: number, tail: string) =>
          Effect.promise(async () => {
            const write = (text: string) =>
              new Promise<void>((resolve) => (proc.stdin.write(text) ? resolve() : proc.stdin.once("drain", resolve)))
            const chunk = "x".repeat(1024 * 1024)
            await write(head)
            for (let i = 0; i < mib; i++) await write(chunk)
            await write(tail + "\n")
          }),
        endInput: Effect.sync(() => void proc.stdin.end()),
        /** The next line of stdout, waiting at most `seconds`. */
        next: (seconds = 60) =>
          Queue.take(lines).pipe(
            Effect.timeoutFail({ duration: `${seconds} seconds`, onTimeout: () => new Error("no line on stdout") })
          ),
        /** The lines already read and not taken. */
        rest: Queue.takeAll(lines),
        exitCode: Deferred.await(exited).pipe(
          Effect.timeoutFail({ duration: "20 seconds", onTimeout: () => new Error("the provider did not exit") })
        ),
        stderr: () => stderr
      }
    }),
    ({ proc }) => Effect.sync(() => proc.exitCode === null && proc.signalCode === null && void proc.kill("SIGKILL"))
  )

type Host = Effect.Effect.Success<ReturnType<typeof rawHost>>

const request = (id: string, name: string, args: unknown = {}, dir?: string): string =>
  JSON.stringify({
    call_id: id,
    function: { name, arguments: JSON.stringify(args) },
    ...(dir === undefined ? {} : { context: { dir } })
  })

/** Reads the header: definitions up to the empty ready line. */
const readHeader = (host: Host) =>
  Effect.gen(function*() {
    const definitions: Array<{ type: string; function: Record<string, unknown> }> = []
    while (true) {
      const line = yield* host.next()
      if (line === "") return definitions
      definitions.push(JSON.parse(line))
    }
  })

/** Reads `n` answers, in the order they come. */
const readAnswers = (host: Host, n: number) =>
  Effect.gen(function*() {
    const answers: Array<{ call_id: string; content: unknown }> = []
    for (let i = 0; i < n; i++) answers.push(JSON.parse(yield* host.next()))
    return answers
  })

describe("StdioProvider.main, driven over pipes by a host without this library", () => {
  it.live(
    "one session: the header, resource keys and maxParallel across requests, every kind of answer by call_id, " +
      "context.dir, logs on stderr only, end of input answering what is in flight and exiting 0",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const host = yield* rawHost({ MAX_PARALLEL: "3" })
        const definitions = yield* readHeader(host)
        expect(definitions.map((d) => d.function.name)).toEqual(NAMES)
        for (const definition of definitions) {
          expect(definition.type).toBe("function")
          expect(Object.keys(definition.function).sort()).toEqual(
            definition.function.name === "add"
              ? ["description", "name", "parameters", "strict"]
              : ["description", "name", "parameters"]
          )
        }
        expect(definitions[2].function.parameters).toEqual({
          type: "object",
          properties: { text: { type: "string", description: "Text to uppercase" } },
          required: ["text"],
          additionalProperties: false
        })

        // scheduling across requests (MAX_PARALLEL=3): resource keys and maxParallel hold
        // interleaved, four calls on key "a" and six on no key, all sent at once
        for (let i = 1; i <= 6; i++) {
          if (i <= 4) yield* host.send(request(`a${i}`, "track", { label: `a${i}`, key: "a", ms: 300 }))
          yield* host.send(request(`n${i}`, "track", { label: `n${i}`, ms: 300 }))
        }
        const tracked = yield* readAnswers(host, 10)
        expect(tracked.map((a) => a.call_id).sort()).toEqual(
          ["a1", "a2", "a3", "a4", "n1", "n2", "n3", "n4", "n5", "n6"]
        )
        yield* host.send(request("stats", "stats"))
        const [stats] = yield* readAnswers(host, 1)
        expect(stats.content).toMatchObject({
          // three at once, never more; never two on key "a"; key "a" in arrival order
          maxRunning: 3,
          maxPerKey: { a: 1 },
          startOrder: { a: ["a1", "a2", "a3", "a4"] }
        })

        // the protocol, every kind of answer
        yield* host.send(request("slow", "sleep", { ms: 800 }))
        yield* host.send(request("up", "upper", { text: "abc" }))
        yield* host.send(request("dir", "where", {}, "/home/someone/project"))
        yield* host.send(request("add", "add", { a: 2, b: 3 }))
        yield* host.send(request("bad", "add", { a: 2 }))
        yield* host.send(request("refused", "refuse", { why: "no reason" }))
        yield* host.send(request("unknown", "reed_file"))
        yield* host.send(JSON.stringify({ call_id: "malformed", function: { arguments: "{}" } }))
        yield* host.send(request("chatty", "chatty"))
        // end of input with every call still in flight: each is answered (the slow one last), then exit 0
        yield* host.endInput
        const answers = yield* readAnswers(host, 9)
        expect(answers[8]).toEqual({ call_id: "slow", content: "slept 800" })
        expect(Object.fromEntries(answers.map((a) => [a.call_id, a.content]))).toEqual({
          slow: "slept 800",
          up: "ABC",
          dir: "/home/someone/project",
          add: { sum: 5 },
          bad: "Bad arguments: b: missing required property, expected an integer",
          refused: "Error: refused: no reason",
          unknown: `Error: unknown tool "reed_file"; available tools: ${NAMES.join(", ")}`,
          malformed: "Error: malformed request: function.name must be a string",
          chatty: "said things on stderr"
        })
        expect(yield* host.exitCode).toBe(0)
        expect(yield* host.rest).toHaveLength(0)
        expect(host.stderr()).toContain("chatty: an Effect log line")
        expect(host.stderr()).toContain("chatty: a console.log line")
      }))
  )

  it.live("a line that is not JSON: the call in flight is answered, nothing after it runs, exit code 1", () =>
    Effect.scoped(Effect.gen(function*() {
      const host = yield* rawHost()
      yield* readHeader(host)
      yield* host.send(request("before", "sleep", { ms: 500 }))
      yield* host.send("this is not JSON")
      yield* host.send(request("after", "upper", { text: "never" }))
      expect(yield* readAnswers(host, 1)).toEqual([{ call_id: "before", content: "slept 500" }])
      expect(yield* host.exitCode).toBe(1)
      expect(yield* host.rest).toHaveLength(0)
      expect(host.stderr()).toMatch(
        /stdio provider stopped: line 2 of the input is not JSON \(.*\): "this is not JSON"/
      )
    })))
})

/** The peak resident set size of a live process, from /proc (Linux). */
const peakRss = (pid: number): number => {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8")
  return Number(/^VmHWM:\s+(\d+) kB$/m.exec(status)![1]) * 1024
}

describe("StdioProvider.main, on a request line over maxLineBytes", () => {
  it.live(
    "a 600 MB request is dropped as it arrives: answered as too large, the next one served, memory bounded, exit 0",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const host = yield* rawHost()
        yield* readHeader(host)
        const before = peakRss(host.proc.pid!)
        const head = "{\"call_id\":\"huge\",\"function\":{\"name\":\"upper\",\"arguments\":\"{\\\"text\\\":\\\""
        const tail = "\\\"}\"}}"
        yield* host.sendLong(head, 600, tail)
        yield* host.send(request("after", "upper", { text: "next" }))
        const bytes = head.length + 600 * 1024 * 1024 + tail.length
        expect(yield* readAnswers(host, 2)).toEqual([
          {
            call_id: "huge",
            content: `Error: the request is ${bytes} bytes, over the limit of 16 MiB for one line`
          },
          { call_id: "after", content: "NEXT" }
        ])
        const growth = peakRss(host.proc.pid!) - before
        if (process.env.BOUNDS_REPORT !== undefined) {
          process.stderr.write(`600 MB request: provider peak RSS growth ${(growth / 1024 / 1024).toFixed(1)} MiB\n`)
        }
        expect(growth).toBeLessThan(150 * 1024 * 1024)
        yield* host.endInput
        expect(yield* host.exitCode).toBe(0)
        expect(host.stderr()).not.toContain("    at ")
      })),
    120_000
  )
})

describe("StdioProvider.connect to StdioProvider.main", () => {
  it.live("the two sides of this library: tools, results, errors, context.dir, 5 MB both ways", () =>
    Effect.scoped(Effect.gen(function*() {
      const provider = yield* StdioProvider.connect({
        command: process.execPath,
        args: [SERVED],
        cwd: ROOT,
        startTimeout: START_TIMEOUT
      })
      const kit = yield* provider.toolkit
      expect(Toolkit.names(kit)).toEqual(NAMES)
      const add = Option.getOrThrow(Toolkit.lookup(kit, "add"))
      expect(add.strict).toBe(true)

      const text = "x".repeat(5 * 1024 * 1024)
      const outcomes = yield* Executor.run(kit, [
        { id: "1", name: "upper", arguments: "{\"text\":\"hi\"}" },
        { id: "2", name: "add", arguments: "{\"a\":2,\"b\":3}" },
        { id: "3", name: "refuse", arguments: "{\"why\":\"no reason\"}" },
        { id: "4", name: "picture", arguments: "{}" },
        { id: "5", name: "where", arguments: "{}" },
        { id: "6", name: "big", arguments: JSON.stringify({ size: 5 * 1024 * 1024 }) },
        { id: "7", name: "length", arguments: JSON.stringify({ text }) },
        { id: "8", name: "add", arguments: "{\"a\":2}" },
        { id: "9", name: "halve", arguments: "{\"n\":3}" }
      ]).pipe(StdioProvider.withDirectory("/srv/host-dir"))
      expect(outcomes.map(modelText)).toEqual([
        "HI",
        "{\"sum\":5}",
        "Error: refused: no reason",
        "a pixel",
        "/srv/host-dir",
        "z".repeat(5 * 1024 * 1024),
        `{"length":${text.length}}`,
        // checked by this side against the advertised strict schema, before sending
        "Error: invalid arguments: b: missing required property, expected an integer",
        // passes the served schema here, refused there as `Bad arguments: ...`, read back as invalid arguments
        "Error: invalid arguments: n: expected an even integer"
      ])
      expect(Either.getOrThrow(outcomes[1]).structured).toEqual({ sum: 5 })
      expect(Either.getOrThrow(outcomes[3]).content).toEqual([
        { type: "text", text: "a pixel" },
        { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" }
      ])
      expect(Either.flip(outcomes[2]).pipe(Either.getOrThrow)).toBeInstanceOf(ToolError.ToolFailure)
    })))
})
