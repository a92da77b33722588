/**
 * Live rendering of a batch for people: one line per call with its state and progress.
 *
 * On a terminal the block of lines is redrawn in place as events arrive; elsewhere (a pipe, a CI log) each change
 * of state is printed once, so the output reads well in both.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Stream from "effect/Stream"
import type * as Executor from "../Executor.js"
import * as ToolError from "../ToolError.js"
import * as ToolResult from "../ToolResult.js"

/** Where output goes: a writable with an optional terminal width. */
export interface Sink {
  readonly write: (text: string) => void
  readonly isTTY: boolean
  readonly columns: number
}

export const stdoutSink = (): Sink => ({
  write: (text) => void process.stdout.write(text),
  isTTY: process.stdout.isTTY === true,
  columns: process.stdout.columns ?? 100
})

export const stderrSink = (): Sink => ({
  write: (text) => void process.stderr.write(text),
  isTTY: process.stderr.isTTY === true,
  columns: process.stderr.columns ?? 100
})

const color = (tty: boolean, code: string, text: string) => (tty ? `\x1b[${code}m${text}\x1b[0m` : text)

/** What the model reads for one outcome. */
export const modelText = (outcome: Executor.Outcome): string =>
  Either.isRight(outcome) ? ToolResult.toText(outcome.right) : ToolError.toModelText(outcome.left)

const oneLine = (text: string, max: number): string => {
  const line = text.replace(/\s+/g, " ").trim()
  return line.length > max ? `${line.slice(0, Math.max(0, max - 1))}…` : line
}

const describeArguments = (call: Executor.ToolCall): string =>
  typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments) ?? ""

type State =
  | { readonly _tag: "waiting" }
  | { readonly _tag: "running"; readonly since: number; readonly progress: string }
  | { readonly _tag: "done"; readonly ok: boolean; readonly summary: string; readonly millis: number }

/** A live view of a batch: feed it events; notes (a permission preview) print above the block of calls. */
export interface View {
  readonly event: (event: Executor.ToolEvent) => void
  readonly note: (text: string) => void
  readonly outcomes: ReadonlyArray<Executor.Outcome>
}

export const makeView = (calls: ReadonlyArray<Executor.ToolCall>, sink: Sink): View => {
  const states: Array<State> = calls.map(() => ({ _tag: "waiting" }))
  const outcomes: Array<Executor.Outcome> = new Array(calls.length)
  const tty = sink.isTTY
  const width = Math.max(60, sink.columns)
  const nameWidth = Math.min(14, Math.max(...calls.map((c) => c.name.length), 4))
  const lineOf = (i: number): string => {
    const call = calls[i]
    const state = states[i]
    const head = `#${String(i).padEnd(2)} ${call.name.padEnd(nameWidth)} ${
      oneLine(describeArguments(call), 36).padEnd(36)
    }`
    switch (state._tag) {
      case "waiting":
        return `${head} ${color(tty, "2", "… waiting")}`
      case "running": {
        const elapsed = ((Date.now() - state.since) / 1000).toFixed(1)
        const progress = state.progress === "" ? "" : ` ${state.progress}`
        return `${head} ${color(tty, "33", `▶ running ${elapsed}s`)}${oneLine(progress, width - head.length - 20)}`
      }
      case "done": {
        const mark = state.ok ? color(tty, "32", "✓") : color(tty, "31", "✗")
        const summary = oneLine(state.summary, Math.max(20, width - head.length - 16))
        return `${head} ${mark} ${(state.millis / 1000).toFixed(1)}s ${summary}`
      }
    }
  }
  let drawn = 0
  const clear = () => {
    if (drawn > 0) sink.write(`\x1b[${drawn}A\x1b[0J`)
    drawn = 0
  }
  const redraw = () => {
    clear()
    for (let i = 0; i < calls.length; i++) sink.write(`${lineOf(i)}\n`)
    drawn = calls.length
  }
  if (tty) redraw()
  return {
    outcomes,
    note: (text) => {
      if (tty) clear()
      sink.write(text.endsWith("\n") ? text : `${text}\n`)
      if (tty) redraw()
    },
    event: (event) => {
      const i = event.index
      switch (event._tag) {
        case "Started":
          states[i] = { _tag: "running", since: Date.now(), progress: "" }
          break
        case "Progress": {
          const p = event.progress
          const previous = states[i]
          const fraction = p.progress !== undefined && p.total !== undefined ? `${p.progress}/${p.total} ` : ""
          states[i] = {
            _tag: "running",
            since: previous._tag === "running" ? previous.since : Date.now(),
            progress: `${fraction}${p.message ?? ""}`
          }
          break
        }
        case "Finished": {
          outcomes[i] = event.outcome
          const ok = Either.isRight(event.outcome)
          states[i] = { _tag: "done", ok, summary: modelText(event.outcome), millis: event.durationMillis }
          break
        }
      }
      if (tty) redraw()
      else sink.write(`${lineOf(i)}\n`)
    }
  }
}

/** Renders a batch's events as they come and gives the outcomes in call order. */
export const renderBatch = (
  view: View,
  events: Stream.Stream<Executor.ToolEvent>
): Effect.Effect<ReadonlyArray<Executor.Outcome>> =>
  Effect.as(Stream.runForEach(events, (event) => Effect.sync(() => view.event(event))), view.outcomes)
