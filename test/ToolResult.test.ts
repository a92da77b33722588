import { describe, expect, it } from "@effect/vitest"
import { Equal, Hash, HashSet } from "effect"
import { inspect } from "node:util"
import { Recorder, ToolResult } from "../src/index.js"

describe("ToolResult", () => {
  describe("constructors", () => {
    it("text is one text part, no structured output, not terminating", () => {
      const result = ToolResult.text("hello")
      expect(result.content).toEqual([{ type: "text", text: "hello" }])
      expect(result.structured).toBeUndefined()
      expect(result.details).toBeUndefined()
      expect(result.terminate).toBe(false)
    })

    it("json is the value's JSON text with the value as structured output", () => {
      const value = { sum: 5, items: [1, 2] }
      const result = ToolResult.json(value)
      expect(result.content).toEqual([{ type: "text", text: "{\"sum\":5,\"items\":[1,2]}" }])
      expect(result.structured).toBe(value)
    })

    it("json throws for a value that cannot become JSON", () => {
      const cyclic: Record<string, unknown> = {}
      cyclic.self = cyclic
      expect(() => ToolResult.json(cyclic)).toThrow()
      expect(() => ToolResult.json({ n: 1n })).toThrow()
    })

    it("parts keeps the parts as given", () => {
      const parts: ReadonlyArray<ToolResult.Content> = [
        { type: "text", text: "a chart:" },
        { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
        { type: "resource", resource: { uri: "file:///a.txt", text: "a" } },
        { type: "resource_link", uri: "file:///b.txt", name: "b.txt" }
      ]
      const result = ToolResult.parts(parts)
      expect(result.content).toEqual(parts)
      expect(result.terminate).toBe(false)
    })

    it("image encodes bytes as base64", () => {
      const result = ToolResult.image(new Uint8Array([137, 80, 78, 71]), "image/png")
      expect(result.content).toEqual([{ type: "image", data: "iVBORw==", mimeType: "image/png" }])
    })

    it("image takes base64 text as is", () => {
      const result = ToolResult.image("iVBORw0KGgo=", "image/png")
      expect(result.content).toEqual([{ type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" }])
    })

    it("make defaults terminate to false and leaves absent fields out", () => {
      const result = ToolResult.make({ content: [] })
      expect(result.terminate).toBe(false)
      expect("structured" in result).toBe(false)
      expect("details" in result).toBe(false)
    })
  })

  describe("modifiers", () => {
    it("withDetails attaches details and keeps everything else", () => {
      const base = ToolResult.withTerminate(ToolResult.json({ a: 1 }))
      const result = ToolResult.withDetails(base, { pid: 42 })
      expect(result.details).toEqual({ pid: 42 })
      expect(result.content).toEqual(base.content)
      expect(result.structured).toEqual({ a: 1 })
      expect(result.terminate).toBe(true)
      expect(base.details).toBeUndefined()
    })

    it("withDetails works data-last in a pipe", () => {
      const result = ToolResult.text("started").pipe(ToolResult.withDetails({ pid: 7 }))
      expect(result.details).toEqual({ pid: 7 })
      expect(ToolResult.toText(result)).toBe("started")
    })

    it("withTerminate sets the hint and keeps everything else", () => {
      const base = ToolResult.withDetails(ToolResult.json({ a: 1 }), "d")
      const result = ToolResult.withTerminate(base)
      expect(result.terminate).toBe(true)
      expect(result.details).toBe("d")
      expect(result.structured).toEqual({ a: 1 })
      expect(result.content).toEqual(base.content)
      expect(base.terminate).toBe(false)
    })
  })

  describe("toText", () => {
    it("joins the text parts with newlines and skips the rest", () => {
      const result = ToolResult.parts([
        { type: "text", text: "a" },
        { type: "image", data: "iVBORw==", mimeType: "image/png" },
        { type: "text", text: "b" },
        { type: "resource_link", uri: "file:///c", name: "c" },
        { type: "text", text: "" }
      ])
      expect(ToolResult.toText(result)).toBe("a\nb\n")
    })

    it("is empty for a result with no text parts", () => {
      expect(ToolResult.toText(ToolResult.image("iVBORw==", "image/png"))).toBe("")
      expect(ToolResult.toText(ToolResult.parts([]))).toBe("")
    })

    it("is the text of a text result", () => {
      expect(ToolResult.toText(ToolResult.text("line 1\nline 2"))).toBe("line 1\nline 2")
    })
  })

  describe("guards", () => {
    it("isContent accepts every MCP content shape", () => {
      expect(ToolResult.isContent({ type: "text", text: "x" })).toBe(true)
      expect(ToolResult.isContent({ type: "image", data: "AA==", mimeType: "image/png" })).toBe(true)
      expect(ToolResult.isContent({ type: "audio", data: "AA==", mimeType: "audio/wav" })).toBe(true)
      expect(ToolResult.isContent({ type: "resource", resource: { uri: "file:///a", text: "a" } })).toBe(true)
      expect(ToolResult.isContent({ type: "resource_link", uri: "file:///a", name: "a" })).toBe(true)
    })

    it("isContent refuses incomplete or unknown parts", () => {
      expect(ToolResult.isContent({ type: "text" })).toBe(false)
      expect(ToolResult.isContent({ type: "text", text: 1 })).toBe(false)
      expect(ToolResult.isContent({ type: "image", data: "AA==" })).toBe(false)
      expect(ToolResult.isContent({ type: "audio", mimeType: "audio/wav" })).toBe(false)
      expect(ToolResult.isContent({ type: "resource", resource: { text: "a" } })).toBe(false)
      expect(ToolResult.isContent({ type: "resource_link", uri: "file:///a" })).toBe(false)
      expect(ToolResult.isContent({ type: "video", data: "AA==" })).toBe(false)
      expect(ToolResult.isContent("text")).toBe(false)
      expect(ToolResult.isContent(null)).toBe(false)
      expect(ToolResult.isContent(["text"])).toBe(false)
    })

    it("isToolResult recognises results, not look-alikes", () => {
      expect(ToolResult.isToolResult(ToolResult.text("x"))).toBe(true)
      expect(ToolResult.isToolResult({ content: [], terminate: false })).toBe(false)
    })
  })

  describe("a value", () => {
    const rich = () =>
      ToolResult.make({
        content: [{ type: "text", text: "a" }, { type: "image", data: "iVBORw==", mimeType: "image/png" }],
        structured: { items: [1, { b: 2, c: [3] }], when: new Date(0) },
        // a value with an Equal of its own is compared with it (a Schema.Class compares its fields, shallowly)
        details: new Recorder.Record({ namespace: "proc", data: 42 }),
        terminate: true
      })

    it("two results with the same content, structured output, details and terminate are equal, with one hash", () => {
      expect(Equal.equals(rich(), rich())).toBe(true)
      expect(Hash.hash(rich())).toBe(Hash.hash(rich()))
      // key order in plain objects does not matter
      const ab = ToolResult.json({ a: 1, b: { c: 2, d: 3 } })
      const ba = ToolResult.make({ content: ab.content, structured: { b: { d: 3, c: 2 }, a: 1 } })
      expect(Equal.equals(ab, ba)).toBe(true)
      expect(Hash.hash(ab)).toBe(Hash.hash(ba))
      expect(HashSet.size(HashSet.make(rich(), rich(), ToolResult.text("x"), ToolResult.text("x")))).toBe(2)
    })

    it("a result differing in any one field is not equal", () => {
      const base = ToolResult.json({ a: [1, 2] })
      expect(Equal.equals(base, ToolResult.json({ a: [1, 3] }))).toBe(false)
      expect(Equal.equals(base, ToolResult.json({ a: [1, 2, 3] }))).toBe(false)
      expect(Equal.equals(base, ToolResult.withTerminate(base))).toBe(false)
      expect(Equal.equals(base, ToolResult.withDetails(base, { pid: 1 }))).toBe(false)
      expect(Equal.equals(ToolResult.withDetails(base, { pid: 1 }), ToolResult.withDetails(base, { pid: 2 }))).toBe(
        false
      )
      expect(
        Equal.equals(base, ToolResult.make({ content: [{ type: "text", text: "{}" }], structured: { a: [1, 2] } }))
      )
        .toBe(false)
      expect(Equal.equals(ToolResult.text("a"), ToolResult.text("b"))).toBe(false)
      expect(Equal.equals(ToolResult.text("a"), { content: [{ type: "text", text: "a" }], terminate: false })).toBe(
        false
      )
    })

    it("compares values deeper than the stack and cyclic values without overflowing, and hashes them", () => {
      const nest = (depth: number) => {
        let value: unknown = "leaf"
        for (let i = 0; i < depth; i++) value = [value]
        return value
      }
      const deep = () => ToolResult.make({ content: [], structured: nest(200_000) })
      expect(Equal.equals(deep(), deep())).toBe(true)
      expect(Hash.hash(deep())).toBe(Hash.hash(deep()))
      const cycle = () => {
        const node: Record<string, unknown> = { name: "n" }
        node.self = node
        return ToolResult.make({ content: [], structured: node })
      }
      expect(Equal.equals(cycle(), cycle())).toBe(true)
      expect(Hash.hash(cycle())).toBe(Hash.hash(cycle()))
      // shared branches, 2^60 paths: each pair is visited once, the hash stops at its budget
      const shared = () => {
        let value: unknown = "leaf"
        for (let i = 0; i < 60; i++) value = [value, value]
        return ToolResult.make({ content: [], structured: value })
      }
      expect(Equal.equals(shared(), shared())).toBe(true)
      expect(Hash.hash(shared())).toBe(Hash.hash(shared()))
    })

    it("shows its fields in toJSON, toString and util.inspect", () => {
      const result = ToolResult.withDetails(ToolResult.json({ sum: 5 }), { pid: 42 })
      const json = {
        _id: "ToolResult",
        content: [{ type: "text", text: "{\"sum\":5}" }],
        structured: { sum: 5 },
        details: { pid: 42 },
        terminate: false
      }
      expect(result.toJSON()).toEqual(json)
      expect(String(result)).toBe(JSON.stringify(json, null, 2))
      expect(inspect(result)).toBe(inspect(json))
      expect(JSON.parse(JSON.stringify(result))).toEqual(json)
      expect(ToolResult.text("x").toJSON()).toEqual({
        _id: "ToolResult",
        content: [{ type: "text", text: "x" }],
        terminate: false
      })
    })
  })
})
