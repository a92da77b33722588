/**
 * `agent-tools journal`: what a journal holds, for people. Without a run id, its runs (the most recently updated
 * first); with one, that run: its status and lease, then each step (the model's text, or the batch) with each of
 * its calls: the tool, the arguments, how many times it was dispatched, and how it ended (or that it was running
 * when its process stopped, or never started).
 *
 * Every line fits the terminal's width (100 columns into a pipe), colour only on a terminal and never under
 * `NO_COLOR` (render.ts's rules). A SQLite journal that does not exist is refused, not created.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as fs from "node:fs"
import * as Durable from "../internal/journal/run.js"
import * as Journal from "../Journal.js"
import * as ToolError from "../ToolError.js"
import * as ToolResult from "../ToolResult.js"
import { CommandFailed, UsageError } from "./commands.js"
import type { Sink } from "./render.js"
import { cell, oneLine, paint, stdoutSink, truncate, widthOf } from "./render.js"

/** Where the journal is: a SQLite file, or a Postgres database (and schema). */
export interface Where {
  readonly file: string
  readonly pg: string | undefined
  readonly schema: string | undefined
}

/** The journal's layer; a SQLite file that does not exist is a usage error, so reading never creates one. */
export const layerOf = (
  where: Where
): Either.Either<Layer.Layer<Journal.Journal, Journal.JournalError>, UsageError> => {
  if (where.pg !== undefined) {
    return Either.right(
      Journal.layerPg({ url: where.pg, ...(where.schema === undefined ? {} : { schema: where.schema }) })
    )
  }
  if (!fs.existsSync(where.file)) {
    return Either.left(
      new UsageError({ message: `no journal at ${where.file} (give its file with --file, or a database with --pg)` })
    )
  }
  return Either.right(Journal.layerSqlite({ filename: where.file }))
}

