/**
 * A durable journal of agent runs: what a run must find again after its process died.
 *
 * A run writes, each durably before the step that depends on it: the run itself (its id, the fingerprint of its
 * toolkit, its options), every model step's response (so a resumed run does not ask the model again for a step it
 * has), every call's dispatch right before its handler runs (with the call's idempotency key and replay class),
 * every `Recorder.write` record, every permission decision, and every call's outcome. A write's Effect succeeds
 * only once the write is durable (committed, fsynced); writes from calls that start together share one
 * transaction (group commit), so durability costs one fsync per batch, not one per call.
 *
 * Three stores: {@link layerSqlite} (the embedded default, one file), {@link layerPg} (many hosts, one database)
 * and {@link layerMemory} (tests). The SQL stores create and migrate their own tables and refuse a schema written
 * by a newer version. `@effect/sql` and its drivers are optional peer dependencies, loaded only when their layer
 * is built.
 *
 * A run is owned by one host at a time through a lease ({@link Journal.Service.acquire}); a host can list the runs
 * whose lease expired and take one over ({@link Journal.Service.takeOver}): two hosts never own the same run, and
 * a host that lost its lease can no longer write to the run.
 *
 * The journal is written by a run, not by hand: provide a journal layer to `Agent.run` / `Agent.stream` with a
 * `runId` (or to `Executor.run` with a `runId`) and the run is journaled, and resumed when the journal has it.
 * What a resumed run finds of a call that was running when its process died was left by a dead host: the
 * {@link Cleanup} handlers end what its records name.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Cleanups from "./internal/journal/cleanup.js"
import * as Codec from "./internal/journal/codec.js"
import type * as Permission from "./Permission.js"
import * as Recorder from "./Recorder.js"
import type * as Tool from "./Tool.js"
import type * as ToolError from "./ToolError.js"
import * as Toolkit from "./Toolkit.js"
import type * as ToolResult from "./ToolResult.js"

// -------------------------------------------------------------------------------------------------------------------
// errors
// -------------------------------------------------------------------------------------------------------------------

/**
 * Why a journal operation failed:
 *
 * - `Unavailable`: the store cannot be reached or written (a database that is down or went away, a file that
 *   cannot be opened, a lock held by another process past the busy timeout, a journal closed with its layer, a
 *   missing optional peer dependency).
 * - `Corrupt`: the store is not a journal (a file that is not SQLite) or holds data this version cannot read.
 * - `NewerSchema`: the store was migrated by a newer version of this library; nothing was changed.
 * - `Full`: the disk (or the database's size limit) is full.
 * - `Conflict`: the run is owned by another lease (or by another fiber of this host).
 * - `UnknownRun`: no run by that id was begun.
 * - `Invalid`: the write cannot be stored: it is over the layer's `maxWriteBytes`, or its outcome does not encode
 *   (a content part that is not one of MCP's shapes); or a layer's option is not usable (a Postgres schema name
 *   that is not a plain identifier).
 *
 * @since 0.1.0
 * @category errors
 */
export type JournalErrorReason = typeof JournalErrorReason.Type

/**
 * @since 0.1.0
 * @category errors
 */
export const JournalErrorReason = Schema.Literal(
  "Unavailable",
  "Corrupt",
  "NewerSchema",
  "Full",
  "Conflict",
  "UnknownRun",
  "Invalid"
)

/**
 * A journal operation failed. A write that fails with it was not made durable; a write that succeeded is. A
 * failure is always this typed error, never a defect: disk full, a database gone mid-run, a file that is not a
 * journal.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Journal } from "effect-agent-tools"
 *
 * const program = Journal.runs().pipe(
 *   Effect.catchTag("JournalError", (error) =>
 *     error.reason === "Unavailable" ? Effect.succeed([]) : Effect.fail(error))
 * )
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class JournalError extends Schema.TaggedError<JournalError>("effect-agent-tools/JournalError")(
  "JournalError",
  {
    reason: JournalErrorReason,
    message: Schema.String,
    /** The run the operation was for, when it was for one. */
    runId: Schema.optional(Schema.String),
    /** The underlying error (a driver's error, a parse error), for logs. */
    cause: Schema.optional(Schema.Unknown)
  }
) {}

