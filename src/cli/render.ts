/**
 * Text for people: a batch rendered live (one row per call, with its state and progress), and the width rules every
 * command's output keeps.
 *
 * On a terminal the block of rows is redrawn in place as events arrive, and every line written fits the terminal's
 * width, so the terminal never wraps one and the redraw's cursor-up lands where the block starts; the block never
 * has more rows than the terminal. Elsewhere (a pipe, a CI log) each change of state is printed once, as one line.
 * Colour only on a terminal, and never under `NO_COLOR` (https://no-color.org).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Stream from "effect/Stream"
import type * as Executor from "../Executor.js"
import * as ToolError from "../ToolError.js"
import * as ToolResult from "../ToolResult.js"

// ---------------------------------------------------------------------------------------------------------------
// where output goes
// ---------------------------------------------------------------------------------------------------------------

/** Where output goes, and what it can show. */
export interface Sink {
  readonly write: (text: string) => void
  /** A terminal: a block of rows can be redrawn in place. */
  readonly isTTY: boolean
  /** Colour codes are wanted. */
  readonly color: boolean
  /** How wide a line may be: the terminal's width, or {@link PIPE_COLUMNS} elsewhere. */
  readonly columns: number
  /** How many rows a redrawn block may have: the terminal's height. */
  readonly rows: number
}

/** The line width where there is no terminal to measure (a pipe, a CI log). */
export const PIPE_COLUMNS = 100

/** Colour on this stream: a terminal, and `NO_COLOR` unset or empty. */
export const wantsColor = (stream: { readonly isTTY?: boolean | undefined }): boolean =>
  stream.isTTY === true && (process.env.NO_COLOR ?? "") === ""

const sinkOf = (stream: NodeJS.WriteStream): Sink => {
  const isTTY = stream.isTTY === true
  return {
    write: (text) => void stream.write(text),
    isTTY,
    color: wantsColor(stream),
    columns: isTTY ? stream.columns ?? 80 : PIPE_COLUMNS,
    rows: isTTY ? stream.rows ?? 24 : Infinity
  }
}

export const stdoutSink = (): Sink => sinkOf(process.stdout)

export const stderrSink = (): Sink => sinkOf(process.stderr)

/** Colour codes must never count toward a width: they are added after the text is fitted. */
export const paint = (sink: Sink, code: string, text: string) => (sink.color ? `\x1b[${code}m${text}\x1b[0m` : text)

// ---------------------------------------------------------------------------------------------------------------
// widths
// ---------------------------------------------------------------------------------------------------------------

const isWide = (cp: number): boolean =>
  (cp >= 0x1100 && cp <= 0x115f) || (cp >= 0x2e80 && cp <= 0xa4cf && cp !== 0x303f) ||
  (cp >= 0xac00 && cp <= 0xd7a3) || (cp >= 0xf900 && cp <= 0xfaff) || (cp >= 0xfe30 && cp <= 0xfe4f) ||
  (cp >= 0xff00 && cp <= 0xff60) || (cp >= 0xffe0 && cp <= 0xffe6) || (cp >= 0x1f300 && cp <= 0x1f64f) ||
  (cp >= 0x1f900 && cp <= 0x1f9ff) || (cp >= 0x20000 && cp <= 0x3fffd)

const isZeroWidth = (cp: number): boolean =>
  (cp >= 0x300 && cp <= 0x36f) || (cp >= 0x200b && cp <= 0x200f) || (cp >= 0xfe00 && cp <= 0xfe0f)

/** The columns one character takes on a terminal: East Asian wide characters two, combining marks none. */
const charWidth = (char: string): number => {
  const cp = char.codePointAt(0)!
  return isZeroWidth(cp) ? 0 : isWide(cp) ? 2 : 1
}

/** The columns a line of text (no controls, no tabs) takes on a terminal. */
export const widthOf = (text: string): number => {
  let width = 0
  for (const char of text) width += charWidth(char)
  return width
}

const isControl = (char: string): boolean => {
  const cp = char.codePointAt(0)!
  return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f)
}

/** Tabs as spaces to the next stop of 8, and no control characters: what a tool's text may carry to a terminal. */
const printable = (line: string): string => {
  let out = ""
  let column = 0
  for (const char of line) {
    if (char === "\t") {
      const spaces = 8 - (column % 8)
      out += " ".repeat(spaces)
      column += spaces
    } else if (!isControl(char)) {
      out += char
      column += charWidth(char)
    }
  }
  return out
}

/** The text cut to `width` columns, an ellipsis showing where; it reads no further than the cut. */
export const truncate = (text: string, width: number): string => {
  if (width <= 0) return ""
  let used = 0
  let end = 0
  let fits = 0
  for (const char of text) {
    used += charWidth(char)
    if (used > width) return `${text.slice(0, fits)}…`
    end += char.length
    if (used <= width - 1) fits = end
  }
  return text
}

/** The text cut or padded to exactly `width` columns. */
export const cell = (text: string, width: number): string => {
  const cut = truncate(text, width)
  return cut + " ".repeat(Math.max(0, width - widthOf(cut)))
}

/**
 * The most of a text a row ever shows, taken before whitespace is collapsed: a tool's output or a model's
 * arguments may be megabytes, and a row is redrawn on every event.
 */
const ROW_CHARS = 2_000

/** Any text as one printable line: whitespace runs become one space. */
export const oneLine = (text: string): string => printable(text.slice(0, ROW_CHARS).replace(/\s+/g, " ").trim())

/**
 * Text as lines of at most `width` columns, each starting with `indent`: a line too long breaks at its last space
 * that fits, or anywhere if it has none. One pass over the text (a server's instructions may be long).
 */
