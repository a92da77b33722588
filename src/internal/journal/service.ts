/**
 * The journal service over a store: what every store shares (encoding, group commit, leases and their renewal,
 * decoding what is read). A store ({@link Store}: memory, SQLite, Postgres) only keeps rows: the tables below, in
 * the same shape in each, so one set of schemas decodes them all.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import { randomUUID } from "node:crypto"
import { hostname } from "node:os"
import * as Journal from "../../Journal.js"
import { JournalError } from "../../Journal.js"
import * as Recorder from "../../Recorder.js"
import * as Codec from "./codec.js"
import * as GroupCommit from "./groupCommit.js"

// -------------------------------------------------------------------------------------------------------------------
// rows: what a store keeps, column for column
// -------------------------------------------------------------------------------------------------------------------

/** `agent_journal_runs`; times are epoch milliseconds, JSON columns are text. */
export interface RunRow {
  readonly run_id: string
  readonly definitions_hash: string
  readonly tools: string
  readonly options: string
  readonly status: Journal.RunStatus
  readonly created_at: number
  readonly updated_at: number
  readonly lease_owner: string | null
  readonly lease_expires_at: number | null
}

/** The columns that say which call of which run a row is for. */
export interface CallColumns {
  readonly run_id: string
  readonly step: number
  readonly call_id: string
  readonly tool: string
}

/**
 * A write, as the row it inserts (or, for `Status`, the change it makes to its run's row): every field but `_tag`
 * is a column of the write's table.
 */
export type Write =
  | {
    readonly _tag: "Step"
    readonly run_id: string
    readonly step: number
    readonly response: string
    readonly created_at: number
  }
  | CallColumns & {
    readonly _tag: "Dispatch"
    readonly call_index: number
    readonly arguments: string
    readonly idempotency_key: string
    readonly replay: Journal.Replay
    /** A new row's; a dispatch of a call already journaled adds one to the row's. */
    readonly attempts: 1
    readonly dispatched_at: number
  }
  | CallColumns & {
    readonly _tag: "Outcome"
    readonly call_index: number
    readonly arguments: string
    /** A new row's: the call never ran. */
    readonly attempts: 0
    readonly outcome: string
    readonly finished_at: number
  }
  | CallColumns & {
    readonly _tag: "Record"
    readonly phase: "during" | "end"
    readonly namespace: string
    readonly data: string
    readonly created_at: number
  }
  | CallColumns & {
    readonly _tag: "Decision"
    readonly action: string
    readonly description: string
    readonly decision: "allow" | "deny"
    readonly reason: string | null
    readonly created_at: number
  }
  | {
    readonly _tag: "Status"
    readonly run_id: string
    readonly status: Journal.RunStatus
    readonly updated_at: number
  }

/** Why a store refused a write or a lease: the run is held by another owner, or does not exist. */
export type Refusal =
  | { readonly _tag: "Held"; readonly owner: string; readonly expiresAt: number | null }
  | { readonly _tag: "Missing" }

/**
 * What a store does. Rows come back as the store has them (a Postgres `BIGINT` as a string, say) and are decoded
 * here. `now` is the host's clock in epoch milliseconds; a store with a clock of its own shared by every host
 * (Postgres) uses that for leases instead.
 */
export interface Store {
  /** Inserts the run unless it exists; gives the run's row and whether it was inserted. */
  readonly begin: (row: RunRow) => Effect.Effect<{ readonly row: unknown; readonly created: boolean }, JournalError>
  /**
   * Writes a batch in one transaction, each write only if its run exists and is not leased to another owner
   * (fencing); gives, per write, `undefined` or why it was refused.
   */
  readonly commit: (
    writes: ReadonlyArray<Write>,
    owner: string,
    now: number
  ) => Effect.Effect<ReadonlyArray<Refusal | undefined>, JournalError>
  /** Takes the lease when it is free, expired or already this owner's; gives the run's row. */
  readonly acquire: (
    runId: string,
    owner: string,
    ttlMillis: number,
    now: number
  ) => Effect.Effect<Either.Either<unknown, Refusal>, JournalError>
  /** Extends this owner's lease; false when another owner holds it now. */
  readonly renew: (runId: string, owner: string, ttlMillis: number, now: number) => Effect.Effect<boolean, JournalError>
  /** Ends this owner's lease now (the run stays `running`: another host may take it over at once). */
  readonly release: (runId: string, owner: string, now: number) => Effect.Effect<void, JournalError>
  /** Claims the first run no live lease holds, skipping rows another host is claiming and the `exclude`d runs. */
  readonly takeOver: (
    owner: string,
    ttlMillis: number,
    now: number,
    exclude: ReadonlyArray<string>
  ) => Effect.Effect<Option.Option<unknown>, JournalError>
  readonly expired: (now: number, limit: number) => Effect.Effect<ReadonlyArray<unknown>, JournalError>
  readonly runs: (
    status: Journal.RunStatus | undefined,
    limit: number
  ) => Effect.Effect<ReadonlyArray<unknown>, JournalError>
  readonly run: (runId: string) => Effect.Effect<Option.Option<unknown>, JournalError>
  readonly steps: (runId: string) => Effect.Effect<ReadonlyArray<unknown>, JournalError>
  readonly calls: (runId: string) => Effect.Effect<ReadonlyArray<unknown>, JournalError>
  readonly records: (runId: string, callId: string | undefined) => Effect.Effect<ReadonlyArray<unknown>, JournalError>
  readonly decisions: (runId: string, callId: string | undefined) => Effect.Effect<ReadonlyArray<unknown>, JournalError>
}