/** A time as people read it, to the second, in the local zone. */
const at = (date: Date): string => {
  const pad = (n: number) => String(n).padStart(2, "0")
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ` +
    `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`
}

/** Who holds the run now: the holder of a live lease, else nobody. */
const holder = (run: Journal.Run, now: number): string =>
  Option.match(run.lease, {
    onNone: () => "-",
    onSome: (lease) => lease.expiresAt.getTime() > now ? lease.owner : "-"
  })

const statusColour = (status: Journal.RunStatus): string =>
  status === "completed" ? "32" : status === "failed" ? "31" : status === "running" ? "33" : "2"

/** The runs, one line each: id, status, last update, the live lease's holder. */
export const renderRuns = (sink: Sink, runs: ReadonlyArray<Journal.Run>, now: number): void => {
  if (runs.length === 0) {
    sink.write("no runs\n")
    return
  }
  const width = Math.max(40, sink.isTTY ? sink.columns - 1 : sink.columns)
  const idWidth = Math.min(40, Math.max(3, ...runs.map((run) => widthOf(oneLine(run.runId)))))
  const statusWidth = 11
  const timeWidth = 19
  const leaseWidth = Math.max(1, width - idWidth - statusWidth - timeWidth - 3)
  const row = (id: string, status: string, time: string, lease: string, colour?: string) =>
    `${cell(id, idWidth)} ${
      colour === undefined ? cell(status, statusWidth) : paint(sink, colour, cell(status, statusWidth))
    } ${cell(time, timeWidth)} ${truncate(lease, leaseWidth)}`.trimEnd()
  sink.write(`${row("RUN", "STATUS", "UPDATED", "LEASE")}\n`)
  for (const run of runs) {
    sink.write(
      `${row(oneLine(run.runId), run.status, at(run.updatedAt), oneLine(holder(run, now)), statusColour(run.status))}\n`
    )
  }
}

/** The calls a step's response lists (an agent's step or a batch), as journaled. */
const stepCalls = (
  response: unknown
): ReadonlyArray<{ readonly id: string; readonly name: string; readonly arguments: unknown }> => {
  const of = (value: unknown) =>
    Array.isArray(value)
      ? value.filter((c): c is { id: string; name: string; arguments: unknown } =>
        typeof c === "object" && c !== null && typeof c.id === "string" && typeof c.name === "string"
      )
      : []
  const r = response as { readonly calls?: unknown; readonly response?: { readonly calls?: unknown } } | null
  return r?.response !== undefined ? of(r.response.calls) : of(r?.calls)
}

const stepText = (response: unknown): string => {
  const text = (response as { readonly response?: { readonly text?: unknown } } | null)?.response?.text
  return typeof text === "string" ? text : ""
}

const argumentsText = (args: unknown): string => typeof args === "string" ? args : JSON.stringify(args) ?? ""

/** How a call stands: its outcome as the model read it, or that it was running, or never started. */
const callState = (
  call: Journal.Call | undefined
): { readonly mark: string; readonly colour: string; readonly text: string } => {
  if (call === undefined) return { mark: "…", colour: "2", text: "not started" }
  if (Option.isSome(call.outcome)) {
    const outcome = call.outcome.value.outcome
    return Either.isRight(outcome)
      ? { mark: "✓", colour: "32", text: ToolResult.toText(outcome.right) }
      : { mark: "✗", colour: "31", text: ToolError.toModelText(outcome.left) }
  }
  if (Option.isSome(call.dispatch)) return { mark: "▶", colour: "33", text: "running when its process stopped" }
  return { mark: "…", colour: "2", text: "not started" }
}

/** One run: its header, then each step and its calls. */
export const renderRun = (
  sink: Sink,
  run: Journal.Run,
  steps: ReadonlyArray<Journal.Step>,
  calls: ReadonlyArray<Journal.Call>,
  now: number
): void => {
  const width = Math.max(40, sink.isTTY ? sink.columns - 1 : sink.columns)
  const line = (text: string) => sink.write(`${truncate(text, width)}\n`)
  const status = run.status
  sink.write(
    `${truncate(oneLine(`run ${run.runId}`), width - status.length - 2)}  ${
      paint(sink, statusColour(status), status)
    }\n`
  )
  line(`created ${at(run.createdAt)}, updated ${at(run.updatedAt)}`)
  line(oneLine(`lease ${holder(run, now)}`))
  const byStep = new Map<number, Map<string, Journal.Call>>()
  for (const call of calls) {
    let own = byStep.get(call.step)
    if (own === undefined) byStep.set(call.step, own = new Map())
    own.set(call.callId, call)
  }
  for (const step of steps) {
    const listed = stepCalls(step.response)
    const text = stepText(step.response)
    const said = listed.length === 1 ? "1 call" : `${listed.length} calls`
    line(oneLine(`step ${step.step}: ${said}${text === "" ? "" : `, ${JSON.stringify(text)}`}`))
    const journaled = byStep.get(step.step) ?? new Map<string, Journal.Call>()
    const ids = Durable.journalIds(listed)
    const numberWidth = `#${listed.length}`.length
    const nameWidth = Math.min(20, Math.max(4, ...listed.map((c) => widthOf(oneLine(c.name)))))
    const room = width - 2 - numberWidth - nameWidth - 2
    const argumentsWidth = Math.max(0, Math.min(30, room - 24))
    listed.forEach((listedCall, index) => {
      const call = journaled.get(ids[index])
      const state = callState(call)
      const attempts = call === undefined
        ? 0
        : Option.match(call.dispatch, { onNone: () => 0, onSome: (d) => d.attempts })
      const detail = oneLine(`${attempts > 1 ? `(${attempts} runs) ` : ""}${state.text}`)
      const head = [
        cell(`#${index + 1}`, numberWidth),
        cell(oneLine(listedCall.name), nameWidth),
        ...(argumentsWidth > 0 ? [cell(oneLine(argumentsText(listedCall.arguments)), argumentsWidth)] : [])
      ].join(" ")
      const rest = Math.max(0, width - 2 - widthOf(head) - 3)
      sink.write(`  ${head} ${paint(sink, state.colour, state.mark)} ${truncate(detail, rest)}\n`)
    })
  }
}

/** `agent-tools journal [RUN_ID]`. */
export const journal = (
  where: Where,
  runId: string | undefined,
  limit: number
): Effect.Effect<void, Journal.JournalError | UsageError | CommandFailed> =>
  Effect.gen(function*() {
    const layer = layerOf(where)
    if (Either.isLeft(layer)) return yield* layer.left
    const sink = stdoutSink()
    yield* Effect.provide(
      Effect.gen(function*() {
        const journal = yield* Journal.Journal
        const now = Date.now()
        if (runId === undefined) return renderRuns(sink, yield* journal.runs({ limit }), now)
        const run = yield* journal.run(runId)
        if (Option.isNone(run)) {
          process.stderr.write(`agent-tools journal: no run ${JSON.stringify(runId)} in the journal\n`)
          return yield* new CommandFailed({ code: 1 })
        }
        const [steps, calls] = yield* Effect.all([journal.steps(runId), journal.calls(runId)])
        renderRun(sink, run.value, steps, calls, now)
      }),
      layer.right
    )
  })
