/**
 * The journal in memory: the tables as maps and arrays, with the SQL stores' rules statement for statement (the
 * same upserts, the same fencing, the same lease conditions), so tests against it say something about them.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Journal from "../../Journal.js"
import type { Refusal, RunRow, Store, Write } from "./service.js"
import * as Service from "./service.js"

interface CallRow {
  run_id: string
  step: number
  call_id: string
  call_index: number
  tool: string
  arguments: string
  idempotency_key: string | null
  replay: Journal.Replay | null
  attempts: number
  dispatched_at: number | null
  outcome: string | null
  finished_at: number | null
}

/** The tables of one memory journal; two services over one `Tables` are two hosts sharing a database. */
export class Tables {
  readonly runs = new Map<string, RunRow>()
  readonly steps = new Map<string, Extract<Write, { _tag: "Step" }>>()
  readonly calls = new Map<string, CallRow>()
  readonly records: Array<Extract<Write, { _tag: "Record" }>> = []
  readonly decisions: Array<Extract<Write, { _tag: "Decision" }>> = []
}

const key = (...parts: ReadonlyArray<string | number>): string => parts.join("\u0000")

const isFree = (row: RunRow, owner: string, now: number): boolean =>
  row.lease_owner === null || row.lease_owner === owner || (row.lease_expires_at ?? 0) <= now

const isOrphan = (row: RunRow, now: number): boolean =>
  row.status === "running" && (row.lease_owner === null || (row.lease_expires_at ?? 0) <= now)

/** A dispatch's or an outcome's row, without its tag. */
const newCall = <W extends { readonly _tag: string }>({ _tag: _, ...row }: W): Omit<W, "_tag"> => row

const apply = (tables: Tables, write: Write, now: number): void => {
  switch (write._tag) {
    case "Step": {
      const k = key(write.run_id, write.step)
      if (!tables.steps.has(k)) tables.steps.set(k, write)
      return
    }
    case "Dispatch": {
      const k = key(write.run_id, write.step, write.call_id)
      const row = tables.calls.get(k)
      if (row === undefined) {
        tables.calls.set(k, { ...newCall(write), outcome: null, finished_at: null })
      } else {
        row.attempts += 1
        row.dispatched_at = write.dispatched_at
        row.idempotency_key = write.idempotency_key
        row.replay = write.replay
        row.tool = write.tool
        row.arguments = write.arguments
      }
      return
    }
    case "Outcome": {
      const k = key(write.run_id, write.step, write.call_id)
      const row = tables.calls.get(k)
      if (row === undefined) {
        tables.calls.set(k, { ...newCall(write), idempotency_key: null, replay: null, dispatched_at: null })
      } else if (row.outcome === null) {
        row.outcome = write.outcome
        row.finished_at = write.finished_at
      }
      return
    }
    case "Record":
      tables.records.push(write)
      return
    case "Decision":
      tables.decisions.push(write)
      return
    case "Status": {
      const row = tables.runs.get(write.run_id)
      if (row !== undefined) {
        tables.runs.set(write.run_id, { ...row, status: write.status, updated_at: now })
      }
      return
    }
  }
}

const byUpdate = (a: RunRow, b: RunRow): number =>
  b.updated_at - a.updated_at || (a.run_id < b.run_id ? -1 : a.run_id > b.run_id ? 1 : 0)

const byExpiry = (a: RunRow, b: RunRow): number =>
  (a.lease_expires_at ?? 0) - (b.lease_expires_at ?? 0) || (a.run_id < b.run_id ? -1 : a.run_id > b.run_id ? 1 : 0)