// -------------------------------------------------------------------------------------------------------------------
// models
// -------------------------------------------------------------------------------------------------------------------

/**
 * What running a call again may do, as its tool states it:
 *
 * - `"safe"`: running it again has no effect beyond the first run (a read, a pure computation);
 * - `"keyed"`: the tool passes `Tool.currentCall`'s idempotency key to what it changes, and a second call with a
 *   completed call's key has no further effect;
 * - `"unknown"` (the default): nothing is promised; a call that may have run is not run again.
 *
 * @since 0.1.0
 * @category models
 */
export const Replay = Schema.Literal("safe", "keyed", "unknown")

/**
 * @since 0.1.0
 * @category models
 */
export type Replay = typeof Replay.Type

/**
 * Where a run stands: `"running"` from {@link Journal.Service.begin} until {@link Journal.Service.end} says how it
 * ended.
 *
 * @since 0.1.0
 * @category models
 */
export const RunStatus = Schema.Literal("running", "completed", "failed", "interrupted")

/**
 * @since 0.1.0
 * @category models
 */
export type RunStatus = typeof RunStatus.Type

/**
 * Who holds a run's lease, and until when (the database's clock for Postgres, the host's for SQLite).
 *
 * @since 0.1.0
 * @category models
 */
export class LeaseHolder extends Schema.Class<LeaseHolder>("effect-agent-tools/Journal/LeaseHolder")({
  owner: Schema.String,
  expiresAt: Schema.Date
}) {}

/**
 * A run as journaled.
 *
 * - `definitionsHash` and `tools`: the fingerprint of the toolkit the run began with ({@link fingerprint}), so a
 *   resumed run can say which tool changed;
 * - `options`: the run's options, as JSON;
 * - `lease`: the last lease holder, if the run was ever leased (its `expiresAt` is in the past once released).
 *
 * @since 0.1.0
 * @category models
 */
export class Run extends Schema.Class<Run>("effect-agent-tools/Journal/Run")({
  runId: Schema.String,
  definitionsHash: Schema.String,
  tools: Schema.Record({ key: Schema.String, value: Schema.String }),
  options: Schema.Unknown,
  status: RunStatus,
  createdAt: Schema.Date,
  updatedAt: Schema.Date,
  lease: Schema.optionalWith(LeaseHolder, { as: "Option" })
}) {}

/**
 * One model step: the model's response, exactly as it was journaled (JSON), so a resumed run does not ask again.
 *
 * @since 0.1.0
 * @category models
 */
export class Step extends Schema.Class<Step>("effect-agent-tools/Journal/Step")({
  runId: Schema.String,
  step: Schema.Int,
  response: Schema.Unknown,
  at: Schema.Date
}) {}

/**
 * That a call's handler was started: its idempotency key and replay class at the time, how many times it was
 * dispatched (more than 1 after a resumed run ran it again) and when it last was.
 *
 * @since 0.1.0
 * @category models
 */
export class CallDispatch extends Schema.Class<CallDispatch>("effect-agent-tools/Journal/CallDispatch")({
  idempotencyKey: Schema.String,
  replay: Replay,
  attempts: Schema.Int,
  at: Schema.Date
}) {}

/**
 * How a call ended, as the executor gave it: `Either<ToolResult, ToolError>`. A result's `details` and a
 * `ToolFailure`'s `error` come back as their JSON, not as the class instances they were.
 *
 * @since 0.1.0
 * @category models
 */
export class CallOutcome extends Schema.Class<CallOutcome>("effect-agent-tools/Journal/CallOutcome")({
  outcome: Codec.Outcome,
  at: Schema.Date
}) {}

/**
 * One call of a run: the model's call (`index` its position in the step, `arguments` as the model sent them),
 * whether its handler was started (`dispatch`) and how it ended (`outcome`). A call that never ran (an unknown
 * tool, invalid arguments, a denial) has an outcome and no dispatch; a call that was running when its process
 * died has a dispatch and no outcome.
 *
 * @since 0.1.0
 * @category models
 */
export class Call extends Schema.Class<Call>("effect-agent-tools/Journal/Call")({
  runId: Schema.String,
  step: Schema.Int,
  index: Schema.Int,
  callId: Schema.String,
  tool: Schema.String,
  arguments: Schema.Unknown,
  dispatch: Schema.optionalWith(CallDispatch, { as: "Option" }),
  outcome: Schema.optionalWith(CallOutcome, { as: "Option" })
}) {}

