/**
 * Helpers the tests share, written once. A doc page's examples define their own (they are what a reader copies),
 * so the regions of `docs/*.test.ts` keep theirs; everything else imports from here.
 */
import type { Duration } from "effect"
import { Effect, Either, Fiber, TestClock, Tracer } from "effect"
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
