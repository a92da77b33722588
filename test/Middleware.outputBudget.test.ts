/**
 * Output budgets (`Middleware.outputBudget`): the cut (head, marker, tail; at most the budget; line boundaries;
 * never half a surrogate pair; media whole), the spill (the whole output in a private file, a bounded folder with
 * the oldest files going first, a host's sink, failures the model reads about), the whole content kept for the
 * program, the same cut for a call served over MCP and a remote tool's, and a 10 MB result in a process of its own
 * (test/fixtures/output-budget-memory.ts), where its memory can be read.
 */
import { describe, expect, it } from "@effect/vitest"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { Effect, Either, Logger, Schema } from "effect"
import * as ChildProcess from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as nodePath from "node:path"
import { Executor, McpClient, McpServer, Middleware, Recorder, Tool, Toolkit, ToolResult } from "../src/index.js"
import { cut, markerText } from "../src/internal/outputBudget.js"
import { fixture } from "./fixtures/compiled.js"
import { modelText } from "./helpers.js"

const tmp = () => fs.mkdtempSync(nodePath.join(os.tmpdir(), "budget-"))

/** A tool answering whatever result it is given. */
const answering = (result: ToolResult.ToolResult) =>
  Tool.make("answer", { description: "Answer the result", handler: () => Effect.succeed(result) })

const runOne = <T extends Tool.Any>(tool: T, budget: Middleware.OutputBudget) =>
  Effect.map(
    Executor.run(Toolkit.make(tool), [{ id: "call_1", name: tool.name, arguments: {} }], {
      middleware: [Middleware.outputBudget(budget)]
    }),
    ([outcome]) => Either.getOrThrow(outcome)
  )

const lines = (n: number, width = 20) =>
  Array.from({ length: n }, (_, i) => `line ${String(i).padStart(6, "0")} `.padEnd(width, "x")).join("\n")

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

const MARKER = /\n… \[(\d+) characters cut(?:; ([^\]]+))?\] …\n/

