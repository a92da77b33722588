/**
 * StdioProvider.connect against a provider that attacks its host (test/fixtures/provider-hostile.mjs): a 600 MB
 * answer line, a header of 100,000 tools or with a 600 MB line, 20,000 lines of log on stdout. The host must stay
 * up with bounded memory, fail what the attack touches with a clear error, and keep its scope's guarantees. Real
 * processes, so `it.live`.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Either, Exit, Logger, Option, Scope } from "effect"
import { fileURLToPath } from "node:url"
import type { Tool, Toolkit } from "../src/index.js"
import { Executor, ToolError, ToolResult } from "../src/index.js"
import { groupAlive } from "../src/internal/process.js"
import * as ProcessTree from "../src/internal/processTree.js"
import * as StdioProvider from "../src/StdioProvider.js"

const HOSTILE = fileURLToPath(new URL("./fixtures/provider-hostile.mjs", import.meta.url))
const MIB = 1024 * 1024

const hostile = (mode: string, count: number, options: Partial<StdioProvider.ConnectOptions> = {}) =>
  StdioProvider.connect({ command: process.execPath, args: [HOSTILE, mode, String(count)], ...options })

const label = (...args: ReadonlyArray<string | number>) =>
  `stdio provider "${[process.execPath, HOSTILE, ...args].join(" ")}"`

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

const modelText = (outcome: Executor.Outcome): string =>
  Either.isRight(outcome) ? ToolResult.toText(outcome.right) : ToolError.toModelText(outcome.left)

const run = (kit: Toolkit.Toolkit<Tool.Tool<string>>, name: string, args: unknown = {}) =>
  Effect.map(Executor.run(kit, [{ id: "call", name, arguments: args }]), ([outcome]) => outcome)

const startError = <A>(exit: Exit.Exit<A, StdioProvider.StdioProviderError>): StdioProvider.StdioProviderError => {
  if (Exit.isSuccess(exit)) throw new Error("connect succeeded")
  return Option.getOrThrow(Cause.failureOption(exit.cause))
}

/** The highest resident set size of this process while `effect` runs, over what it was before, sampled. */
const rssGrowth = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const before = process.memoryUsage().rss
    let peak = before
    const sampler = setInterval(() => void (peak = Math.max(peak, process.memoryUsage().rss)), 10)
    const value = yield* Effect.ensuring(effect, Effect.sync(() => clearInterval(sampler)))
    return { value, growth: Math.max(peak, process.memoryUsage().rss) - before }
  })

/** Whether `pid` is alive and not a zombie. */
const alive = (pid: number): boolean => {
  const found = ProcessTree.info(pid)
  return found !== undefined && found.state !== "Z" && found.state !== "X"
}

const sessionOf = (pid: number): number | undefined => ProcessTree.info(pid)?.sid

const withLogs = <A, E, R>(f: (logs: Array<string>) => Effect.Effect<A, E, R>) => {
  const logs: Array<string> = []
  const logger = Logger.make(({ message }) =>
    void logs.push(Array.isArray(message) ? message.join(" ") : String(message))
  )
  return Effect.provide(f(logs), Logger.replace(Logger.defaultLogger, logger))
}