/** A store over the given tables. */
export const store = (tables: Tables): Store => ({
  begin: (row) =>
    Effect.sync(() => {
      const existing = tables.runs.get(row.run_id)
      if (existing !== undefined) return { row: existing, created: false }
      tables.runs.set(row.run_id, row)
      return { row, created: true }
    }),
  commit: (writes, owner, now) =>
    Effect.sync(() => {
      const verdicts = new Map<string, Refusal | undefined>()
      for (const write of writes) {
        if (verdicts.has(write.run_id)) continue
        const row = tables.runs.get(write.run_id)
        if (row === undefined) {
          verdicts.set(write.run_id, { _tag: "Missing" })
        } else if (row.lease_owner !== null && row.lease_owner !== owner) {
          verdicts.set(write.run_id, { _tag: "Held", owner: row.lease_owner, expiresAt: row.lease_expires_at })
        } else {
          verdicts.set(write.run_id, undefined)
        }
      }
      return writes.map((write) => {
        const verdict = verdicts.get(write.run_id)
        if (verdict === undefined) {
          apply(tables, write, now)
          if (write._tag === "Step") {
            const row = tables.runs.get(write.run_id)!
            tables.runs.set(write.run_id, { ...row, updated_at: now })
          }
        }
        return verdict
      })
    }),
  acquire: (runId, owner, ttlMillis, now) =>
    Effect.sync(() => {
      const row = tables.runs.get(runId)
      if (row === undefined) return Either.left<Refusal>({ _tag: "Missing" })
      if (!isFree(row, owner, now)) {
        return Either.left<Refusal>({ _tag: "Held", owner: row.lease_owner ?? "", expiresAt: row.lease_expires_at })
      }
      const taken: RunRow = { ...row, lease_owner: owner, lease_expires_at: now + ttlMillis, updated_at: now }
      tables.runs.set(runId, taken)
      return Either.right(taken)
    }),
  renew: (runId, owner, ttlMillis, now) =>
    Effect.sync(() => {
      const row = tables.runs.get(runId)
      if (row === undefined || row.lease_owner !== owner) return false
      tables.runs.set(runId, { ...row, lease_expires_at: now + ttlMillis })
      return true
    }),
  release: (runId, owner, now) =>
    Effect.sync(() => {
      const row = tables.runs.get(runId)
      if (row !== undefined && row.lease_owner === owner) tables.runs.set(runId, { ...row, lease_expires_at: now })
    }),
  takeOver: (owner, ttlMillis, now, exclude) =>
    Effect.sync(() => {
      const candidate = [...tables.runs.values()]
        .filter((row) => isOrphan(row, now) && !exclude.includes(row.run_id))
        .sort(byExpiry)[0]
      if (candidate === undefined) return Option.none()
      const taken: RunRow = { ...candidate, lease_owner: owner, lease_expires_at: now + ttlMillis, updated_at: now }
      tables.runs.set(taken.run_id, taken)
      return Option.some(taken)
    }),
  expired: (now, limit) =>
    Effect.sync(() => [...tables.runs.values()].filter((row) => isOrphan(row, now)).sort(byExpiry).slice(0, limit)),
  runs: (status, limit) =>
    Effect.sync(() =>
      [...tables.runs.values()].filter((row) => status === undefined || row.status === status).sort(byUpdate).slice(
        0,
        limit
      )
    ),
  run: (runId) => Effect.sync(() => Option.fromNullable(tables.runs.get(runId))),
  steps: (runId) =>
    Effect.sync(() => [...tables.steps.values()].filter((row) => row.run_id === runId).sort((a, b) => a.step - b.step)),
  calls: (runId) =>
    Effect.sync(() =>
      [...tables.calls.values()].filter((row) => row.run_id === runId).map((row) => ({ ...row })).sort((a, b) =>
        a.step - b.step || a.call_index - b.call_index || (a.call_id < b.call_id ? -1 : 1)
      )
    ),
  records: (runId, callId) =>
    Effect.sync(() =>
      tables.records.filter((row) => row.run_id === runId && (callId === undefined || row.call_id === callId))
    ),
  decisions: (runId, callId) =>
    Effect.sync(() =>
      tables.decisions.filter((row) => row.run_id === runId && (callId === undefined || row.call_id === callId))
    )
})

/** A memory journal over fresh tables (or the given ones, to share them with another). */
export const make = (
  options: Journal.Options,
  tables: Tables = new Tables()
): Effect.Effect<Journal.Journal.Service, never, Scope.Scope> => Service.make(store(tables), Service.settings(options))

export const layer = (options: Journal.Options): Layer.Layer<Journal.Journal> =>
  Layer.scoped(Journal.Journal, make(options))