describe("the cut", () => {
  const marker = markerText({ _tag: "Kept", location: "/spill/1-call.txt" })

  it("keeps the head and the tail with one marker between them, at most the budget, line to line", () => {
    const text = lines(1000)
    // budgets whose halves fall anywhere in a line (21 characters with its break)
    for (let budget = 2_000; budget < 2_042; budget++) {
      const shown = cut([{ type: "text", text }], budget, marker)!
      expect(shown.content).toHaveLength(1)
      const out = (shown.content[0] as { text: string }).text
      expect(out.length).toBeLessThanOrEqual(budget)
      const match = MARKER.exec(out)!
      expect(match[2]).toBe("the whole output is at /spill/1-call.txt")
      const head = out.slice(0, match.index)
      const tail = out.slice(match.index + match[0].length)
      expect(text.startsWith(head)).toBe(true)
      expect(text.endsWith(tail)).toBe(true)
      // whole lines on both sides: the head ends where a line ends, the tail starts where one starts
      expect(text[head.length]).toBe("\n")
      expect(text[text.length - tail.length - 1]).toBe("\n")
      expect(Number(match[1])).toBe(text.length - head.length - tail.length)
      // about half each side, and not much less than the budget
      expect(Math.abs(head.length - tail.length)).toBeLessThan(50)
      expect(out.length).toBeGreaterThan(budget - 50)
    }
  })

  it("is no cut for a text within the budget", () => {
    expect(cut([{ type: "text", text: "x".repeat(100) }], 100, marker)).toBeUndefined()
  })

  it("never cuts a surrogate pair in half", () => {
    // no line breaks to snap to: the cut falls where it falls, every other code unit a half of a pair
    const text = "😀".repeat(5_000)
    for (const budget of [1_000, 1_001, 1_002, 1_003]) {
      const out = (cut([{ type: "text", text }], budget, marker)!.content[0] as { text: string }).text
      const match = MARKER.exec(out)!
      const head = out.slice(0, match.index)
      const tail = out.slice(match.index + match[0].length)
      expect(head.length % 2).toBe(0)
      expect(tail.length % 2).toBe(0)
      expect(out.length).toBeLessThanOrEqual(budget)
      expect(out).not.toMatch(LONE_SURROGATE)
    }
  })

  it("cuts across parts: the marker where the head ends, parts inside the cut dropped, media kept whole", () => {
    const image: ToolResult.Content = { type: "image", data: "A".repeat(50_000), mimeType: "image/png" }
    const content: ReadonlyArray<ToolResult.Content> = [
      { type: "text", text: "a".repeat(600) },
      { type: "text", text: "b".repeat(600) },
      image,
      { type: "resource", resource: { uri: "file:///c.txt", text: "c".repeat(600) } },
      { type: "text", text: "d".repeat(600) }
    ]
    const shown = cut(content, 1_000, markerText({ _tag: "Off" }))!
    const texts = shown.content.map((part) =>
      part.type === "text" ? part.text : part.type === "resource" ? part.resource.text : part.type
    )
    // the head in the a's, the b's and the resource's text inside the cut, the tail in the d's; the image kept
    expect(texts).toHaveLength(3)
    const [head, marker] = /^(a+)(\n… \[(\d+) characters cut\] …\n)$/.exec(texts[0]!)!.slice(1)
    expect(texts[1]).toBe("image")
    expect(shown.content[1]).toBe(image)
    expect(texts[2]).toMatch(/^d+$/)
    expect(texts[0]!.length + texts[2]!.length).toBeLessThanOrEqual(1_000)
    expect(shown.cut).toBe(2_400 - head.length - texts[2]!.length)
    expect(marker).toBe(`\n… [${shown.cut} characters cut] …\n`)
  })

  it("cuts the text of an embedded resource like a text part", () => {
    const shown = cut(
      [{ type: "resource", resource: { uri: "file:///big.log", mimeType: "text/plain", text: lines(500) } }],
      1_000,
      marker
    )!
    const part = shown.content[0]
    expect(part.type === "resource" && part.resource.uri).toBe("file:///big.log")
    expect(part.type === "resource" && part.resource.text!.length).toBeLessThanOrEqual(1_000)
  })

  it("gives the marker alone when the budget cannot hold more", () => {
    const out = (cut([{ type: "text", text: "x".repeat(10_000) }], 10, marker)!.content[0] as { text: string }).text
    expect(out).toBe("\n… [10000 characters cut; the whole output is at /spill/1-call.txt] …\n")
  })
})

