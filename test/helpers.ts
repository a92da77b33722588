/**
 * Helpers the tests share, written once. A doc page's examples define their own (they are what a reader copies),
 * so the regions of `docs/*.test.ts` keep theirs; everything else imports from here.
 */
import { expect } from "@effect/vitest"
import type { Duration } from "effect"
import type { MetricPair } from "effect"
import { Effect, Either, Fiber, Metric, MetricState, TestClock, Tracer } from "effect"
import * as ChildProcess from "node:child_process"
import { ToolError, ToolResult } from "../src/index.js"

/** What the model reads for an outcome: the result's text parts, or the error as `Error: ...`. */
export const modelText = (outcome: Either.Either<ToolResult.ToolResult, ToolError.ToolError>): string =>
  Either.isRight(outcome) ? ToolResult.toText(outcome.right) : ToolError.toModelText(outcome.left)

/** Runs an effect that sleeps on Effect's clock to its end under `TestClock`, moving the clock by `advance`. */
export const withClock = <A, E, R>(effect: Effect.Effect<A, E, R>, advance: Duration.DurationInput = "1 hour") =>
  Effect.gen(function*() {
    const fiber = yield* Effect.fork(effect)
    yield* TestClock.adjust(advance)
    return yield* Fiber.join(fiber)
  })

/** A tracer that keeps every span it makes (the native tracer's spans, which record attributes and status). */
export const collectingTracer: Effect.Effect<{ readonly spans: Array<Tracer.Span>; readonly tracer: Tracer.Tracer }> =
  Effect.map(Effect.tracer, (native) => {
    const spans: Array<Tracer.Span> = []
    const tracer = Tracer.make({
      span: (...args) => {
        const span = native.span(...args)
        spans.push(span)
        return span
      },
      context: native.context
    })
    return { spans, tracer }
  })

/** Lets every fiber that can run, run: enough turns of the scheduler for a chain of wake-ups to settle. */
export const settle: Effect.Effect<void> = Effect.asVoid(Effect.repeatN(Effect.yieldNow(), 20))

const hasTags = (pair: MetricPair.MetricPair.Untyped, name: string, tags: Record<string, string>): boolean =>
  pair.metricKey.name === name
  && Object.entries(tags).every(([key, value]) =>
    pair.metricKey.tags.some((tag) => tag.key === key && tag.value === value)
  )
  && pair.metricKey.tags.length === Object.keys(tags).length

/** The metric of that name with exactly those tags, if it has ever been updated. */
export const metricTagged = (name: string, tags: Record<string, string>) =>
  Effect.map(Metric.snapshot, (pairs) => pairs.find((p) => hasTags(p, name, tags)))

/** `agent_tools_calls_total{tool, outcome}`, 0 when it has never been counted. */
export const callsTotal = (tool: string, outcome: string) =>
  Effect.map(metricTagged("agent_tools_calls_total", { tool, outcome }), (pair) => {
    if (pair === undefined) return 0
    expect(MetricState.isCounterState(pair.metricState)).toBe(true)
    return (pair.metricState as MetricState.MetricState.Counter<number>).count
  })

/** What a child process said, and how it ended. */
export interface Ran {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/**
 * Runs `node <script> ...args` without a terminal (stdin is a pipe closed after `input`), the way a model's shell or
 * a host runs a program; gives its exit code and output.
 */
export const runNode = (
  script: string,
  args: ReadonlyArray<string>,
  options: {
    readonly input?: string | undefined
    readonly cwd: string
    readonly env?: Record<string, string> | undefined
  }
) =>
  new Promise<Ran>((resolve, reject) => {
    const child = ChildProcess.spawn(process.execPath, [script, ...args], {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      stdio: ["pipe", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    child.on("error", reject)
    child.on("close", (code) => resolve({ code, stdout, stderr }))
    child.stdin.end(options.input ?? "")
  })
