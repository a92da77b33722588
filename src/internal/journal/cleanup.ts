/**
 * Cleaning up after a process that died mid-run: what a run's records name (a process group, a temporary folder,
 * a remote job) may still be alive, and nobody holds it any more. A host registers a handler per record namespace
 * (`Journal.layerCleanup`); a resumed run, and `Journal.cleanUp`, give each handler the run's records of its
 * namespace. The workspace shell's `bash/process` records have a built-in handler: it ends every live process that
 * carries a recorded command's marker.
 *
 * Imports only types from `Journal.ts`, which loads this module eagerly for its defaults.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { CallRecord, CleanupHandler, Journal, JournalError, Leftover } from "../../Journal.js"
import * as Shell from "../../workspace/shell.js"

const Marked = Schema.Struct({ marker: Schema.String })
const decodeMarked = Schema.decodeUnknownEither(Marked)

/**
 * The built-in handler of `bash/process` records: ends what the recorded commands left running, finished or not.
 * A resumed run's previous host is gone (or gave the run up), and with it the shell those processes belonged to:
 * nothing else will end them. A record that does not decode is skipped.
 */
export const bashProcesses: CleanupHandler = (leftovers) =>
  Effect.asVoid(Effect.suspend(() => {
    const markers = new Set<string>()
    for (const { record } of leftovers) {
      const decoded = decodeMarked(record.record.data)
      if (Either.isRight(decoded)) markers.add(decoded.right.marker)
    }
    return Shell.endMarked(markers)
  }))

/** The handlers every host has unless it registers others for their namespace. */
export const builtIn: ReadonlyMap<string, CleanupHandler> = new Map([[Shell.RECORD_NAMESPACE, bashProcesses]])

/**
 * Gives each handler the run's records of its namespace, each with whether its call finished, one handler after
 * the other; a handler that dies is logged and the others still run. Gives how many records were handled.
 */
export const cleanUp = (
  journal: Journal.Service,
  runId: string,
  handlers: ReadonlyMap<string, CleanupHandler>
): Effect.Effect<number, JournalError> =>
  Effect.gen(function*() {
    if (handlers.size === 0) return 0
    const records = yield* journal.records(runId)
    const byNamespace = new Map<string, Array<CallRecord>>()
    for (const record of records) {
      if (!handlers.has(record.record.namespace)) continue
      const same = byNamespace.get(record.record.namespace)
      if (same === undefined) byNamespace.set(record.record.namespace, [record])
      else same.push(record)
    }
    if (byNamespace.size === 0) return 0
    const finished = new Set<string>()
    for (const call of yield* journal.calls(runId)) {
      if (Option.isSome(call.outcome)) finished.add(`${call.step}\u0000${call.callId}`)
    }
    let handled = 0
    for (const [namespace, same] of byNamespace) {
      const leftovers: Array<Leftover> = same.map((record) => ({
        record,
        finished: finished.has(`${record.step}\u0000${record.callId}`)
      }))
      handled += leftovers.length
      yield* Effect.catchAllCause(
        Effect.suspend(() => handlers.get(namespace)!(leftovers)),
        (cause) =>
          Effect.logWarning(
            `the cleanup of run ${runId}'s ${JSON.stringify(namespace)} records failed: ${Cause.pretty(cause)}`
          )
      )
    }
    return handled
  })