describe("Middleware.outputBudget", () => {
  it.effect("a result within the budget is the same result", () =>
    Effect.gen(function*() {
      const result = ToolResult.text("short")
      expect(yield* runOne(answering(result), { maxChars: 100 })).toBe(result)
    }))

  it.effect("spills the whole output to a private file the model's text names, and keeps it for the program", () =>
    Effect.gen(function*() {
      const parent = tmp()
      const text = lines(5_000)
      const record = new Recorder.Record({ namespace: "test/pid", data: { pid: 1 } })
      const Big = Tool.make("big", {
        description: "A big JSON value",
        handler: () => Effect.succeed(ToolResult.withDetails(ToolResult.json({ text }), record))
      })
      const result = yield* runOne(Big, { maxChars: 4_000, spill: { directory: parent } })
      const shown = ToolResult.toText(result)
      expect(shown.length).toBeLessThanOrEqual(4_000)
      const location = MARKER.exec(shown)![2].replace("the whole output is at ", "")
      // <directory>/<pid>-<random>/<n>-<call id>.txt
      expect(nodePath.relative(parent, location)).toMatch(new RegExp(`^${process.pid}-\\w{6}/1-call_1\\.txt$`))
      expect(fs.readFileSync(location, "utf8")).toBe(JSON.stringify({ text }))
      expect(fs.statSync(location).mode & 0o777).toBe(0o600)
      expect(fs.statSync(nodePath.dirname(location)).mode & 0o777).toBe(0o700)
      // the program keeps everything: structured, details, the whole content
      expect(result.structured).toEqual({ text })
      expect(result.details).toBe(record)
      expect(result.truncation!.content).toEqual([{ type: "text", text: JSON.stringify({ text }) }])
      expect(result.truncation!.location).toBe(location)
      expect(result.truncation!.cut).toBe(Number(MARKER.exec(shown)![1]))
      expect(result.toJSON()).toMatchObject({ truncation: { cut: result.truncation!.cut, location } })
    }))

  it.effect("keeps at most maxBytes of spilled outputs, the oldest going first; a larger one is not kept", () =>
    Effect.gen(function*() {
      const parent = tmp()
      const Dump = Tool.make("dump", {
        description: "A text of n characters",
        parameters: { n: Schema.Int },
        handler: ({ n }) => Effect.succeed("y".repeat(n))
      })
      const kit = Toolkit.make(Dump)
      const options = {
        middleware: [Middleware.outputBudget({ maxChars: 200, spill: { directory: parent, maxBytes: 2_500 } })]
      }
      const calls = [1, 2, 3].map((i) => ({ id: `c${i}`, name: "dump", arguments: { n: 1_000 } }))
      // one after another, so the oldest is the first
      for (const call of calls) yield* Executor.run(kit, [call], options)
      const [folder] = fs.readdirSync(parent)
      // three 1,000-byte files do not fit in 2,500: the first went
      expect(fs.readdirSync(nodePath.join(parent, folder)).sort()).toEqual(["2-c2.txt", "3-c3.txt"])
      const [big] = yield* Executor.run(kit, [{ id: "c4", name: "dump", arguments: { n: 3_000 } }], options)
      expect(modelText(big)).toMatch(/\n… \[\d+ characters cut; the whole output could not be kept\] …\n/)
      expect(Either.getOrThrow(big).truncation!.location).toBeUndefined()
      // and nothing was removed for it
      expect(fs.readdirSync(nodePath.join(parent, folder)).sort()).toEqual(["2-c2.txt", "3-c3.txt"])
    }))

  it.effect("names a file for any call id without leaving its folder", () =>
    Effect.gen(function*() {
      const parent = tmp()
      const Dump = Tool.make("dump", { description: "A long text", handler: () => Effect.succeed("z".repeat(500)) })
      const [outcome] = yield* Executor.run(Toolkit.make(Dump), [{
        id: "../../etc/passwd",
        name: "dump",
        arguments: {}
      }], {
        middleware: [Middleware.outputBudget({ maxChars: 200, spill: { directory: parent } })]
      })
      const location = Either.getOrThrow(outcome).truncation!.location!
      expect(nodePath.basename(location)).toBe("1-______etc_passwd.txt")
      expect(nodePath.dirname(nodePath.dirname(location))).toBe(parent)
    }))

  it.effect("a host's sink keeps the text and says where; a sink that fails is a warning and the model is told", () =>
    Effect.gen(function*() {
      const kept: Array<string> = []
      const text = lines(300)
      const Two = Tool.make("two", {
        description: "Two text parts",
        handler: () => Effect.succeed([{ type: "text" as const, text }, { type: "text" as const, text: "end" }])
      })
      const result = yield* runOne(Two, {
        maxChars: 1_000,
        spill: (call, whole) =>
          Effect.sync(() => {
            kept.push(whole)
            return `s3://outputs/${call.id}`
          })
      })
      expect(kept).toEqual([text + "\nend"])
      expect(ToolResult.toText(result)).toContain("the whole output is at s3://outputs/call_1] …")

      const warnings: Array<unknown> = []
      const logger = Logger.make(({ message }) => void warnings.push(message))
      const failed = yield* runOne(Two, { maxChars: 1_000, spill: () => Effect.fail("the bucket is gone") }).pipe(
        Effect.provide(Logger.replace(Logger.defaultLogger, logger))
      )
      expect(ToolResult.toText(failed)).toContain("characters cut; the whole output could not be kept] …")
      expect(failed.truncation!.location).toBeUndefined()
      expect(String(warnings)).toContain("the whole output of call call_1 (two) could not be kept: the bucket is gone")
    }))

  it.effect("spill: false keeps nothing and says only what was cut", () =>
    Effect.gen(function*() {
      const result = yield* runOne(answering(ToolResult.text("q".repeat(5_000))), { maxChars: 500, spill: false })
      expect(ToolResult.toText(result)).toMatch(/\n… \[\d+ characters cut\] …\n/)
      expect(result.truncation!.location).toBeUndefined()
    }))

  it.effect("maxTokens is four characters a token; the smaller of two budgets holds, spilled once", () =>
    Effect.gen(function*() {
      const parent = tmp()
      const text = lines(2_000)
      const Long = answering(ToolResult.text(text))
      expect(ToolResult.toText(yield* runOne(Long, { maxTokens: 250, spill: false })).length).toBeLessThanOrEqual(1_000)
      expect(ToolResult.toText(yield* runOne(Long, { maxTokens: 1_000, maxChars: 700, spill: false })).length)
        .toBeLessThanOrEqual(700)
      // an outer budget of 5,000 around an inner one of 1,000, and the other way round
      for (const [outer, inner] of [[5_000, 1_000], [1_000, 5_000]]) {
        const [outcome] = yield* Executor.run(
          Toolkit.make(Long),
          [{ id: `o${outer}`, name: "answer", arguments: {} }],
          {
            middleware: [
              Middleware.outputBudget({ maxChars: outer, spill: { directory: parent } }),
              Middleware.outputBudget({ maxChars: inner, spill: { directory: parent } })
            ]
          }
        )
        const result = Either.getOrThrow(outcome)
        expect(ToolResult.toText(result).length).toBeLessThanOrEqual(1_000)
        expect(result.truncation!.content).toEqual([{ type: "text", text }])
        expect(fs.readFileSync(result.truncation!.location!, "utf8")).toBe(text)
      }
      // each run spilled once
      const files = fs.readdirSync(parent).flatMap((folder) => fs.readdirSync(nodePath.join(parent, folder)))
      expect(files).toHaveLength(2)
    }))

  it.effect("errors pass as they are", () =>
    Effect.gen(function*() {
      const Fails = Tool.make("fails", { description: "Fails", handler: () => Effect.fail("e".repeat(10_000)) })
      const [outcome] = yield* Executor.run(Toolkit.make(Fails), [{ id: "1", name: "fails", arguments: {} }], {
        middleware: [Middleware.outputBudget({ maxChars: 100, spill: false })]
      })
      expect(modelText(outcome)).toBe("Error: " + "e".repeat(10_000))
    }))

  it("refuses a budget that is not a positive integer", () => {
    expect(() => Middleware.outputBudget({ maxChars: 0 })).toThrow(
      "Middleware.outputBudget: maxChars must be a positive integer, got 0"
    )
    expect(() => Middleware.outputBudget({ maxTokens: 1.5 })).toThrow("maxTokens must be a positive integer")
    expect(() => Middleware.outputBudget({ spill: { maxBytes: -1 } })).toThrow("spill.maxBytes must be")
  })
})

