/**
 * The CLI's width rules (src/cli/render.ts) on a sink that records what it is given: rows that fit any terminal,
 * whatever a tool's text holds, and a redraw that never has more rows than the terminal.
 */
import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import { makeView, type Sink, truncate, widthOf, wrap } from "../src/cli/render.js"
import { ToolResult } from "../src/index.js"

const recording = (columns: number, rows: number, isTTY = true) => {
  const written: Array<string> = []
  const sink: Sink = { write: (text) => void written.push(text), isTTY, color: false, columns, rows }
  return { sink, text: () => written.join("") }
}

// eslint-disable-next-line no-control-regex
const UP = /\x1b\[(\d+)A\x1b\[0J/g

const calls = (n: number, name = "read_file") =>
  Array.from({ length: n }, (_, i) => ({ id: `call_${i + 1}`, name, arguments: `{"path":"file-${i + 1}.txt"}` }))

describe("the CLI's rendering", () => {
  it("widthOf counts East Asian wide characters twice and combining marks not at all", () => {
    expect(widthOf("abc")).toBe(3)
    expect(widthOf("日本語")).toBe(6)
    expect(widthOf("e\u0301")).toBe(1)
  })

  it("truncate cuts to the width, an ellipsis included, never splitting a wide character past it", () => {
    expect(truncate("abcdef", 6)).toBe("abcdef")
    expect(truncate("abcdefg", 6)).toBe("abcde…")
    expect(truncate("日本語です", 6)).toBe("日本…")
    expect(widthOf(truncate("日本語です", 5))).toBeLessThanOrEqual(5)
  })

  it("wrap breaks at a space that fits, or anywhere, and takes out control characters and tabs", () => {
    expect(wrap("one two three four", 9)).toEqual(["one two", "three", "four"])
    expect(wrap("abcdefghij", 4)).toEqual(["abcd", "efgh", "ij"])
    expect(wrap("a\tb\u001b[31mred", 80)).toEqual(["a       b[31mred"])
    expect(wrap("x y", 10, "  ")).toEqual(["  x y"])
  })

  // the timeout is the assertion: measuring the line again per character took minutes here, one pass takes 0.4 s
  it("a megabyte of text wraps in one pass; tabs in it are expanded without measuring the line again", () => {
    const lines = wrap("word\t".repeat(200_000), 80)
    expect(lines.length).toBe(20_000)
    for (const line of lines) expect(widthOf(line)).toBeLessThanOrEqual(80)
    expect(truncate("x".repeat(5_000_000), 10)).toBe("xxxxxxxxx…")
  }, 20_000)

  it("every row fits a narrow terminal, whatever the call's name, arguments and output", () => {
    const { sink, text } = recording(40, 24)
    const batch = [
      { id: "a", name: "a_very_long_tool_name_indeed_longer_than_twenty", arguments: "{\"q\":\"日本語".repeat(20) },
      { id: "b", name: "b", arguments: { text: "line\nbreaks\tand\u0007bells" } }
    ]
    const view = makeView(batch, sink)
    view.event({ _tag: "Started", index: 0, call: batch[0] })
    view.event({
      _tag: "Finished",
      index: 1,
      call: batch[1],
      outcome: Either.right(ToolResult.text("終わり".repeat(30))),
      durationMillis: 12
    })
    const lines = text().replace(UP, "").split("\n").filter((line) => line !== "")
    expect(lines.length).toBeGreaterThan(0)
    for (const line of lines) {
      expect(widthOf(line), line).toBeLessThan(40)
      // eslint-disable-next-line no-control-regex
      expect(line).not.toMatch(/[\u0000-\u001f]/)
    }
  })

  it("a batch with more calls than the terminal has rows redraws a block that fits, the rest summed up", () => {
    const { sink, text } = recording(80, 6)
    const batch = calls(12)
    const view = makeView(batch, sink)
    view.event({ _tag: "Started", index: 11, call: batch[11] })
    const ups = [...text().matchAll(UP)].map((m) => Number(m[1]))
    expect(ups).toEqual([4])
    const last = text().slice(text().lastIndexOf("\x1b[0J") + "\x1b[0J".length).split("\n").filter((l) => l !== "")
    expect(last).toHaveLength(4)
    expect(last[3]).toBe("… 9 more calls: 1 running, 0 done")
  })

  it("into a pipe: no redraw, one row per change", () => {
    const { sink, text } = recording(100, Infinity, false)
    const batch = calls(3)
    const view = makeView(batch, sink)
    expect(text()).toBe("")
    view.event({ _tag: "Started", index: 1, call: batch[1] })
    expect(text()).not.toContain("\x1b")
    expect(text().split("\n").filter((l) => l !== "")).toHaveLength(1)
    expect(text()).toMatch(/^#2 read_file \{"path":"file-2\.txt"\} +▶ 0\.0s\n$/)
  })
})