/**
 * A record a call wrote (`Recorder.write`, phase `"during"`) or its result's recordable `details` (`"end"`), in the
 * order they were written.
 *
 * @since 0.1.0
 * @category models
 */
export class CallRecord extends Schema.Class<CallRecord>("effect-agent-tools/Journal/CallRecord")({
  runId: Schema.String,
  step: Schema.Int,
  callId: Schema.String,
  tool: Schema.String,
  phase: Schema.Literal("during", "end"),
  record: Recorder.Record,
  at: Schema.Date
}) {}

/**
 * A permission decision taken for a call, in the order they were taken; a resumed run applies it instead of
 * asking again.
 *
 * @since 0.1.0
 * @category models
 */
export class CallDecision extends Schema.Class<CallDecision>("effect-agent-tools/Journal/CallDecision")({
  runId: Schema.String,
  step: Schema.Int,
  callId: Schema.String,
  tool: Schema.String,
  action: Schema.String,
  description: Schema.String,
  decision: Schema.Union(
    Schema.TaggedStruct("Allow", {}),
    Schema.TaggedStruct("Deny", { reason: Schema.UndefinedOr(Schema.String) })
  ),
  at: Schema.Date
}) {}

// -------------------------------------------------------------------------------------------------------------------
// what a run writes
// -------------------------------------------------------------------------------------------------------------------

/**
 * Which call of which run: a call id is unique within its step.
 *
 * @since 0.1.0
 * @category writing
 */
export interface CallKey {
  readonly runId: string
  readonly step: number
  readonly callId: string
}

/**
 * A run to begin: its id, the fingerprint of its toolkit ({@link fingerprint}) and its options (any JSON).
 *
 * @since 0.1.0
 * @category writing
 */
export interface NewRun {
  readonly runId: string
  readonly definitionsHash: string
  readonly tools?: Readonly<Record<string, string>> | undefined
  readonly options?: unknown
}

/**
 * What {@link Journal.Service.begin} gives: the run as journaled, and whether it already existed (a resumed run
 * keeps its first fingerprint and options: compare them with the new ones).
 *
 * @since 0.1.0
 * @category writing
 */
export interface Begun {
  readonly run: Run
  readonly resumed: boolean
}

/**
 * A model step's response, any JSON (the provider's response or the transcript's new assistant turn).
 *
 * @since 0.1.0
 * @category writing
 */
export interface StepEntry {
  readonly runId: string
  readonly step: number
  readonly response: unknown
}

/**
 * A call whose handler is about to run. Written before the handler starts: a call with a dispatch and no outcome
 * may have had its effect.
 *
 * @since 0.1.0
 * @category writing
 */
export interface DispatchEntry extends CallKey {
  readonly index: number
  readonly tool: string
  /** As the model sent them: the raw JSON string, or an already-parsed value. */
  readonly arguments: unknown
  /** {@link idempotencyKey} of the call, unless the host mints its own. */
  readonly idempotencyKey: string
  readonly replay: Replay
}

/**
 * A record written during a call, or a result's details at its end.
 *
 * @since 0.1.0
 * @category writing
 */
export interface RecordEntry extends CallKey {
  readonly tool: string
  readonly phase: "during" | "end"
  readonly record: Recorder.Record
}

/**
 * A permission decision for a call.
 *
 * @since 0.1.0
 * @category writing
 */
export interface DecisionEntry extends CallKey {
  readonly tool: string
  readonly action: string
  readonly description: string
  readonly decision: Permission.Decision
}

/**
 * How a call ended. Also for calls that never ran (an unknown tool, invalid arguments, a denial).
 *
 * @since 0.1.0
 * @category writing
 */
export interface OutcomeEntry extends CallKey {
  readonly index: number
  readonly tool: string
  readonly arguments: unknown
  readonly outcome: Either.Either<ToolResult.ToolResult, ToolError.ToolError>
}

/**
 * A run's lease, held until the scope it was taken in closes (then released: another host may take the run over at
 * once). It is renewed in the background while held; `lost` fails if it could not be (another host took the run
 * after this one stalled past the lease's time, or the store stayed unreachable that long). From then on the
 * journal refuses this host's writes to the run with `Conflict`, so a run that lost its lease cannot dispatch
 * another call: race the run against `lost`.
 *
 * @since 0.1.0
 * @category leases
 */