export const wrap = (text: string, width: number, indent = ""): Array<string> => {
  const room = Math.max(1, width - widthOf(indent))
  const lines: Array<string> = []
  for (const raw of text.split("\n")) {
    const chars = [...printable(raw)]
    let start = 0
    let used = 0
    let space = -1
    for (let i = 0; i < chars.length;) {
      const w = charWidth(chars[i])
      if (used + w > room && i > start) {
        const breakAtSpace = space > start
        lines.push(indent + chars.slice(start, breakAtSpace ? space : i).join("").trimEnd())
        start = breakAtSpace ? space + 1 : i
        i = start
        used = 0
        space = -1
        continue
      }
      if (chars[i] === " ") space = i
      used += w
      i++
    }
    const rest = chars.slice(start).join("")
    lines.push(rest === "" ? "" : indent + rest)
  }
  return lines
}

/** Writes text that fits: on a terminal, wrapped to its width; elsewhere as it is. */
export const writeText = (sink: Sink, text: string, indent = ""): void => {
  const body = text.endsWith("\n") ? text.slice(0, -1) : text
  const lines = sink.isTTY
    ? wrap(body, sink.columns - 1, indent)
    : body.split("\n").map((l) => (l === "" ? "" : indent + l))
  sink.write(`${lines.join("\n")}\n`)
}

// ---------------------------------------------------------------------------------------------------------------
// a batch, live
// ---------------------------------------------------------------------------------------------------------------

/** What the model reads for one outcome. */
export const modelText = (outcome: Executor.Outcome): string =>
  Either.isRight(outcome) ? ToolResult.toText(outcome.right) : ToolError.toModelText(outcome.left)

/** How a call is named wherever it is shown: its 1-based place in the batch. */
export const label = (index: number): string => `#${index + 1}`

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

/** The narrowest the state column gets before the arguments column gives up room. */
const STATE_MIN = 26
const NAME_MAX = 20
const ARGUMENTS_MAX = 36

export const makeView = (calls: ReadonlyArray<Executor.ToolCall>, sink: Sink): View => {
  const states: Array<State> = calls.map(() => ({ _tag: "waiting" }))
  const outcomes: Array<Executor.Outcome> = new Array(calls.length)
  // a terminal's last column is left free: some terminals wrap a line that fills it
  const width = Math.max(20, sink.isTTY ? sink.columns - 1 : sink.columns)
  const numberWidth = label(calls.length - 1).length
  const nameWidth = Math.min(NAME_MAX, Math.max(4, ...calls.map((c) => widthOf(c.name))))
  const room = width - numberWidth - nameWidth - 3
  const argumentsWidth = Math.max(0, Math.min(ARGUMENTS_MAX, room - STATE_MIN))
  const stateWidth = room - argumentsWidth
  const rowOf = (i: number): string => {
    const call = calls[i]
    const state = states[i]
    const head = [
      cell(label(i), numberWidth),
      cell(oneLine(call.name), nameWidth),
      ...(argumentsWidth > 0 ? [cell(oneLine(describeArguments(call)), argumentsWidth)] : [])
    ].join(" ")
    const status = (mark: string, code: string, text: string) =>
      `${head} ${paint(sink, code, mark)} ${truncate(text, stateWidth - 2)}`
    switch (state._tag) {
      case "waiting":
        return status("…", "2", "waiting")
      case "running": {
        const elapsed = `${((Date.now() - state.since) / 1000).toFixed(1)}s`
        return status("▶", "33", oneLine(`${elapsed} ${state.progress}`))
      }
      case "done": {
        const summary = oneLine(`${(state.millis / 1000).toFixed(1)}s ${state.summary}`)
        return state.ok ? status("✓", "32", summary) : status("✗", "31", summary)
      }
    }
  }
  // at most the terminal's rows less two: cursor-up cannot reach a row scrolled away, the cursor takes the last row,
  // and a block starting on the top row would be erased as a whole screen, which tmux (and terminals like it) keep
  // in their history, each redraw adding a copy
  const shownRows = calls.length <= sink.rows - 2 ? calls.length : Math.max(0, sink.rows - 3)
  const blockOf = (): Array<string> => {
    const rows = Array.from({ length: shownRows }, (_, i) => rowOf(i))
    if (shownRows < calls.length) {
      const rest = states.slice(shownRows)
      const done = rest.filter((s) => s._tag === "done").length
      const running = rest.filter((s) => s._tag === "running").length
      rows.push(truncate(`… ${rest.length} more calls: ${running} running, ${done} done`, width))
    }
    return rows
  }
  let drawn = 0
  const clear = () => {
    if (drawn > 0) sink.write(`\x1b[${drawn}A\x1b[0J`)
    drawn = 0
  }
  const redraw = () => {
    clear()
    const block = blockOf()
    sink.write(block.map((row) => `${row}\n`).join(""))
    drawn = block.length
  }
  if (sink.isTTY) redraw()
  return {
    outcomes,
    note: (text) => {
      if (sink.isTTY) clear()
      writeText(sink, text)
      if (sink.isTTY) redraw()
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
      if (sink.isTTY) redraw()
      else sink.write(`${rowOf(i)}\n`)
    }
  }
}

/** Renders a batch's events as they come and gives the outcomes in call order. */
export const renderBatch = (
  view: View,
  events: Stream.Stream<Executor.ToolEvent>
): Effect.Effect<ReadonlyArray<Executor.Outcome>> =>
  Effect.as(Stream.runForEach(events, (event) => Effect.sync(() => view.event(event))), view.outcomes)
