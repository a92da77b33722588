/**
 * The examples of docs/stdio-provider.md, run (see ./examples.ts for how the page and this file are kept the same),
 * and the page's JavaScript provider, run against `StdioProvider.connect`.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, Either, Schema, Stream } from "effect"
import * as ChildProcess from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as Path from "node:path"
import { Executor, Tool, ToolError, Toolkit, ToolResult } from "../src/index.js"
import * as StdioProvider from "../src/StdioProvider.js"
import { checkExamples } from "./examples.js"

const page = fs.readFileSync(new URL("./stdio-provider.md", import.meta.url), "utf8")

/** The page's JavaScript provider, written where `connect` can run it. */
const providerDir = fs.mkdtempSync(Path.join(os.tmpdir(), "stdio-provider-doc-"))
const providerScript = (() => {
  const match = /^<!-- provider: (\S+) -->\n```js\n([\s\S]*?)^```$/m.exec(page)
  if (match === null) throw new Error("docs/stdio-provider.md has no provider block")
  const file = Path.join(providerDir, match[1])
  fs.writeFileSync(file, match[2])
  return file
})()
afterAll(() => fs.rmSync(providerDir, { recursive: true, force: true }))

// #region serve
const Upper = Tool.make("upper", {
  description: "Uppercase a string",
  parameters: { text: Schema.String },
  handler: ({ text }) => Effect.succeed(text.toUpperCase())
})

const Where = Tool.make("where", {
  description: "The host's working directory for this call",
  handler: () => StdioProvider.directory
})

const kit = Toolkit.make(Upper, Where)

const requests = [
  { call_id: "1", function: { name: "upper", arguments: "{\"text\":\"hi\"}" } },
  { call_id: "2", function: { name: "upper", arguments: "{}" } },
  { call_id: "3", function: { name: "where", arguments: "" }, context: { dir: "/home/me/project" } },
  { call_id: "4", function: { name: "lower", arguments: "{}" } }
]

const written: Array<string> = []
const serveDemo = StdioProvider.serve(kit, {
  input: Stream.fromIterable(requests.map((request) => JSON.stringify(request) + "\n")),
  output: (text) => Effect.sync(() => void written.push(text))
})
// => succeeds at end of input; written[0] is the header (two definition lines and the empty line), then one
//    answer per line, in the order the calls finished:
//   {"call_id":"1","content":"HI"}
//   {"call_id":"2","content":"Bad arguments: text: missing required property, expected a string"}
//   {"call_id":"3","content":"/home/me/project"}
//   {"call_id":"4","content":"Error: unknown tool \"lower\"; available tools: upper, where"}
// #endregion

// #region directory
const Resolve = Tool.make("resolve", {
  description: "Resolve a path against the host's working directory",
  parameters: { path: Schema.String },
  handler: ({ path }) => Effect.map(StdioProvider.directory, (dir) => Path.resolve(dir, path))
})

const directoryDemo = Tool.execute(Resolve, { id: "call_1", arguments: { path: "src/index.ts" } }).pipe(
  StdioProvider.withDirectory("/home/me/project")
)
// => Either.right(ToolResult.text("/home/me/project/src/index.ts"))
// #endregion

// #region connect
// given: providerScript: string

const modelText = (outcome: Executor.Outcome): string =>
  Either.isRight(outcome) ? ToolResult.toText(outcome.right) : ToolError.toModelText(outcome.left)

const connectDemo = Effect.scoped(Effect.gen(function*() {
  const provider = yield* StdioProvider.connect({
    command: process.execPath,
    args: [providerScript],
    callTimeout: "30 seconds"
  })
  const remote = yield* provider.toolkit
  const outcomes = yield* Executor.run(remote, [
    { id: "call_1", name: "echo", arguments: "{\"message\":\"hello\"}" },
    { id: "call_2", name: "echo", arguments: "{\"message\":42}" },
    { id: "call_3", name: "cwd", arguments: "{}" }
  ]).pipe(StdioProvider.withDirectory("/home/me/project"))
  return { tools: Toolkit.names(remote), texts: outcomes.map(modelText) }
}))
// => {
//   tools: ["echo", "cwd"],
//   texts: ["hello", "Error: invalid arguments: message: expected a string, got 42", "/home/me/project"]
// }
// #endregion

