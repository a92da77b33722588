/**
 * The executor's rules for calls that arrive one at a time over a long life (an MCP server's sessions, a stdio
 * provider's requests), rather than as one batch.
 *
 * Arrival order stands in for the model's order: a call waits for the latest earlier call on each of its resource
 * keys (so calls from every client on one key run one after another, in the order they arrived, and waits only
 * point backwards: no deadlock), then for one of `maxParallel` slots; a `sequential` tool takes every slot, so
 * nothing else runs while it does. Arguments are checked before any of that. Interrupting a call's fiber anywhere
 * (while it waits or while it runs) releases its place at once.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FiberId from "effect/FiberId"
import type * as Tool from "../Tool.js"
import { KernelId } from "../Tool.js"
import { ToolNotFound } from "../ToolError.js"
import type * as Toolkit from "../Toolkit.js"
import type { Progress } from "./context.js"
import type { Outcome, ToolCall } from "./executor.js"
import { DEFAULT_MAX_PARALLEL } from "./executor.js"
import * as Internal from "./tool.js"

export interface Scheduler {
  /**
   * Runs one call under the shared rules. Never fails; interruption propagates (the caller decides what an
   * interrupted call answers, if anything).
   */
  readonly run: <T extends Tool.Any>(
    toolkit: Toolkit.Toolkit<T>,
    call: ToolCall,
    options?: {
      readonly onProgress?: ((progress: Progress) => Effect.Effect<void>) | undefined
      /** Called once the call has its turn and its slot, just before permission and the handler. */
      readonly onStart?: (() => Effect.Effect<void>) | undefined
    }
  ) => Effect.Effect<Outcome, never, Tool.Requirements<T>>
}

export const make = (options?: {
  readonly maxParallel?: number | undefined
  readonly timeout?: Duration.DurationInput | undefined
}): Effect.Effect<Scheduler> =>
  Effect.map(
    Effect.makeSemaphore(Math.max(1, Math.floor(options?.maxParallel ?? DEFAULT_MAX_PARALLEL))),
    (slots) => {
      const maxParallel = Math.max(1, Math.floor(options?.maxParallel ?? DEFAULT_MAX_PARALLEL))
      const timeout = options?.timeout === undefined ? undefined : Duration.decode(options.timeout)
      /** The latest call on each key; removed when that call is done and nothing came after it. */
      const tails = new Map<string, Deferred.Deferred<void>>()

      const run: Scheduler["run"] = (toolkit, call, runOptions) =>
        Effect.suspend(() => {
          const tool = toolkit.byName.get(call.name)
          if (tool === undefined) {
            return Effect.succeed(
              Either.left(new ToolNotFound({ tool: call.name, available: toolkit.tools.map((t) => t.name) }))
            )
          }
          const kernel = tool[KernelId]
          const checked = Internal.prepare(kernel, call.arguments)
          if (Either.isLeft(checked)) return Effect.succeed(Either.left(checked.left))
          const keys = Internal.resourcesOf(kernel, checked.right)
          if (Either.isLeft(keys)) return Effect.succeed(Either.left(keys.left))
          const params = checked.right

          // take our place on each key now, in arrival order
          const mine = Deferred.unsafeMake<void>(FiberId.none)
          const predecessors = new Set<Deferred.Deferred<void>>()
          for (const key of keys.right) {
            const previous = tails.get(key)
            if (previous !== undefined) predecessors.add(previous)
            tails.set(key, mine)
          }
          const leave = Effect.sync(() => {
            for (const key of keys.right) if (tails.get(key) === mine) tails.delete(key)
            Deferred.unsafeDone(mine, Effect.void)
          })

          const body = Effect.gen(function*() {
            if (runOptions?.onStart !== undefined) yield* runOptions.onStart()
            const refused = yield* Internal.askPermission(kernel, call.id, params)
            if (refused !== undefined) return Either.left(refused) as Outcome
            const outcome = yield* Internal.runHandler(kernel, call.id, params, {
              timeout,
              onProgress: runOptions?.onProgress
            })
            yield* Internal.recordDetails(call.id, kernel.name, outcome)
            return outcome
          })
          const inSlot = slots.withPermits(tool.sequential ? maxParallel : 1)(body)
          const afterTurn = predecessors.size === 0
            ? inSlot
            : Effect.zipRight(Effect.forEach(predecessors, Deferred.await, { discard: true }), inSlot)
          return Effect.ensuring(afterTurn, leave)
        })

      return { run }
    }
  )