export interface Lease {
  readonly run: Run
  readonly owner: string
  /** Never succeeds; fails with the reason once the lease is lost. */
  readonly lost: Effect.Effect<never, JournalError>
}

// -------------------------------------------------------------------------------------------------------------------
// the service
// -------------------------------------------------------------------------------------------------------------------

/**
 * How many runs {@link Journal.Service.runs} and {@link Journal.Service.expired} give at most, unless told.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_LIST_LIMIT = 100

/**
 * @since 0.1.0
 * @category models
 */
export interface ListOptions {
  readonly status?: RunStatus | undefined
  /** At most this many runs (a whole number; below 0 counts as 0), the most recently updated first. Default {@link DEFAULT_LIST_LIMIT}. */
  readonly limit?: number | undefined
}

/**
 * The journal service.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Journal } from "effect-agent-tools"
 *
 * const program = Effect.gen(function*() {
 *   const journal = yield* Journal.Journal
 *   yield* journal.begin({ runId: "run-1", definitionsHash: "none" })
 *   yield* journal.step({ runId: "run-1", step: 0, response: { role: "assistant", content: "hi" } })
 *   return yield* journal.steps("run-1")
 * }).pipe(Effect.provide(Journal.layerMemory))
 * ```
 *
 * @since 0.1.0
 * @category services
 */
export class Journal extends Context.Tag("effect-agent-tools/Journal")<Journal, Journal.Service>() {}

/**
 * @since 0.1.0
 * @category services
 */
export declare namespace Journal {
  /**
   * What a journal does. Every write returns once it is durable, or fails with `JournalError` and is not; writes
   * are ordered as they were made and idempotent where a retry could repeat them (a second response for a step, a
   * second outcome for a call: the first stays). Writes to a run leased by another host fail with `Conflict`.
   *
   * @since 0.1.0
   * @category services
   */
  export interface Service {
    /** The id this journal's leases are held under: one per layer, unique across hosts. */
    readonly owner: string
    /** Journals a new run, or gives the existing one (`resumed: true`) unchanged. */
    readonly begin: (run: NewRun) => Effect.Effect<Begun, JournalError>
    /** Says how the run ended. */
    readonly end: (runId: string, status: Exclude<RunStatus, "running">) => Effect.Effect<void, JournalError>
    readonly step: (entry: StepEntry) => Effect.Effect<void, JournalError>
    /** Before the handler runs; a second dispatch of the same call counts one more attempt. */
    readonly dispatch: (entry: DispatchEntry) => Effect.Effect<void, JournalError>
    readonly record: (entry: RecordEntry) => Effect.Effect<void, JournalError>
    readonly decision: (entry: DecisionEntry) => Effect.Effect<void, JournalError>
    readonly outcome: (entry: OutcomeEntry) => Effect.Effect<void, JournalError>
    /**
     * Takes the run's lease until the scope closes: fails with `Conflict` while another host's lease is live (or
     * another fiber of this host holds it), `UnknownRun` if the run was never begun.
     */
    readonly acquire: (runId: string) => Effect.Effect<Lease, JournalError, Scope.Scope>
    /** Runs still `running` that no live lease holds (it expired, was released, or was never taken). */
    readonly expired: (options?: { readonly limit?: number | undefined }) => Effect.Effect<
      ReadonlyArray<Run>,
      JournalError
    >
    /**
     * Takes over one run from {@link expired} (the longest expired first), with row locks that let two hosts
     * taking over at once never get the same run; `None` when there is nothing to take.
     */
    readonly takeOver: () => Effect.Effect<Option.Option<Lease>, JournalError, Scope.Scope>
    readonly runs: (options?: ListOptions) => Effect.Effect<ReadonlyArray<Run>, JournalError>
    readonly run: (runId: string) => Effect.Effect<Option.Option<Run>, JournalError>
    /** In step order. */
    readonly steps: (runId: string) => Effect.Effect<ReadonlyArray<Step>, JournalError>
    /** By step, then by position in the step. */
    readonly calls: (runId: string) => Effect.Effect<ReadonlyArray<Call>, JournalError>
    /** In the order they were written. */
    readonly records: (runId: string, callId?: string) => Effect.Effect<ReadonlyArray<CallRecord>, JournalError>
    /** In the order they were taken. */
    readonly decisions: (runId: string, callId?: string) => Effect.Effect<ReadonlyArray<CallDecision>, JournalError>
  }
}