// -------------------------------------------------------------------------------------------------------------------
// decoding rows
// -------------------------------------------------------------------------------------------------------------------

/** A `BIGINT`: a number from SQLite, a decimal string from Postgres. */
const Millis = Schema.Union(Schema.Number, Schema.NumberFromString)
const Int = Schema.Union(Schema.Int, Schema.compose(Schema.NumberFromString, Schema.Int))
const date = (millis: number): Date => new Date(millis)

const RunRowSchema = Schema.Struct({
  run_id: Schema.String,
  definitions_hash: Schema.String,
  tools: Schema.parseJson(Schema.Record({ key: Schema.String, value: Schema.String })),
  options: Schema.parseJson(),
  status: Journal.RunStatus,
  created_at: Millis,
  updated_at: Millis,
  lease_owner: Schema.NullOr(Schema.String),
  lease_expires_at: Schema.NullOr(Millis)
})

const StepRowSchema = Schema.Struct({
  run_id: Schema.String,
  step: Int,
  response: Schema.parseJson(),
  created_at: Millis
})

const CallRowSchema = Schema.Struct({
  run_id: Schema.String,
  step: Int,
  call_id: Schema.String,
  call_index: Int,
  tool: Schema.String,
  arguments: Schema.parseJson(),
  idempotency_key: Schema.NullOr(Schema.String),
  replay: Schema.NullOr(Journal.Replay),
  attempts: Int,
  dispatched_at: Schema.NullOr(Millis),
  outcome: Schema.NullOr(Schema.parseJson(Codec.Outcome)),
  finished_at: Schema.NullOr(Millis)
})

const RecordRowSchema = Schema.Struct({
  run_id: Schema.String,
  step: Int,
  call_id: Schema.String,
  tool: Schema.String,
  phase: Schema.Literal("during", "end"),
  namespace: Schema.String,
  data: Schema.parseJson(),
  created_at: Millis
})

const DecisionRowSchema = Schema.Struct({
  run_id: Schema.String,
  step: Int,
  call_id: Schema.String,
  tool: Schema.String,
  action: Schema.String,
  description: Schema.String,
  decision: Schema.Literal("allow", "deny"),
  reason: Schema.NullOr(Schema.String),
  created_at: Millis
})

const decoder = <A, I>(schema: Schema.Schema<A, I>, table: string) => {
  const decode = Schema.decodeUnknownEither(schema)
  return (row: unknown): Effect.Effect<A, JournalError> => {
    const result = decode(row)
    return Either.isRight(result) ? Effect.succeed(result.right) : Effect.fail(
      new JournalError({
        reason: "Corrupt",
        message: `a row of ${table} could not be read: ${ParseResult.TreeFormatter.formatErrorSync(result.left)}`,
        cause: result.left
      })
    )
  }
}

const decodeRunRow = decoder(RunRowSchema, "agent_journal_runs")
const decodeStepRow = decoder(StepRowSchema, "agent_journal_steps")
const decodeCallRow = decoder(CallRowSchema, "agent_journal_calls")
const decodeRecordRow = decoder(RecordRowSchema, "agent_journal_records")
const decodeDecisionRow = decoder(DecisionRowSchema, "agent_journal_decisions")

/** Which call of which run a row is for, as the models name it. */
const callOf = (
  r: { readonly run_id: string; readonly step: number; readonly call_id: string; readonly tool: string }
) => ({
  runId: r.run_id,
  step: r.step,
  callId: r.call_id,
  tool: r.tool
})

