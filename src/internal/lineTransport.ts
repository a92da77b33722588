/**
 * MCP's stdio transport, ours: one JSON-RPC message per line, in and out.
 *
 * The SDK's own stdio transport checks each line against its message schema and drops what fails with no answer
 * (a request whose `params` is an array, a batch); this one hands every line that is JSON to `onmessage` as it is,
 * for the server's own check (`jsonRpc.check`) to answer or take, and answers a line that is not JSON with
 * `-32700` itself. A line longer than `maxLineBytes` ends the connection: what it was cannot be known, and its
 * sender is not speaking the protocol. Writes wait for `drain` when the output is full.
 *
 * A long message (a tool's result of megabytes) is written in pieces of {@link PIECE_CHARS}, each after the output
 * has room, with the messages sent meanwhile queued behind it: written whole, its line is held twice more besides
 * the JSON (the JSON with its newline, the bytes the stream makes of that), and a 10 MB result cost the server 30 MB
 * at its peak; in pieces, 21 MB (benchmark row 15).
 *
 * @internal
 */
import type { JSONRPCMessage, Transport } from "@modelcontextprotocol/server"
import type { Readable, Writable } from "node:stream"
import { errorResponse, parseError } from "./jsonRpc.js"
import { reasonOf } from "./reason.js"

const NEWLINE = 0x0a

/** A message of more characters than this is written in pieces of this many (never splitting a surrogate pair). */
export const PIECE_CHARS = 256 * 1024

/** The end of the piece of `text` that starts at `at`: at most `PIECE_CHARS` on, never between a surrogate pair. */
export const pieceEnd = (text: string, at: number): number => {
  const end = Math.min(text.length, at + PIECE_CHARS)
  if (end === text.length) return end
  const last = text.charCodeAt(end - 1)
  return last >= 0xd800 && last <= 0xdbff ? end - 1 : end
}

export class LineTransport implements Transport {
  onclose?: (() => void) | undefined
  onerror?: ((error: Error) => void) | undefined
  onmessage?: ((message: JSONRPCMessage) => void) | undefined
  /** The start of a line whose end has not arrived, in pieces. */
  private pending: Array<Buffer> = []
  private pendingBytes = 0
  private closed = false
  /** The last write of a long message in pieces, while one is under way: what is sent meanwhile waits for it. */
  private writing: Promise<void> | undefined = undefined

  constructor(
    private readonly input: Readable,
    private readonly output: Writable,
    private readonly maxLineBytes: number
  ) {}

  start(): Promise<void> {
    this.input.on("data", this.ondata)
    this.input.on("error", this.oninputerror)
    return Promise.resolve()
  }

  private readonly ondata = (chunk: Buffer | string): void => {
    const data = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk
    let start = 0
    for (let newline = data.indexOf(NEWLINE); newline >= 0; newline = data.indexOf(NEWLINE, start)) {
      const piece = data.subarray(start, newline)
      start = newline + 1
      if (this.pendingBytes + piece.length > this.maxLineBytes) return this.tooLong()
      const line = this.pendingBytes === 0 ? piece : Buffer.concat([...this.pending, piece])
      this.pending = []
      this.pendingBytes = 0
      this.line(line.toString("utf8"))
      if (this.closed) return
    }
    if (start === data.length) return
    const rest = data.subarray(start)
    if (this.pendingBytes + rest.length > this.maxLineBytes) return this.tooLong()
    this.pending.push(rest)
    this.pendingBytes += rest.length
  }

  private line(text: string): void {
    const line = text.endsWith("\r") ? text.slice(0, -1) : text
    if (line.trim() === "") return
    let value: unknown
    try {
      value = JSON.parse(line)
    } catch (error) {
      const reason = reasonOf(error)
      this.onerror?.(new Error(`a line that is not JSON was answered with a parse error: ${reason}`))
      void this.send(errorResponse(parseError(reason)))
      return
    }
    this.onmessage?.(value as JSONRPCMessage)
  }

  private tooLong(): void {
    this.onerror?.(
      new Error(`a message longer than ${this.maxLineBytes} bytes (maxMessageBytes) arrived: the connection is closed`)
    )
    void this.close()
  }

  private readonly oninputerror = (error: Error): void => {
    this.onerror?.(error)
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) return Promise.resolve()
    const json = JSON.stringify(message)
    if (this.writing === undefined && json.length <= PIECE_CHARS) return this.write(json + "\n")
    const written = (this.writing ?? Promise.resolve()).then(() =>
      json.length <= PIECE_CHARS ? this.write(json + "\n") : this.writePieces(json)
    )
    this.writing = written
    void written.then(() => {
      if (this.writing === written) this.writing = undefined
    })
    return written
  }

  private write(text: string): Promise<void> {
    return new Promise((resolve) => {
      if (this.closed || this.output.write(text)) resolve()
      else this.output.once("drain", resolve)
    })
  }

  private async writePieces(json: string): Promise<void> {
    for (let at = 0; at < json.length && !this.closed;) {
      const end = pieceEnd(json, at)
      await this.write(json.slice(at, end))
      at = end
    }
    await this.write("\n")
  }

  close(): Promise<void> {
    if (this.closed) return Promise.resolve()
    this.closed = true
    this.input.off("data", this.ondata)
    this.input.off("error", this.oninputerror)
    // nobody else reading: stop reading, so the process can end
    if (this.input.listenerCount("data") === 0) this.input.pause()
    this.pending = []
    this.pendingBytes = 0
    this.onclose?.()
    return Promise.resolve()
  }
}