describe("an output budget at the edges", () => {
  const Log = Tool.make("log", {
    description: "A long log",
    handler: () => Effect.succeed(lines(3_000))
  })
  const info = { name: "budgeted", version: "1.0.0" }

  it.scoped("a call served over MCP is cut the same way, with the budget installed around the server", () =>
    Effect.gen(function*() {
      const parent = tmp()
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
      yield* McpServer.serve(Toolkit.make(Log), info, serverSide).pipe(
        Effect.provide(Middleware.layer(Middleware.outputBudget({ maxChars: 2_000, spill: { directory: parent } })))
      )
      const client = yield* McpClient.connect(clientSide)
      const remote = (yield* client.toolkit).tools[0]
      const served = ToolResult.toText(Either.getOrThrow(yield* Tool.execute(remote, { id: "r1", arguments: {} })))
      expect(served.length).toBeLessThanOrEqual(2_000)
      const match = MARKER.exec(served)!
      expect(lines(3_000).startsWith(served.slice(0, match.index))).toBe(true)
      expect(lines(3_000).endsWith(served.slice(match.index + match[0].length))).toBe(true)
      const location = match[2].replace("the whole output is at ", "")
      expect(fs.readFileSync(location, "utf8")).toBe(lines(3_000))
    }))

  it.scoped("a remote tool's result is cut by the host's own budget, like any tool's", () =>
    Effect.gen(function*() {
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
      yield* McpServer.serve(Toolkit.make(Log), info, serverSide)
      const client = yield* McpClient.connect(clientSide, { prefix: "far" })
      const kit = yield* client.toolkit
      const [outcome] = yield* Executor.run(kit, [{ id: "r2", name: "far__log", arguments: {} }], {
        middleware: [Middleware.outputBudget({ maxChars: 1_500, spill: false })]
      })
      const result = Either.getOrThrow(outcome)
      expect(ToolResult.toText(result).length).toBeLessThanOrEqual(1_500)
      expect(result.truncation!.content).toEqual([{ type: "text", text: lines(3_000) }])
    }))
})

