/**
 * Durable records written during and after a call.
 *
 * A tool that starts something it must not lose track of (a process group right after spawning, a temporary
 * directory right after creating it, a remote job id) writes a record the moment it has the handle:
 * `Recorder.write` returns only once the record is durable, so if the process dies mid-call a recovering host
 * still finds the handle beside the call. A result's `details` that is {@link Recordable} is recorded once more
 * when the call ends. With no `Recorder` service installed `write` does nothing, so tools call it unconditionally
 * and tests install nothing. In a journaled run (`Journal`) every record goes to the run's journal first (then to
 * the installed recorder, if any), and a resumed run hands the records of a dead host to their namespace's cleanup
 * handler (`Journal.Cleanup`): the namespace says who reads a record, and how.
 *
 * Records are Schema-backed: {@link make} encodes a value with its schema, {@link decode} reads it back.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Layer from "effect/Layer"
import * as ParseResult from "effect/ParseResult"
import * as Predicate from "effect/Predicate"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import { currentCall } from "./internal/context.js"

/**
 * @since 0.1.0
 * @category type ids
 */
export const TypeId: unique symbol = Symbol.for("effect-agent-tools/Record")

/**
 * @since 0.1.0
 * @category type ids
 */
export type TypeId = typeof TypeId

/**
 * One record: a namespace (who wrote it and how to read it, e.g. `"bash/process"`) and its data as JSON.
 *
 * @since 0.1.0
 * @category models
 */
export class Record extends Schema.Class<Record>("effect-agent-tools/Record")({
  namespace: Schema.String,
  data: Schema.Unknown
}) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
}

/**
 * A value that can be written as a record (a `Record`, or a result's `details` built with {@link make}).
 *
 * @since 0.1.0
 * @category models
 */
export type Recordable = Record

/**
 * Whether a value is recordable; the executor records a result's `details` when it is.
 *
 * @example
 * ```ts
 * import { Recorder } from "effect-agent-tools"
 *
 * console.log(Recorder.isRecordable({ pid: 1 })) // false
 * ```
 *
 * @since 0.1.0
 * @category guards
 */
export const isRecordable = (u: unknown): u is Recordable => Predicate.hasProperty(u, TypeId)

/**
 * A record could not be made durable (or, with an empty `namespace`, the recorder itself could not start). A tool
 * that gets this should not go on to the side effect the record was meant to cover.
 *
 * @since 0.1.0
 * @category errors
 */
export class RecordError extends Schema.TaggedError<RecordError>("effect-agent-tools/RecordError")("RecordError", {
  namespace: Schema.String,
  reason: Schema.String
}) {
  /** @since 0.1.0 */
  override get message(): string {
    return this.namespace === ""
      ? `the recorder failed: ${this.reason}`
      : `the record ${JSON.stringify(this.namespace)} could not be written: ${this.reason}`
  }
}

/**
 * A record as the recorder receives it: which call it belongs to, when it was written, and the record.
 *
 * @since 0.1.0
 * @category models
 */
export interface Entry {
  readonly callId: string
  readonly tool: string
  /** `"during"` for `Recorder.write` inside a handler, `"end"` for a result's details. */
  readonly phase: "during" | "end"
  readonly record: Record
}

/** The recorder when none is provided. */
const recordNothing = { write: (): Effect.Effect<void, RecordError> => Effect.void }

/**
 * The service that makes records durable: a journal, a database, a JSON-lines file. A `Context.Reference`: when
 * none is provided, the default records nothing (and calls skip looking at their results for details).
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { Recorder } from "effect-agent-tools"
 *
 * const ToConsole = Layer.succeed(Recorder.Recorder, {
 *   write: (entry) => Effect.sync(() => console.error(JSON.stringify(entry)))
 * })
 * ```
 *
 * @since 0.1.0
 * @category services
 */
export class Recorder extends Context.Reference<Recorder>()("effect-agent-tools/Recorder", {
  defaultValue: (): { readonly write: (entry: Entry) => Effect.Effect<void, RecordError> } => recordNothing
}) {}