// -------------------------------------------------------------------------------------------------------------------
// options and defaults
// -------------------------------------------------------------------------------------------------------------------

/**
 * How long a lease lasts without renewal: a host that dies holds its runs this long at most. Renewed every third
 * of it.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_LEASE_TTL: Duration.DurationInput = "15 seconds"

/**
 * How many writes may wait for their transaction; more writers wait for room (back-pressure), so a store slower
 * than its writers bounds memory instead of growing a queue.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_MAX_PENDING = 4096

/**
 * How many writes one transaction takes at most.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_MAX_BATCH = 512

/**
 * The largest write (its JSON) a journal takes: a larger one fails with `Invalid` and is not written.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_MAX_WRITE_BYTES = 16 * 1024 * 1024

/**
 * The version of the tables this library writes. A store migrated past it is refused with `NewerSchema`.
 *
 * @since 0.1.0
 * @category constants
 */
export const SCHEMA_VERSION = 1

/**
 * What every journal layer takes.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Default {@link DEFAULT_LEASE_TTL}. */
  readonly leaseTtl?: Duration.DurationInput | undefined
  /** Default {@link DEFAULT_MAX_PENDING}. */
  readonly maxPending?: number | undefined
  /** Default {@link DEFAULT_MAX_BATCH}. */
  readonly maxBatch?: number | undefined
  /** Default {@link DEFAULT_MAX_WRITE_BYTES}. */
  readonly maxWriteBytes?: number | undefined
}

/**
 * The SQLite journal: one file (created if missing, with its `-wal` and `-shm` beside it), in WAL mode with
 * `synchronous = FULL`, so a committed write survives a power cut.
 *
 * @since 0.1.0
 * @category models
 */
export interface SqliteOptions extends Options {
  readonly filename: string
  /** How long a write waits for another process's lock on the file before failing `Unavailable`. Default 5 s. */
  readonly busyTimeout?: Duration.DurationInput | undefined
}

/**
 * The Postgres journal: a connection (a `url`, or its parts) and the schema that holds the tables.
 *
 * @since 0.1.0
 * @category models
 */
export interface PgOptions extends Options {
  readonly url?: string | Redacted.Redacted | undefined
  readonly host?: string | undefined
  readonly port?: number | undefined
  readonly database?: string | undefined
  readonly username?: string | undefined
  readonly password?: string | Redacted.Redacted | undefined
  readonly ssl?: boolean | undefined
  /** The Postgres schema of the journal's tables, created if missing. Default `public`. */
  readonly schema?: string | undefined
  /** How long the layer waits for the database at start before failing `Unavailable`. Default 5 s. */
  readonly connectTimeout?: Duration.DurationInput | undefined
  /** Default 10. */
  readonly maxConnections?: number | undefined
  /** Shown in `pg_stat_activity`. Default `effect-agent-tools/journal`. */
  readonly applicationName?: string | undefined
}

// -------------------------------------------------------------------------------------------------------------------
// layers
// -------------------------------------------------------------------------------------------------------------------