// #region start-error
const startErrorDemo = Effect.scoped(StdioProvider.connect({ command: "/no/such/provider" })).pipe(
  Effect.as("started"),
  Effect.catchTag("StdioProviderError", (error) => Effect.succeed(error.reason))
)
// => "Spawn"
// #endregion

describe("docs/stdio-provider.md", () => {
  it("shows each example exactly as this file runs it", () =>
    checkExamples(
      new URL("./stdio-provider.md", import.meta.url),
      new URL("./stdio-provider.test.ts", import.meta.url)
    ))

  it("shows the header the page's provider writes, and the header lines serve writes", () => {
    const header = /^On start the provider writes[\s\S]*?```text\n([\s\S]*?)```$/m.exec(page)![1]
    const lines = header.split("\n")
    expect(lines.slice(0, 2).map((line) => JSON.parse(line).function.name)).toEqual(["echo", "cwd"])
    expect(lines.slice(2)).toEqual(["", ""])
  })

  it.effect("serve: the header, then one answer per request", () =>
    Effect.gen(function*() {
      yield* serveDemo
      expect(written[0]).toBe(
        kit.tools.map((tool) => JSON.stringify(Toolkit.definitions(Toolkit.make(tool), "openAiChat")[0])).join("\n") +
          "\n\n"
      )
      expect(written[0].split("\n")).toHaveLength(4)
      const answers = written.slice(1)
      expect(answers.every((line) => line.endsWith("\n"))).toBe(true)
      expect(new Map(answers.map((line) => [JSON.parse(line).call_id, JSON.parse(line).content]))).toEqual(
        new Map<string, unknown>([
          ["1", "HI"],
          ["2", "Bad arguments: text: missing required property, expected a string"],
          ["3", "/home/me/project"],
          ["4", "Error: unknown tool \"lower\"; available tools: upper, where"]
        ])
      )
      // the page shows them as they came
      for (const line of answers) expect(page).toContain(`//   ${line.trimEnd()}`)
    }))

  it.effect("directory: the host's working directory for the call", () =>
    Effect.map(
      directoryDemo,
      (outcome) => expect(Either.map(outcome, ToolResult.toText)).toEqual(Either.right("/home/me/project/src/index.ts"))
    ))

  it.live("connect: the page's JavaScript provider, through the executor", () =>
    Effect.map(connectDemo, (result) =>
      expect(result).toEqual({
        tools: ["echo", "cwd"],
        texts: ["hello", "Error: invalid arguments: message: expected a string, got 42", "/home/me/project"]
      })))

  it.live("the page's JavaScript provider answers its own Bad arguments and unknown tools, and exits 0 at end of input", () =>
    Effect.gen(function*() {
      const result = yield* Effect.sync(() =>
        ChildProcess.spawnSync(process.execPath, [providerScript], {
          input: [
            { call_id: "a", function: { name: "echo", arguments: "{\"message\":7}" } },
            { call_id: "b", function: { name: "nope", arguments: "{}" } },
            { call_id: "c", function: { name: "echo", arguments: "{" } }
          ].map((request) => JSON.stringify(request) + "\n").join(""),
          encoding: "utf8",
          timeout: 20_000
        })
      )
      expect(result.status).toBe(0)
      const answers = result.stdout.split("\n").slice(3).filter((line) => line !== "").map((line) => JSON.parse(line))
      expect(new Map(answers.map((a) => [a.call_id, a.content]))).toEqual(
        new Map([
          ["a", "Bad arguments: message must be a string"],
          ["b", "Error: unknown tool \"nope\""],
          ["c", expect.stringMatching(/^Bad arguments: not JSON \(.+\)$/)]
        ])
      )
    }))

  it.live("start-error: a command that cannot be started", () =>
    Effect.map(startErrorDemo, (reason) => expect(reason).toBe("Spawn")))
})
