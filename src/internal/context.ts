/**
 * The call a fiber is working for, carried in a `FiberRef` so `Tool.progress`, `Tool.currentCall`,
 * `Recorder.write` and `Permission.request` need nothing in `R` and are no-ops outside a call. Fibers forked by a
 * handler inherit it, so progress from a child fiber reaches the same call.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import { globalValue } from "effect/GlobalValue"
import type * as Tracer from "effect/Tracer"
import { randomUUID } from "node:crypto"

/** Progress as a tool reports it. */
export interface Progress {
  readonly message?: string | undefined
  readonly progress?: number | undefined
  readonly total?: number | undefined
  readonly partial?: unknown
}

/** Behavioural hints, as in MCP; `undefined` means unstated, which is not the same as `false`. */
export interface Annotations {
  readonly title?: string | undefined
  readonly readOnly?: boolean | undefined
  readonly destructive?: boolean | undefined
  readonly idempotent?: boolean | undefined
  readonly openWorld?: boolean | undefined
}

export interface CallContext {
  readonly id: string
  readonly name: string
  readonly annotations: Annotations
  readonly report: (progress: Progress) => Effect.Effect<void>
  /** Where the call's idempotency key comes from, and its place there. */
  readonly keys: Keys
  readonly index: number
}

/**
 * The idempotency keys of the calls run from one place (a batch, one call), by the call's place there: minted once
 * per model call, so every run of its handler (a middleware that retries it, a resumed run) gets the same key. Read
 * only when a handler asks (`Tool.currentCall`), so calls that never ask cost nothing.
 */
export interface Keys {
  readonly of: (index: number) => string
}

/** Keys with nothing to be the same as across processes: a random UUID per call, minted when first read. */
export class FreshKeys implements Keys {
  private minted: Array<string> | undefined = undefined
  of(index: number): string {
    const minted = this.minted ??= []
    return minted[index] ??= randomUUID()
  }
}

export const currentCall: FiberRef.FiberRef<CallContext | undefined> = globalValue(
  Symbol.for("effect-agent-tools/currentCall"),
  () => FiberRef.unsafeMake<CallContext | undefined>(undefined)
)

/**
 * The tracer every runtime has unless another is installed; it exports nowhere. Spans cost about as much as a no-op
 * call, so they are made only when the runtime's tracer is another one.
 */
export const nativeTracer: Tracer.Tracer = Effect.runSync(Effect.tracer)