const toRun = (row: unknown): Effect.Effect<Journal.Run, JournalError> =>
  Effect.map(decodeRunRow(row), (r) =>
    new Journal.Run({
      runId: r.run_id,
      definitionsHash: r.definitions_hash,
      tools: r.tools,
      options: r.options,
      status: r.status,
      createdAt: date(r.created_at),
      updatedAt: date(r.updated_at),
      lease: r.lease_owner === null || r.lease_expires_at === null
        ? Option.none()
        : Option.some(new Journal.LeaseHolder({ owner: r.lease_owner, expiresAt: date(r.lease_expires_at) }))
    }))

const toStep = (row: unknown): Effect.Effect<Journal.Step, JournalError> =>
  Effect.map(
    decodeStepRow(row),
    (r) => new Journal.Step({ runId: r.run_id, step: r.step, response: r.response, at: date(r.created_at) })
  )

const toCall = (row: unknown): Effect.Effect<Journal.Call, JournalError> =>
  Effect.map(decodeCallRow(row), (r) =>
    new Journal.Call({
      ...callOf(r),
      index: r.call_index,
      arguments: r.arguments,
      dispatch: r.attempts > 0 && r.idempotency_key !== null && r.replay !== null && r.dispatched_at !== null
        ? Option.some(
          new Journal.CallDispatch({
            idempotencyKey: r.idempotency_key,
            replay: r.replay,
            attempts: r.attempts,
            at: date(r.dispatched_at)
          })
        )
        : Option.none(),
      outcome: r.outcome !== null && r.finished_at !== null
        ? Option.some(new Journal.CallOutcome({ outcome: r.outcome, at: date(r.finished_at) }))
        : Option.none()
    }))

const toRecord = (row: unknown): Effect.Effect<Journal.CallRecord, JournalError> =>
  Effect.map(decodeRecordRow(row), (r) =>
    new Journal.CallRecord({
      ...callOf(r),
      phase: r.phase,
      record: new Recorder.Record({ namespace: r.namespace, data: r.data }),
      at: date(r.created_at)
    }))

const toDecision = (row: unknown): Effect.Effect<Journal.CallDecision, JournalError> =>
  Effect.map(decodeDecisionRow(row), (r) =>
    new Journal.CallDecision({
      ...callOf(r),
      action: r.action,
      description: r.description,
      decision: r.decision === "allow" ? { _tag: "Allow" } : { _tag: "Deny", reason: r.reason ?? undefined },
      at: date(r.created_at)
    }))

// -------------------------------------------------------------------------------------------------------------------
// errors with one wording
// -------------------------------------------------------------------------------------------------------------------

const refused = (runId: string, refusal: Refusal, owner: string): JournalError =>
  refusal._tag === "Missing"
    ? new JournalError({ reason: "UnknownRun", runId, message: `no run ${JSON.stringify(runId)} was begun` })
    : new JournalError({
      reason: "Conflict",
      runId,
      message: `the run ${JSON.stringify(runId)} is leased by ${refusal.owner}` +
        (refusal.expiresAt === null ? "" : ` until ${new Date(refusal.expiresAt).toISOString()}`) +
        `, not by this host (${owner})`
    })

const heldHere = (runId: string): JournalError =>
  new JournalError({
    reason: "Conflict",
    runId,
    message: `the run ${JSON.stringify(runId)} is already leased by another fiber of this host`
  })

// -------------------------------------------------------------------------------------------------------------------
// the service
// -------------------------------------------------------------------------------------------------------------------

/** The options every layer takes, with their defaults applied. */
export interface Settings {
  readonly leaseTtl: Duration.Duration
  readonly maxPending: number
  readonly maxBatch: number
  readonly maxWriteBytes: number
}

export const settings = (options: Journal.Options): Settings => ({
  leaseTtl: Duration.decode(options.leaseTtl ?? Journal.DEFAULT_LEASE_TTL),
  maxPending: Math.max(1, options.maxPending ?? Journal.DEFAULT_MAX_PENDING),
  maxBatch: Math.max(1, options.maxBatch ?? Journal.DEFAULT_MAX_BATCH),
  maxWriteBytes: options.maxWriteBytes ?? Journal.DEFAULT_MAX_WRITE_BYTES
})

/** A lease owner id: which host and process (for people reading the table), and a random part (for uniqueness). */
export const makeOwner = (): string => `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`

/** A list's bound: a whole number, at least 0 (SQLite reads `LIMIT -1` as no limit at all). */
const limitOf = (limit: number | undefined): number =>
  limit === undefined ? Journal.DEFAULT_LIST_LIMIT : Number.isFinite(limit) ? Math.max(0, Math.floor(limit)) : 0