/**
 * A journal in memory, for tests: the same rules as the SQL stores (leases, fencing, idempotent writes, group
 * commit), with lease times from Effect's `Clock` (so `TestClock` moves them), and nothing survives the layer.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Journal } from "effect-agent-tools"
 *
 * const runs = Journal.runs().pipe(Effect.provide(Journal.layerMemory))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<Journal> = Layer.unwrapEffect(
  // the implementation imports this module's classes: loading it when the layer is built keeps the graph acyclic
  Effect.map(Effect.promise(() => import("./internal/journal/memory.js")), (memory) => memory.layer({}))
)

/**
 * The SQLite journal (see {@link SqliteOptions}), on `@effect/sql-sqlite-node` (better-sqlite3): the embedded
 * default for one host. Fails to build with `Corrupt` for a file that is not SQLite, `NewerSchema` for a journal
 * from a newer version, `Unavailable` when the file cannot be opened or the optional peers are not installed
 * (`npm install @effect/sql@0.52 @effect/sql-sqlite-node@0.53`).
 *
 * Leases work as on Postgres, between the processes of one host (SQLite's file lock makes each lease update
 * atomic); the file must not be shared between hosts over a network file system.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Journal } from "effect-agent-tools"
 *
 * const runs = Journal.runs().pipe(Effect.provide(Journal.layerSqlite({ filename: "agent-journal.db" })))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerSqlite = (options: SqliteOptions): Layer.Layer<Journal, JournalError> =>
  Layer.unwrapEffect(
    Effect.map(
      loadPeer(() => import("./internal/journal/sqlite.js"), "@effect/sql-sqlite-node@0.53"),
      (sqlite) => sqlite.layer(options)
    )
  )

/**
 * The Postgres journal (see {@link PgOptions}), on `@effect/sql-pg`: many hosts, one database, each run leased to
 * one host at a time. Fails to build with `Unavailable` when the database cannot be reached within
 * `connectTimeout` or the optional peers are not installed (`npm install @effect/sql@0.52 @effect/sql-pg@0.53`),
 * `NewerSchema` for tables from a newer version.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Journal } from "effect-agent-tools"
 *
 * const runs = Journal.runs().pipe(
 *   Effect.provide(Journal.layerPg({ url: "postgres://agents@db.internal/agents", schema: "journal" }))
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerPg = (options: PgOptions): Layer.Layer<Journal, JournalError> =>
  Layer.unwrapEffect(
    Effect.map(
      loadPeer(() => import("./internal/journal/pg.js"), "@effect/sql-pg@0.53"),
      (pg) => pg.layer(options)
    )
  )

const loadPeer = <M>(load: () => Promise<M>, driver: string): Effect.Effect<M, JournalError> =>
  Effect.tryPromise({
    try: load,
    catch: (cause) =>
      new JournalError({
        reason: "Unavailable",
        message: `the journal's store could not be loaded (install its optional peer dependencies: ` +
          `npm install @effect/sql@0.52 ${driver}): ${cause instanceof Error ? cause.message : String(cause)}`,
        cause
      })
  })

// -------------------------------------------------------------------------------------------------------------------
// keys and fingerprints
// -------------------------------------------------------------------------------------------------------------------

/**
 * The idempotency key of a model call: minted from the run id, the step and the call id, so the same call has the
 * same key in every process and on every re-run, with nothing to look up. A UUID (RFC 9562 version 8, from
 * SHA-256), the one shape every API that takes idempotency keys accepts.
 *
 * @example
 * ```ts
 * import { Journal } from "effect-agent-tools"
 *
 * const key = Journal.idempotencyKey({ runId: "run-1", step: 0, callId: "call_1" })
 * console.log(key === Journal.idempotencyKey({ runId: "run-1", step: 0, callId: "call_1" })) // true
 * ```
 *
 * @since 0.1.0
 * @category keys
 */
export const idempotencyKey: (call: CallKey) => string = Codec.idempotencyKey

/**
 * The fingerprint of a toolkit: the SHA-256 of each tool's MCP definition (name, title, description, schemas,
 * annotations), by name, and one hash over them all. Give it to {@link Journal.Service.begin}; a resumed run
 * compares it with its toolkit's to say which tools changed.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { Journal, Tool, Toolkit } from "effect-agent-tools"
 *
 * const Echo = Tool.make("echo", {
 *   description: "Echo the text",
 *   parameters: { text: Schema.String },
 *   handler: ({ text }) => Effect.succeed(text)
 * })
 * const { definitionsHash, tools } = Journal.fingerprint(Toolkit.make(Echo))
 * ```
 *
 * @since 0.1.0
 * @category keys
 */
export const fingerprint = (
  toolkit: Toolkit.Toolkit<Tool.Any>
): { readonly definitionsHash: string; readonly tools: Readonly<Record<string, string>> } =>
  Codec.fingerprint(Toolkit.definitions(toolkit, "mcp"))

// -------------------------------------------------------------------------------------------------------------------
// accessors
// -------------------------------------------------------------------------------------------------------------------

/**
 * The journal's runs, the most recently updated first.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Journal } from "effect-agent-tools"
 *
 * const running = Journal.runs({ status: "running", limit: 20 })
 * ```
 *
 * @since 0.1.0
 * @category reading
 */