describe("StdioProvider.connect against a hostile provider", () => {
  it.live(
    "a 600 MB answer is dropped as it arrives: its call fails TooLarge, memory stays bounded, the session goes on, " +
      "and closing the scope runs its finalizers and ends the provider",
    () =>
      Effect.gen(function*() {
        const scope = yield* Scope.make()
        let finalized = false
        yield* Scope.addFinalizer(scope, Effect.sync(() => void (finalized = true)))
        const provider = yield* Scope.extend(hostile("huge", 600), scope)
        const kit = yield* provider.toolkit
        const started = Date.now()
        const { growth, value: outcome } = yield* rssGrowth(run(kit, "huge"))
        const millis = Date.now() - started
        const bytes = "{\"call_id\":\"1\",\"content\":\"".length + 600 * MIB + 2
        expect(modelText(outcome)).toBe(
          `Error: the answer of ${label("huge", 600)} is ${bytes} bytes, over the limit of 16 MiB for one line; ` +
            "ask for less at a time"
        )
        expect(Either.flip(outcome).pipe(Either.getOrThrow)).toMatchObject({
          _tag: "ToolFailure",
          error: { _tag: "StdioProviderError", reason: "TooLarge" }
        })
        // the whole line went through the host, and at most a chunk or two of it was held at once
        expect(growth).toBeLessThan(150 * MIB)
        if (process.env.BOUNDS_REPORT !== undefined) {
          process.stderr.write(`600 MB answer: ${millis} ms, RSS growth ${(growth / MIB).toFixed(1)} MiB\n`)
        }
        expect(modelText(yield* run(kit, "echo", { text: "still here" }))).toBe("still here")
        yield* Scope.close(scope, Exit.void)
        expect(finalized).toBe(true)
        expect(groupAlive(provider.pid)).toBe(false)
      }),
    60_000
  )

  it.live("a header line over maxLineBytes refuses the header without holding the line", () =>
    Effect.gen(function*() {
      const { growth, value: exit } = yield* rssGrowth(Effect.exit(Effect.scoped(hostile("long-header", 600))))
      const error = startError(exit)
      expect(error.reason).toBe("Header")
      expect(error.message).toMatch(
        new RegExp(
          `^${escape(label("long-header", 600))} sent a malformed header: line 1: it is \\d+ bytes, over the ` +
            "limit of 16 MiB for one line \\(maxLineBytes\\)$"
        )
      )
      expect(growth).toBeLessThan(150 * MIB)
    }), 60_000)

  it.live(
    "a header of more tools than maxTools is refused as soon as it passes the limit",
    () =>
      Effect.gen(function*() {
        const started = Date.now()
        const error = startError(yield* Effect.exit(Effect.scoped(hostile("tools", 100_000))))
        expect(Date.now() - started).toBeLessThan(5_000)
        expect(error.reason).toBe("Header")
        expect(error.message).toBe(
          `${label("tools", 100_000)} sent a malformed header: line 1001: it lists more than 1000 tools, the limit ` +
            "(maxTools)"
        )
        const small = yield* Effect.scoped(
          Effect.flatMap(hostile("tools", 5, { maxTools: 5 }), (provider) => provider.tools)
        )
        expect(small.map((tool) => tool.name)).toEqual(["tool_0", "tool_1", "tool_2", "tool_3", "tool_4"])
      }),
    30_000
  )

  it.live("the whole start, building the tools included, is under startTimeout", () =>
    Effect.gen(function*() {
      // 1,000 tools of 1,000 parameters each: read in a moment, seconds to check and build (schemas compile on first
      // use, so the size of each schema is what makes building slow)
      const started = Date.now()
      const error = startError(
        yield* Effect.exit(Effect.scoped(StdioProvider.connect({
          command: process.execPath,
          args: [HOSTILE, "tools", "1000", "1000"],
          startTimeout: "1 second"
        })))
      )
      // a second for the start, the rest for spawning and ending the process on a loaded machine: not the seconds
      // that compiling every schema takes
      expect(Date.now() - started).toBeLessThan(8_000)
      expect(error.reason).toBe("Timeout")
      // 40 MB of header: on a loaded machine the deadline finds it still reading (or not yet started), on a fast one
      // still building
      expect(error.message).toMatch(
        new RegExp(
          `^${escape(label("tools", 1000, 1000))} (did not start within 1s: its 1000 tools were still being read|` +
            "sent no ready line \\(an empty line after the tool definitions\\) within 1s(; it had sent \\d+ definition|$))"
        )
      )
    }), 30_000)

  it.live(
    "a process the provider started with setsid, orphaned when it exits, ends with the scope",
    () =>
      Effect.gen(function*() {
        let pid = 0
        yield* Effect.addFinalizer(() => Effect.sync(() => pid > 0 && alive(pid) && process.kill(pid, "SIGKILL")))
        yield* Effect.scoped(Effect.gen(function*() {
          const provider = yield* hostile("setsid", 0)
          pid = Number(modelText(yield* run(yield* provider.toolkit, "setsid")))
          expect(alive(pid)).toBe(true)
          // out of the provider's group and session (once setsid(1) has run): ending the group alone left it running
          for (let i = 0; i < 100 && sessionOf(pid) !== pid; i++) yield* Effect.sleep("10 millis")
          expect(sessionOf(pid)).toBe(pid)
        }))
        yield* Effect.sleep("100 millis")
        expect(alive(pid)).toBe(false)
      }).pipe(Effect.scoped),
    30_000
  )

  it.live(
    "20,000 lines of log on stdout make ten warnings and a count, not 20,000 warnings",
    () =>
      withLogs((logs) =>
        Effect.gen(function*() {
          yield* Effect.scoped(Effect.gen(function*() {
            const provider = yield* hostile("junk", 20_000)
            expect(modelText(yield* run(yield* provider.toolkit, "junk"))).toBe("done")
          }))
          const warnings = logs.filter((line) => line.startsWith("stdio provider: ignored"))
          expect(warnings.length).toBeLessThanOrEqual(12)
          expect(warnings.slice(0, 10)).toEqual(
            Array(10).fill(
              "stdio provider: ignored a line of stdout that is not JSON: \"DEBUG: a log line that belongs on stderr\""
            )
          )
          const counted = warnings.slice(10).map((line) =>
            Number(/^stdio provider: ignored (\d+) more lines/.exec(line)![1])
          )
          expect(counted.reduce((a, b) => a + b, 0)).toBe(20_000 - 10)
          expect(warnings.at(-1)).toMatch(
            /^stdio provider: ignored \d+ more lines of stdout that are not answers \(the first 10 were logged one by one; the rest are counted\)$/
          )
        })
      ),
    30_000
  )
})