/** Which call of which run a write is for, as the tables name it. */
const columnsOf = (entry: Journal.CallKey & { readonly tool: string }): CallColumns => ({
  run_id: entry.runId,
  step: entry.step,
  call_id: entry.callId,
  tool: entry.tool
})

const writeSize = (write: Write): number => {
  switch (write._tag) {
    case "Step":
      return Buffer.byteLength(write.response)
    case "Dispatch":
      return Buffer.byteLength(write.arguments)
    case "Outcome":
      return Buffer.byteLength(write.arguments) + Buffer.byteLength(write.outcome)
    case "Record":
      return Buffer.byteLength(write.data)
    case "Decision":
      return Buffer.byteLength(write.description)
    case "Status":
      return 0
  }
}

/** The journal service over a store; its writer fiber and leases live as long as the scope. */
export const make = (
  store: Store,
  options: Settings,
  owner: string = makeOwner()
): Effect.Effect<Journal.Journal.Service, never, Scope.Scope> =>
  Effect.gen(function*() {
    const ttlMillis = Math.max(1, Duration.toMillis(options.leaseTtl))
    const renewEvery = Duration.millis(Math.max(1, Math.floor(ttlMillis / 3)))
    /** The runs some fiber of this journal holds a lease on: one lease per run per host. */
    const held = new Set<string>()

    const group = yield* GroupCommit.make<Write>(
      (writes) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => store.commit(writes, owner, now)).pipe(
          Effect.map((refusals) =>
            refusals.map((refusal, i) => refusal === undefined ? undefined : refused(writes[i].run_id, refusal, owner))
          )
        ),
      options
    )

    const submit = (write: Write): Effect.Effect<void, JournalError> => {
      const size = writeSize(write)
      return size > options.maxWriteBytes
        ? Effect.fail(
          new JournalError({
            reason: "Invalid",
            runId: write.run_id,
            message: `a ${write._tag.toLowerCase()} write of ${size} bytes is over the journal's limit of ` +
              `${options.maxWriteBytes} bytes`
          })
        )
        : group.submit(write)
    }

    /** The lease of a run this host just took: renewed until the scope closes, then released. */
    const hold = (row: unknown): Effect.Effect<Journal.Lease, JournalError, Scope.Scope> =>
      Effect.gen(function*() {
        const run = yield* toRun(row)
        const lost = yield* Deferred.make<never, JournalError>()
        const renewal = Effect.gen(function*() {
          let renewedAt = yield* Clock.currentTimeMillis
          while (true) {
            yield* Effect.sleep(renewEvery)
            const now = yield* Clock.currentTimeMillis
            const renewed = yield* Effect.either(store.renew(run.runId, owner, ttlMillis, now))
            if (Either.isRight(renewed) && renewed.right) {
              renewedAt = now
            } else if (Either.isRight(renewed)) {
              return yield* Deferred.fail(
                lost,
                new JournalError({
                  reason: "Conflict",
                  runId: run.runId,
                  message: `the lease of run ${JSON.stringify(run.runId)} was taken over by another host`
                })
              )
            } else if (now - renewedAt >= ttlMillis) {
              return yield* Deferred.fail(
                lost,
                new JournalError({
                  reason: renewed.left.reason,
                  runId: run.runId,
                  message: `the lease of run ${JSON.stringify(run.runId)} could not be renewed for ` +
                    `${Duration.format(options.leaseTtl)}: ${renewed.left.message}`,
                  cause: renewed.left
                })
              )
            }
          }
        })
        yield* Effect.forkScoped(renewal)
        return { run, owner, lost: Deferred.await(lost) }
      })

    /** Ends this host's lease on a run, when the scope it was taken in closes. */
    const release = (runId: string): Effect.Effect<void> =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => store.release(runId, owner, now)).pipe(
        // a release that does not reach the store leaves the lease to expire on its own
        Effect.catchAll((error) => Effect.logWarning(`the lease of run ${runId} was not released`, error)),
        Effect.ensuring(Effect.sync(() => held.delete(runId)))
      )

    const acquire = (runId: string): Effect.Effect<Journal.Lease, JournalError, Scope.Scope> =>
      Effect.acquireRelease(
        Effect.suspend(() => {
          if (held.has(runId)) return Effect.fail(heldHere(runId))
          held.add(runId)
          return Effect.flatMap(Clock.currentTimeMillis, (now) => store.acquire(runId, owner, ttlMillis, now)).pipe(
            Effect.flatMap(Either.match({
              onLeft: (refusal) => Effect.fail(refused(runId, refusal, owner)),
              onRight: Effect.succeed
            })),
            Effect.tapError(() => Effect.sync(() => held.delete(runId)))
          )
        }),
        () => release(runId)
      ).pipe(Effect.flatMap(hold))

    const takeOver = (): Effect.Effect<Option.Option<Journal.Lease>, JournalError, Scope.Scope> =>
      Effect.acquireRelease(
        Effect.flatMap(Clock.currentTimeMillis, (now) => store.takeOver(owner, ttlMillis, now, [...held])).pipe(
          Effect.map(Option.map((row) => {
            const runId = (row as { readonly run_id: string }).run_id
            held.add(runId)
            return { row, runId }
          }))
        ),
        Option.match({ onNone: () => Effect.void, onSome: ({ runId }) => release(runId) })
      ).pipe(
        Effect.flatMap(Option.match({
          onNone: () => Effect.succeedNone,
          onSome: ({ row }) => Effect.asSome(hold(row))
        }))
      )

    const service: Journal.Journal.Service = {
      owner,
      begin: (run) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          store.begin({
            run_id: run.runId,
            definitions_hash: run.definitionsHash,
            tools: Codec.toJson(run.tools ?? {}),
            options: Codec.toJson(run.options ?? null),
            status: "running",
            created_at: now,
            updated_at: now,
            lease_owner: null,
            lease_expires_at: null
          })).pipe(
            Effect.flatMap(({ created, row }) => Effect.map(toRun(row), (run) => ({ run, resumed: !created })))
          ),
      end: (runId, status) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          submit({ _tag: "Status", run_id: runId, status, updated_at: now })),
      step: (entry) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          submit({
            _tag: "Step",
            run_id: entry.runId,
            step: entry.step,
            response: Codec.toJson(entry.response),
            created_at: now
          })),
      dispatch: (entry) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          submit({
            _tag: "Dispatch",
            ...columnsOf(entry),
            call_index: entry.index,
            arguments: Codec.toJson(entry.arguments),
            idempotency_key: entry.idempotencyKey,
            replay: entry.replay,
            attempts: 1,
            dispatched_at: now
          })),
      record: (entry) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          submit({
            _tag: "Record",
            ...columnsOf(entry),
            phase: entry.phase,
            namespace: entry.record.namespace,
            data: Codec.toJson(entry.record.data),
            created_at: now
          })),
      decision: (entry) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          submit({
            _tag: "Decision",
            ...columnsOf(entry),
            action: entry.action,
            description: entry.description,
            decision: entry.decision._tag === "Allow" ? "allow" : "deny",
            reason: entry.decision._tag === "Deny" ? entry.decision.reason ?? null : null,
            created_at: now
          })),
      outcome: (entry) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => {
          const outcome = Codec.encodeOutcome(entry.outcome)
          if (Either.isLeft(outcome)) {
            return Effect.fail(
              new JournalError({
                reason: "Invalid",
                runId: entry.runId,
                message: `the outcome of call ${entry.callId} cannot be journaled: ` +
                  ParseResult.TreeFormatter.formatErrorSync(outcome.left),
                cause: outcome.left
              })
            )
          }
          return submit({
            _tag: "Outcome",
            ...columnsOf(entry),
            call_index: entry.index,
            arguments: Codec.toJson(entry.arguments),
            attempts: 0,
            outcome: outcome.right,
            finished_at: now
          })
        }),
      acquire,
      takeOver,
      expired: (options) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          store.expired(now, limitOf(options?.limit))).pipe(
            Effect.flatMap((rows) => Effect.forEach(rows, toRun))
          ),
      runs: (options) =>
        Effect.flatMap(
          store.runs(options?.status, limitOf(options?.limit)),
          (rows) => Effect.forEach(rows, toRun)
        ),
      run: (runId) =>
        Effect.flatMap(
          store.run(runId),
          Option.match({ onNone: () => Effect.succeedNone, onSome: (row) => Effect.asSome(toRun(row)) })
        ),
      steps: (runId) => Effect.flatMap(store.steps(runId), (rows) => Effect.forEach(rows, toStep)),
      calls: (runId) => Effect.flatMap(store.calls(runId), (rows) => Effect.forEach(rows, toCall)),
      records: (runId, callId) =>
        Effect.flatMap(store.records(runId, callId), (rows) => Effect.forEach(rows, toRecord)),
      decisions: (runId, callId) =>
        Effect.flatMap(store.decisions(runId, callId), (rows) => Effect.forEach(rows, toDecision))
    }
    return service
  })