export const runs = (options?: ListOptions): Effect.Effect<ReadonlyArray<Run>, JournalError, Journal> =>
  Effect.flatMap(Journal, (journal) => journal.runs(options))

/**
 * One run, if it was begun.
 *
 * @example
 * ```ts
 * import { Journal } from "effect-agent-tools"
 *
 * const run = Journal.run("run-1")
 * ```
 *
 * @since 0.1.0
 * @category reading
 */
export const run = (runId: string): Effect.Effect<Option.Option<Run>, JournalError, Journal> =>
  Effect.flatMap(Journal, (journal) => journal.run(runId))

/**
 * A run's model steps, in order.
 *
 * @example
 * ```ts
 * import { Journal } from "effect-agent-tools"
 *
 * const steps = Journal.steps("run-1")
 * ```
 *
 * @since 0.1.0
 * @category reading
 */
export const steps = (runId: string): Effect.Effect<ReadonlyArray<Step>, JournalError, Journal> =>
  Effect.flatMap(Journal, (journal) => journal.steps(runId))

/**
 * A run's calls, by step and position.
 *
 * @example
 * ```ts
 * import { Journal } from "effect-agent-tools"
 *
 * const calls = Journal.calls("run-1")
 * ```
 *
 * @since 0.1.0
 * @category reading
 */
export const calls = (runId: string): Effect.Effect<ReadonlyArray<Call>, JournalError, Journal> =>
  Effect.flatMap(Journal, (journal) => journal.calls(runId))

/**
 * A run's records (or one call's), in the order they were written.
 *
 * @example
 * ```ts
 * import { Journal } from "effect-agent-tools"
 *
 * const records = Journal.records("run-1", "call_1")
 * ```
 *
 * @since 0.1.0
 * @category reading
 */
export const records = (
  runId: string,
  callId?: string
): Effect.Effect<ReadonlyArray<CallRecord>, JournalError, Journal> =>
  Effect.flatMap(Journal, (journal) => journal.records(runId, callId))

/**
 * A run's permission decisions (or one call's), in the order they were taken.
 *
 * @example
 * ```ts
 * import { Journal } from "effect-agent-tools"
 *
 * const decisions = Journal.decisions("run-1")
 * ```
 *
 * @since 0.1.0
 * @category reading
 */
export const decisions = (
  runId: string,
  callId?: string
): Effect.Effect<ReadonlyArray<CallDecision>, JournalError, Journal> =>
  Effect.flatMap(Journal, (journal) => journal.decisions(runId, callId))

/**
 * Takes a run's lease until the scope closes (see {@link Journal.Service.acquire}).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Journal } from "effect-agent-tools"
 *
 * const owned = Effect.scoped(
 *   Effect.gen(function*() {
 *     const lease = yield* Journal.acquire("run-1")
 *     // ... resume the run, racing it against lease.lost
 *   })
 * )
 * ```
 *
 * @since 0.1.0
 * @category leases
 */
export const acquire = (runId: string): Effect.Effect<Lease, JournalError, Journal | Scope.Scope> =>
  Effect.flatMap(Journal, (journal) => journal.acquire(runId))

/**
 * The runs no live lease holds (see {@link Journal.Service.expired}).
 *
 * @example
 * ```ts
 * import { Journal } from "effect-agent-tools"
 *
 * const orphans = Journal.expired()
 * ```
 *
 * @since 0.1.0
 * @category leases
 */
export const expired = (
  options?: { readonly limit?: number | undefined }
): Effect.Effect<ReadonlyArray<Run>, JournalError, Journal> =>
  Effect.flatMap(Journal, (journal) => journal.expired(options))

/**
 * Takes over one run whose lease expired (see {@link Journal.Service.takeOver}).
 *
 * @example
 * ```ts
 * import { Effect, Option } from "effect"
 * import { Journal } from "effect-agent-tools"
 *
 * const resumeOne = Effect.scoped(
 *   Effect.gen(function*() {
 *     const lease = yield* Journal.takeOver()
 *     if (Option.isSome(lease)) {
 *       // ... resume lease.value.run
 *     }
 *   })
 * )
 * ```
 *
 * @since 0.1.0
 * @category leases
 */
