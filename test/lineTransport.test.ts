/**
 * MCP's stdio transport, ours (src/internal/lineTransport.ts): a long message goes out in pieces, whole and in
 * order with what is sent while it is written, its characters intact where a piece ends.
 */
import { describe, expect, it } from "@effect/vitest"
import { PassThrough } from "node:stream"
import { LineTransport, PIECE_CHARS, pieceEnd } from "../src/internal/lineTransport.js"

/** A transport writing into a stream that holds little, read slowly: every piece waits for room. */
const connected = () => {
  const output = new PassThrough({ highWaterMark: 1024 })
  const transport = new LineTransport(new PassThrough(), output, 1024)
  let written = ""
  let pieces = 0
  output.setEncoding("utf8")
  const read = () => {
    for (let chunk = output.read(); chunk !== null; chunk = output.read()) {
      written += chunk
      pieces++
    }
  }
  output.on("readable", () => setTimeout(read, 0))
  return { transport, written: () => written, pieces: () => pieces }
}

describe("LineTransport", () => {
  it("a message longer than a piece arrives whole, its surrogate pairs intact, before what was sent after it", async () => {
    const { pieces, transport, written } = connected()
    // an emoji (two UTF-16 units) across the end of the first piece
    const text = "a".repeat(PIECE_CHARS - 60) + "\u{1F600}" + "b".repeat(PIECE_CHARS)
    const long = { jsonrpc: "2.0" as const, id: 1, result: { content: [{ type: "text", text }] } }
    const short = { jsonrpc: "2.0" as const, id: 2, result: {} }
    await Promise.all([transport.send(long), transport.send(short)])
    await new Promise((resolve) => setTimeout(resolve, 20))
    const lines = written().split("\n")
    expect(lines).toHaveLength(3)
    expect(JSON.parse(lines[0])).toEqual(long)
    expect(JSON.parse(lines[1])).toEqual(short)
    expect(lines[2]).toBe("")
    expect(pieces()).toBeGreaterThan(2)
  })

  it("a piece never ends between the two halves of a surrogate pair", () => {
    const text = "x".repeat(PIECE_CHARS - 1) + "\u{1F600}" + "y"
    expect(pieceEnd(text, 0)).toBe(PIECE_CHARS - 1)
    expect(pieceEnd(text, PIECE_CHARS - 1)).toBe(text.length)
    expect(pieceEnd("x".repeat(PIECE_CHARS + 5), 0)).toBe(PIECE_CHARS)
  })
})
