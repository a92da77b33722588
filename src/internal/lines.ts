/**
 * Lines, the framing of both JSON-lines edges (MCP over stdio, the stdio tool-provider protocol), on both sides:
 * {@link lineSplitter} cuts a byte stream into lines with a cap on a line's length, {@link lineQueue} writes lines
 * so that a burst goes out in one write, and {@link memberAtEdges} tells whose message an over-long line was from
 * the few bytes of it that are kept.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import { constants } from "node:buffer"

// ---------------------------------------------------------------------------------------------------------------
// reading lines
// ---------------------------------------------------------------------------------------------------------------

/** A line longer than a splitter's `maxLineBytes`: its length and its first and last bytes, as text. */
export interface OversizeLine {
  readonly bytes: number
  readonly head: string
  readonly tail: string
}

/** Bytes kept of each end of an oversize line. */
const OVERSIZE_EDGE_BYTES = 256

/**
 * Splits a byte stream into lines, with no limit on a line's length unless `maxLineBytes` is given: chunks are kept
 * as they come and joined once per line, so a 50 MB line costs one copy. A trailing `\r` is dropped. With
 * `maxLineBytes`, a longer line is not kept: its bytes are counted and dropped as they come, and at its end
 * `onOversize` gets its length and its first and last bytes (enough to tell whose answer it was); the next line is
 * read as usual. Memory is bounded by the cap, whatever the peer writes.
 */
export const lineSplitter = (
  onLine: (line: string) => void,
  options?: {
    readonly maxLineBytes: number
    readonly onOversize: (line: OversizeLine) => void
  }
): { push: (chunk: Buffer) => void; end: () => void } => {
  const max = options?.maxLineBytes ?? Infinity
  let pending: Array<Buffer> = []
  let pendingBytes = 0
  // while dropping an oversize line: its length so far, its first bytes and its last bytes
  let dropped: { bytes: number; head: Buffer; tail: Buffer } | undefined
  const drop = (piece: Buffer) => {
    if (dropped === undefined) {
      const start = Buffer.concat([...pending, piece])
      pending = []
      pendingBytes = 0
      dropped = { bytes: start.length, head: start.subarray(0, OVERSIZE_EDGE_BYTES), tail: Buffer.alloc(0) }
      dropped.tail = Buffer.from(start.subarray(Math.max(0, start.length - OVERSIZE_EDGE_BYTES)))
      return
    }
    dropped.bytes += piece.length
    const tail = piece.length >= OVERSIZE_EDGE_BYTES ? piece : Buffer.concat([dropped.tail, piece])
    dropped.tail = Buffer.from(tail.subarray(Math.max(0, tail.length - OVERSIZE_EDGE_BYTES)))
  }
  const endDropped = () => {
    const line = dropped!
    dropped = undefined
    options!.onOversize({ bytes: line.bytes, head: line.head.toString("utf8"), tail: line.tail.toString("utf8") })
  }
  return {
    push: (chunk) => {
      let start = 0
      let at = chunk.indexOf(10)
      while (at >= 0) {
        const piece = chunk.subarray(start, at)
        if (dropped !== undefined || pendingBytes + piece.length > max) {
          drop(piece)
          endDropped()
        } else {
          const line = pending.length === 0 ? piece : Buffer.concat([...pending, piece])
          pending = []
          pendingBytes = 0
          const text = line.toString("utf8")
          onLine(text.endsWith("\r") ? text.slice(0, -1) : text)
        }
        start = at + 1
        at = chunk.indexOf(10, start)
      }
      if (start < chunk.length) {
        const rest = chunk.subarray(start)
        if (dropped !== undefined || pendingBytes + rest.length > max) {
          drop(rest)
        } else {
          pending.push(rest)
          pendingBytes += rest.length
        }
      }
    },
    end: () => {
      if (dropped !== undefined) return endDropped()
      if (pending.length === 0) return
      const text = Buffer.concat(pending).toString("utf8")
      pending = []
      pendingBytes = 0
      onLine(text.endsWith("\r") ? text.slice(0, -1) : text)
    }
  }
}