describe("a 10 MB result", () => {
  interface Report {
    readonly outputLength: number
    readonly modelText: string
    readonly location: string | undefined
    readonly cut: number | undefined
    readonly retained: number
    readonly modelOnlyRetained: number
    readonly peak: number
  }
  const measure = (env: Record<string, string>): Report => {
    const out = ChildProcess.execFileSync(process.execPath, ["--expose-gc", fixture("output-budget-memory")], {
      env: { ...process.env, ...env },
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024
    })
    return JSON.parse(out.trim().split("\n").pop()!)
  }
  const MiB = 1024 * 1024

  it("is cut to head, marker and tail, spilled whole, in a small multiple of its size", () => {
    const parent = tmp()
    const budgeted = measure({ SPILL_DIR: parent })
    const baseline = measure({ NO_BUDGET: "1" })
    expect(budgeted.outputLength).toBe(10 * MiB)
    // the model reads 20,000 characters at most: the first lines, the marker, the last lines
    const text = budgeted.modelText
    expect(text.length).toBeLessThanOrEqual(20_000)
    expect(text.startsWith("line 00000000 ....")).toBe(true)
    expect(text.endsWith(`line ${String(10 * MiB / 64 - 1).padStart(8, "0")} ${".".repeat(49)}\n`)).toBe(true)
    const match = MARKER.exec(text)!
    expect(match[2]).toBe(`the whole output is at ${budgeted.location}`)
    expect(Number(match[1])).toBe(budgeted.cut)
    expect(Number(match[1])).toBe(10 * MiB - (text.length - match[0].length))
    // the spill file has all of it
    const spilled = fs.readFileSync(budgeted.location!, "utf8")
    expect(spilled.length).toBe(10 * MiB)
    expect(spilled.startsWith(text.slice(0, match.index))).toBe(true)
    expect(spilled.endsWith(text.slice(match.index + match[0].length))).toBe(true)
    // what the result holds once the batch is done: the whole content for the program, and little more
    expect(budgeted.retained - baseline.retained).toBeLessThan(MiB)
    // what the model reads shares no storage with the whole output: kept alone, it holds almost nothing
    expect(budgeted.modelOnlyRetained).toBeLessThan(MiB)
    // at its peak, the budget (the cut, the spill's write) adds at most a few times the result
    expect(budgeted.peak - baseline.peak).toBeLessThan(3 * 10 * MiB)
  })
})
