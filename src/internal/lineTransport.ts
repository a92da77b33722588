/**
 * MCP's stdio transport, ours: one JSON-RPC message per line, in and out.
 *
 * The SDK's own stdio transport checks each line against its message schema and drops what fails with no answer
 * (a request whose `params` is an array, a batch); this one hands every line that is JSON to `onmessage` as it is,
 * for the server's own check (`jsonRpc.check`) to answer or take, and answers a line that is not JSON with
 * `-32700` itself. A line longer than `maxLineBytes` ends the connection: what it was cannot be known, and its
 * sender is not speaking the protocol. Writes wait for `drain` when the output is full.
 *
 * @internal
 */
import type { JSONRPCMessage, Transport } from "@modelcontextprotocol/server"
import type { Readable, Writable } from "node:stream"
import { errorResponse, parseError } from "./jsonRpc.js"
import { reasonOf } from "./reason.js"

const NEWLINE = 0x0a

export class LineTransport implements Transport {
  onclose?: (() => void) | undefined
  onerror?: ((error: Error) => void) | undefined
  onmessage?: ((message: JSONRPCMessage) => void) | undefined
  /** The start of a line whose end has not arrived, in pieces. */
  private pending: Array<Buffer> = []
  private pendingBytes = 0
  private closed = false

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
    const line = JSON.stringify(message) + "\n"
    return new Promise((resolve) => {
      if (this.output.write(line)) resolve()
      else this.output.once("drain", resolve)
    })
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