/**
 * The value of `key` in an oversize line that is a JSON object, read from its first or its last bytes: the member
 * written first (`{"call_id":"7",...`, after the members `leading` matches, such as JSON-RPC's `"jsonrpc":"2.0",`)
 * or last (`...,"call_id":"7"}`). A string or an integer; `undefined` when neither end has it. A member of a nested
 * object is never taken for it: at the start it would not be the first member, at the end not followed by the
 * line's last `}`.
 */
export const memberAtEdges = (
  line: OversizeLine,
  key: string,
  leading = ""
): string | number | undefined => {
  const name = JSON.stringify(key).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
  const value = String.raw`(-?\d+|"(?:[^"\\]|\\.)*")`
  const atStart = new RegExp(String.raw`^\s*\{\s*(?:${leading})?${name}\s*:\s*${value}\s*,`).exec(line.head)
  const atEnd = new RegExp(String.raw`[{,]\s*${name}\s*:\s*${value}\s*\}\s*$`).exec(line.tail)
  const found = atStart?.[1] ?? atEnd?.[1]
  if (found === undefined) return undefined
  try {
    return JSON.parse(found) as string | number
  } catch {
    return undefined
  }
}

/** Formats a byte count the way a message wants it: `16 MiB`, `512 KiB`, `100 bytes`. */
export const formatBytes = (bytes: number): string => {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`
  return `${bytes} bytes`
}

/**
 * The largest cap a line may have: a longer line could not be made a string at all (V8 throws
 * `ERR_STRING_TOO_LONG` past about 512 MiB, from a stream callback, where it kills the process).
 */
export const MAX_LINE_CAP: number = constants.MAX_STRING_LENGTH

/** Whether `value` is a usable line cap: a positive integer up to {@link MAX_LINE_CAP}. */
export const isLineCap = (value: number): boolean => Number.isInteger(value) && value > 0 && value <= MAX_LINE_CAP

// ---------------------------------------------------------------------------------------------------------------
// writing lines
// ---------------------------------------------------------------------------------------------------------------

/** Queues a line and calls `done` once its write has ended; the function it gives drops the line if its write has
 * not started. */
export type LineQueue<E> = (line: string, done: (exit: Exit.Exit<void, E>) => void) => () => void

/**
 * Writes lines so that the lines sent while a write is in flight go out together in the next one. A write to a
 * pipe is a system call that wakes the reader, and costs more than answering a no-op call: under load one write
 * carries a burst of lines instead of one each. A line sent while nothing is being written goes out at once, so a
 * lone call waits for nothing; lines go out in the order they were sent, each whole. A line dropped before its
 * write starts is not written; every sender in a write that fails gets its error.
 *
 * Outside Effect (a write that takes a callback, callers that need no fiber); {@link lineWriter} is a line as an
 * Effect on top of it.
 */
export const lineQueue = <E>(
  write: (text: string, done: (exit: Exit.Exit<void, E>) => void) => void
): LineQueue<E> => {
  interface Queued {
    readonly line: string
    readonly done: (exit: Exit.Exit<void, E>) => void
    dropped: boolean
  }
  let queued: Array<Queued> = []
  let writing = false
  const next = (): void => {
    const batch = queued.filter((entry) => !entry.dropped)
    queued = []
    writing = batch.length > 0
    if (!writing) return
    let text = batch[0].line
    for (let i = 1; i < batch.length; i++) text += batch[i].line
    write(text, (exit) => {
      for (const entry of batch) entry.done(exit)
      next()
    })
  }
  return (line, done) => {
    const entry: Queued = { line, done, dropped: false }
    queued.push(entry)
    if (!writing) next()
    return () => {
      entry.dropped = true
    }
  }
}

/** A line through a {@link lineQueue} as an Effect: it ends when the line's write has ended; a line whose sender
 * is interrupted before its write starts is not written. */
export const lineWriter = <E>(send: LineQueue<E>) => (line: string): Effect.Effect<void, E> =>
  Effect.async<void, E>((resume) => Effect.sync(send(line, resume)))