export const takeOver = (): Effect.Effect<Option.Option<Lease>, JournalError, Journal | Scope.Scope> =>
  Effect.flatMap(Journal, (journal) => journal.takeOver())

// -------------------------------------------------------------------------------------------------------------------
// cleaning up after a process that died
// -------------------------------------------------------------------------------------------------------------------

/**
 * One record of a run, for a cleanup handler: the record as its call wrote it (`Recorder.write`), and whether that
 * call finished (has an outcome). A record of a call that never finished names something that was in use when its
 * process stopped; one of a finished call names what the call left behind on purpose (a background process, a
 * folder the result points to), which a handler may keep.
 *
 * @since 0.1.0
 * @category cleanup
 */
export interface Leftover {
  readonly record: CallRecord
  readonly finished: boolean
}

/**
 * What to do with a namespace's records when a run is resumed by another host (or cleaned up, see
 * {@link cleanUp}): end the process a record names, delete the folder, cancel the remote job. Called once with all
 * of the run's records of the namespace; it never fails (a handler that dies is logged, the others still run).
 *
 * @since 0.1.0
 * @category cleanup
 */
export type CleanupHandler = (leftovers: ReadonlyArray<Leftover>) => Effect.Effect<void>

/**
 * The cleanup handlers, by record namespace: a `Context.Reference` whose default holds the built-in ones. Built in:
 * `bash/process` (`Workspace.BASH_PROCESS_NAMESPACE`, the workspace shell's record of each command), whose handler
 * ends every live process that carries a recorded command's marker (SIGTERM, then SIGKILL after a second; found
 * through `/proc`, so also processes that left their group; a process without the marker is never touched).
 * Register more with {@link layerCleanup}.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Journal } from "effect-agent-tools"
 *
 * const namespaces = Effect.map(Journal.Cleanup, (handlers) => [...handlers.keys()]) // ["bash/process"]
 * ```
 *
 * @since 0.1.0
 * @category cleanup
 */
export class Cleanup extends Context.Reference<Cleanup>()("effect-agent-tools/Journal/Cleanup", {
  defaultValue: (): ReadonlyMap<string, CleanupHandler> => Cleanups.builtIn
}) {}

/**
 * Registers cleanup handlers by namespace, beside the ones already registered (a namespace given again is
 * replaced).
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import * as fs from "node:fs"
 * import { Journal, Recorder } from "effect-agent-tools"
 *
 * const Scratch = Schema.Struct({ path: Schema.String })
 *
 * // a tool writes Recorder.makeRecord("scratch/folder", Scratch, { path }) right after making its folder
 * const ScratchCleanup = Journal.layerCleanup({
 *   "scratch/folder": (leftovers) =>
 *     Effect.sync(() => {
 *       for (const { record } of leftovers) {
 *         const decoded = Recorder.decode(record.record, Scratch)
 *         if (decoded._tag === "Right") fs.rmSync(decoded.right.path, { recursive: true, force: true })
 *       }
 *     })
 * })
 * ```
 *
 * @since 0.1.0
 * @category cleanup
 */
export const layerCleanup = (handlers: { readonly [namespace: string]: CleanupHandler }): Layer.Layer<Cleanup> =>
  Layer.effect(
    Cleanup,
    Effect.map(Cleanup, (current) => new Map([...current, ...Object.entries(handlers)]))
  )

/**
 * Runs the cleanup handlers over a run's records, as a resumed run does when it starts: for a host that will not
 * resume a run whose process died, so what it left running does not run for ever. Gives how many records were
 * handed to a handler.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Journal } from "effect-agent-tools"
 *
 * // give up the runs whose host died, ending what they left running
 * const abandon = Effect.flatMap(Journal.expired(), (runs) =>
 *   Effect.forEach(runs, (run) =>
 *     Effect.zipRight(Journal.cleanUp(run.runId), Effect.flatMap(Journal.Journal, (journal) =>
 *       journal.end(run.runId, "interrupted")))))
 * ```
 *
 * @since 0.1.0
 * @category cleanup
 */
export const cleanUp = (runId: string): Effect.Effect<number, JournalError, Journal> =>
  Effect.flatMap(
    Effect.zip(Journal, Cleanup),
    ([journal, handlers]) => Cleanups.cleanUp(journal, runId, handlers)
  )
