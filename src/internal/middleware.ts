/**
 * The built-in middleware's bodies: logging. (The output budget's is `outputBudget.ts`; how middleware is put
 * around a call is the pipeline's, `call.ts`.)
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as LogLevel from "effect/LogLevel"
import type * as Executor from "../Executor.js"
import type * as Middleware from "../Middleware.js"

/** The level a call's outcome is logged at: a success is news, a failure a warning, a defect an error. */
const levelOf = (tag: string): LogLevel.LogLevel =>
  tag === "Success" ? LogLevel.Info : tag === "ToolDefect" ? LogLevel.Error : LogLevel.Warning

const logCall = (
  call: Middleware.Call,
  exit: Exit.Exit<Executor.Outcome>,
  durationMillis: number
): Effect.Effect<void> => {
  const outcome = Exit.isSuccess(exit) ? exit.value : undefined
  const tag = outcome === undefined ? "ToolInterrupted" : Either.isRight(outcome) ? "Success" : outcome.left._tag
  const annotations: Record<string, unknown> = {
    "tool.name": call.name,
    "tool.call_id": call.id,
    "tool.outcome": tag,
    "tool.duration_ms": durationMillis
  }
  if (outcome !== undefined && Either.isLeft(outcome)) annotations["tool.error"] = outcome.left.message
  return Effect.annotateLogs(Effect.logWithLevel(levelOf(tag), "tool call"), annotations)
}

export const logging: Middleware.Middleware = (call, next) =>
  Effect.flatMap(
    Clock.currentTimeMillis,
    (start) =>
      Effect.onExit(next, (exit) => Effect.flatMap(Clock.currentTimeMillis, (end) => logCall(call, exit, end - start)))
  )