/**
 * A record of a value, encoded with its schema so {@link decode} can read it back.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Recorder } from "effect-agent-tools"
 *
 * const Spawned = Schema.Struct({ pgid: Schema.Int, startedAt: Schema.Date })
 * const record = Recorder.makeRecord("bash/process", Spawned, { pgid: 4242, startedAt: new Date(0) })
 * console.log(record.data) // { pgid: 4242, startedAt: "1970-01-01T00:00:00.000Z" }
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeRecord = <A, I>(namespace: string, schema: Schema.Schema<A, I, never>, value: A): Record =>
  new Record({ namespace, data: Schema.encodeSync(schema)(value) })

/**
 * Reads a record back with the schema it was written with.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Recorder } from "effect-agent-tools"
 *
 * const Spawned = Schema.Struct({ pgid: Schema.Int })
 * const record = Recorder.makeRecord("bash/process", Spawned, { pgid: 4242 })
 * const value = Recorder.decode(record, Spawned) // Either.right({ pgid: 4242 })
 * ```
 *
 * @since 0.1.0
 * @category conversions
 */
export const decode = <A, I>(record: Record, schema: Schema.Schema<A, I, never>) =>
  ParseResult.decodeUnknownEither(schema)(record.data)

/**
 * Writes a record for the current call and returns once it is durable. A no-op with no `Recorder` installed or
 * outside a call.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { Recorder } from "effect-agent-tools"
 *
 * const Spawned = Schema.Struct({ pgid: Schema.Int })
 * const afterSpawn = (pgid: number) => Recorder.write(Recorder.makeRecord("bash/process", Spawned, { pgid }))
 * ```
 *
 * @since 0.1.0
 * @category writing
 */
export const write = (record: Record): Effect.Effect<void, RecordError> =>
  Effect.flatMap(Recorder, (recorder) =>
    Effect.flatMap(FiberRef.get(currentCall), (call) =>
      call === undefined
        ? Effect.void
        : recorder.write({ callId: call.id, tool: call.name, phase: "during", record })))

/**
 * A recorder that appends every entry to the given `Ref`; for tests and for hosts that forward records elsewhere.
 *
 * @example
 * ```ts
 * import { Effect, Ref } from "effect"
 * import { Recorder } from "effect-agent-tools"
 *
 * const program = Effect.gen(function*() {
 *   const entries = yield* Ref.make<ReadonlyArray<Recorder.Entry>>([])
 *   // ... run calls with Effect.provide(Recorder.layerMemory(entries)), then:
 *   return yield* Ref.get(entries)
 * })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory = (entries: Ref.Ref<ReadonlyArray<Entry>>): Layer.Layer<Recorder> =>
  Layer.succeed(Recorder, { write: (entry) => Ref.update(entries, (all) => [...all, entry]) })

/**
 * The JSON form of an entry, one line of a journal: `{ callId, tool, phase, namespace, data }`.
 *
 * @example
 * ```ts
 * import { Recorder } from "effect-agent-tools"
 *
 * const line = Recorder.toJsonLine({
 *   callId: "call_1",
 *   tool: "bash",
 *   phase: "during",
 *   record: new Recorder.Record({ namespace: "bash/process", data: { pgid: 1 } })
 * })
 * ```
 *
 * @since 0.1.0
 * @category conversions
 */
export const toJsonLine = (entry: Entry): string =>
  JSON.stringify({
    callId: entry.callId,
    tool: entry.tool,
    phase: entry.phase,
    namespace: entry.record.namespace,
    data: entry.record.data
  })

const encoder = new TextEncoder()

/**
 * A durable journal in a JSON-lines file: each entry is appended as one line ({@link toJsonLine}) and the file is
 * synced to disk before `write` returns. Writes are serialised, so lines never interleave. The file stays open for
 * the layer's lifetime.
 *
 * @example
 * ```ts
 * import { NodeFileSystem } from "@effect/platform-node"
 * import { Layer } from "effect"
 * import { Recorder } from "effect-agent-tools"
 *
 * const Journal = Recorder.layerJsonLines("/var/lib/agent/records.jsonl").pipe(Layer.provide(NodeFileSystem.layer))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerJsonLines = (
  path: string
): Layer.Layer<Recorder, RecordError, FileSystem.FileSystem> =>
  Layer.scoped(
    Recorder,
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const file = yield* fs.open(path, { flag: "a" }).pipe(
        Effect.mapError((error) => new RecordError({ namespace: "", reason: error.message }))
      )
      const lock = yield* Effect.makeSemaphore(1)
      return {
        write: (entry: Entry) =>
          lock.withPermits(1)(
            Effect.zipRight(file.writeAll(encoder.encode(toJsonLine(entry) + "\n")), file.sync).pipe(
              Effect.mapError((error) => new RecordError({ namespace: entry.record.namespace, reason: error.message }))
            )
          )
      }
    })
  )
