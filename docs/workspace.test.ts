/**
 * The examples of docs/workspace.md, run (see ./examples.ts for how the page and this file are kept the same).
 */
import { NodeContext } from "@effect/platform-node"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer, Ref } from "effect"
import * as fs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { Executor, Permission, Recorder, ToolError, ToolResult, Workspace } from "../src/index.js"
import { checkExamples } from "./examples.js"

const root = fs.mkdtempSync(path.join(os.tmpdir(), "workspace-doc-"))
fs.mkdirSync(path.join(root, "src"))
fs.writeFileSync(path.join(root, "src/greet.ts"), "export const greet = (name: string) => `Hi ${name}`\n")
fs.writeFileSync(path.join(root, "logo.png"), Uint8Array.from([137, 80, 78, 71, 13, 10, 26, 10, 0, 0, 0, 13]))

// #region batch
// given: root: string

/** What the model reads back for one call. */
const modelText = (outcome: Executor.Outcome): string =>
  Either.isRight(outcome) ? ToolResult.toText(outcome.right) : ToolError.toModelText(outcome.left)

const batchDemo = Effect.scoped(Effect.gen(function*() {
  const kit = yield* Workspace.toolkit({ root })
  const outcomes = yield* Executor.run(kit, [
    { id: "1", name: "edit_file", arguments: { path: "src/greet.ts", old_string: "Hi", new_string: "Hello" } },
    { id: "2", name: "read_file", arguments: { path: "src/greet.ts" } },
    { id: "3", name: "edit_file", arguments: { path: "src/greet.ts", old_string: "Hi", new_string: "Hello" } },
    { id: "4", name: "bash", arguments: { command: "cd src && export GREETING=hello" } },
    { id: "5", name: "bash", arguments: { command: "pwd | sed 's|.*/||'; echo $GREETING" } },
    { id: "6", name: "read_file", arguments: { path: "../../etc/passwd" } }
  ])
  return outcomes.map(modelText)
})).pipe(Effect.provide(NodeContext.layer))
// => [
//   "Error: src/greet.ts exists and has not been read; read it first with read_file",
//   "     1\texport const greet = (name: string) => `Hi ${name}`",
//   "edited src/greet.ts (1 replacement); lines 1-1 now read:\n     1\texport const greet = ... `Hello ${name}`",
//   "(no output)\n(exit code 0)",
//   "src\nhello\n(exit code 0)",
//   "Error: ../../etc/passwd is outside the workspace; use a path inside it"
// ]
// #endregion

// #region permission
// continues the example "batch"

const ReviewInTheLog = Permission.layer((request) =>
  Effect.as(
    Effect.log(`${request.tool} asks to ${request.action}: ${request.description}\n${request.preview ?? ""}`),
    // a read-only session: writes and commands are refused, with a reason the model reads
    request.action === "write" || request.action === "execute"
      ? Permission.deny("this session is read-only")
      : Permission.allow
  )
)

const permissionDemo = Effect.scoped(Effect.gen(function*() {
  const kit = yield* Workspace.toolkit({ root })
  const outcomes = yield* Executor.run(kit, [
    { id: "1", name: "write_file", arguments: { path: "notes.md", content: "# Notes\n" } },
    { id: "2", name: "bash", arguments: { command: "rm -rf src" } },
    { id: "3", name: "glob", arguments: { pattern: "**/*.ts" } }
  ])
  return outcomes.map(modelText)
})).pipe(Effect.provide(Layer.merge(NodeContext.layer, ReviewInTheLog)))
// => [
//   "Error: permission denied: write 1 lines to notes.md: this session is read-only",
//   "Error: permission denied: rm -rf src: this session is read-only",
//   "src/greet.ts"
// ]
// #endregion

// #region records
// continues the example "batch"

const recordsDemo = Effect.gen(function*() {
  const entries = yield* Ref.make<ReadonlyArray<Recorder.Entry>>([])
  const layer = Recorder.layerMemory(entries)
  yield* Effect.scoped(Effect.gen(function*() {
    const kit = yield* Workspace.toolkit({ root })
    yield* Executor.run(kit, [{ id: "job", name: "bash", arguments: { command: "echo working" } }])
  })).pipe(Effect.provide(Layer.merge(NodeContext.layer, layer)))
  const [entry] = yield* Ref.get(entries)
  return {
    call: entry.callId,
    namespace: entry.record.namespace,
    process: Recorder.decode(entry.record, Workspace.BashProcess)
  }
})
// => { call: "job", namespace: "bash/process",
//      process: Either.right({ pgid: 12345, command: "echo working", marker: "4f1c...:1" }) }
// #endregion

// #region search
// continues the example "batch"

const searchDemo = Effect.scoped(Effect.gen(function*() {
  const kit = yield* Workspace.toolkit({ root })
  const outcomes = yield* Executor.run(kit, [
    { id: "1", name: "grep", arguments: { pattern: "greet", ignore_case: true } },
    { id: "2", name: "grep", arguments: { pattern: "(Hi|Hello) \\1" } },
    { id: "3", name: "grep", arguments: { pattern: "x", path: "logo.png" } }
  ])
  return outcomes.map(modelText)
})).pipe(Effect.provide(NodeContext.layer))
// => [
//   "src/greet.ts:1: export const greet = ...\n(1 file not searched: 1 binary)",
//   "Error: invalid regular expression (RE2 syntax): backreferences (\\1, \\2, ...) are not supported; RE2 cannot
//    match a repeat of an earlier group; search for the text itself; or set literal to search for the text as it is",
//   "logo.png was not searched: it is a binary file"
// ]
// #endregion

// #region patch
// continues the example "batch"

const patchDemo = Effect.scoped(Effect.gen(function*() {
  const kit = yield* Workspace.toolkit({ root })
  const outcomes = yield* Executor.run(kit, [
    {
      id: "1",
      name: "apply_patch",
      arguments: {
        patch: [
          "*** Begin Patch",
          "*** Add File: src/farewell.ts",
          "+export const farewell = (name: string) => `Bye ${name}`",
          "*** Update File: src/greet.ts",
          "@@",
          "-export const greet = (name: string) => `Hello ${name}`",
          "+export const greet = (name: string) => `Hello, ${name}!`",
          "*** End Patch"
        ].join("\n")
      }
    },
    {
      id: "2",
      name: "apply_patch",
      arguments: {
        patch: [
          "--- a/src/farewell.ts",
          "+++ b/src/farewell.ts",
          "@@ -1 +1 @@",
          "-export const farewell = (name: string) => `Ciao ${name}`",
          "+export const farewell = (name: string) => `Bye, ${name}!`",
          "--- /dev/null",
          "+++ b/src/never.ts",
          "@@ -0,0 +1 @@",
          "+export {}"
        ].join("\n")
      }
    }
  ])
  return outcomes.map(modelText)
})).pipe(Effect.provide(NodeContext.layer))
// => [
//   "applied the patch:\n  added src/farewell.ts (1 line)\n  updated src/greet.ts (+1 -1)",
//   "Error: the patch was not applied, no file was changed: src/farewell.ts, hunk 1 of 1 (\"@@ -1 +1 @@\"): its
//    first line \"export const farewell = (name: string) => `Ciao ${name}`\" is not in the file; make its kept and
//    removed lines repeat the file's lines exactly (read_file shows them), then send the patch again"
// ]
// #endregion

/** The docs server of the fetch example: a page on this machine's loopback interface. */
let docsServer = ""
const server = http.createServer((_, response) => {
  response.writeHead(200, { "content-type": "text/html" })
  response.end(
    "<html><head><title>Guide</title></head><body><h1>Guide</h1><p>Read <a href=\"https://example.com/api\">the API</a>.</p></body></html>"
  )
})
beforeAll(() =>
  new Promise<void>((ready) =>
    server.listen(0, "127.0.0.1", () => {
      docsServer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      ready()
    })
  )
)
afterAll(() => new Promise<void>((closed) => server.close(() => closed())))

// #region fetch
// continues the example "batch"
// given: docsServer: string

const fetchDemo = Effect.scoped(Effect.gen(function*() {
  // fetch is opt-in; this one reaches the public web and the docs server on this machine, nothing else private
  const kit = yield* Workspace.toolkit({ root, fetch: { allowHosts: [new URL(docsServer).host] } })
  const outcomes = yield* Executor.run(kit, [
    { id: "1", name: "fetch", arguments: { url: `${docsServer}/guide` } },
    { id: "2", name: "fetch", arguments: { url: "http://169.254.169.254/latest/meta-data/" } }
  ])
  return outcomes.map(modelText)
})).pipe(Effect.provide(NodeContext.layer))
// => [
//   "http://127.0.0.1:4000/guide (text/html, 131 bytes, converted to Markdown)\n\n# Guide\n\nRead [the API](
//    https://example.com/api).",
//   "Error: http://169.254.169.254/latest/meta-data/ was not fetched: 169.254.169.254 is a link-local address (cloud
//    metadata services live there); fetch reaches public addresses only (the host running the tools can allow
//    private ones)"
// ]
// #endregion

describe("docs/workspace.md", () => {
  it("shows each example exactly as this file runs it", () =>
    checkExamples(new URL("./workspace.md", import.meta.url), new URL("./workspace.test.ts", import.meta.url)))

  it.live("a batch: the read-first rule, the shared shell, confinement", () =>
    Effect.map(batchDemo, (texts) => {
      expect(texts[0]).toBe("Error: src/greet.ts exists and has not been read; read it first with read_file")
      expect(texts[1]).toBe("     1\texport const greet = (name: string) => `Hi ${name}`")
      expect(texts[2]).toBe(
        "edited src/greet.ts (1 replacement); lines 1-1 now read:\n     1\texport const greet = (name: string) => " +
          "`Hello ${name}`"
      )
      expect(texts[3]).toBe("(no output)\n(exit code 0)")
      expect(texts[4]).toBe("src\nhello\n(exit code 0)")
      expect(texts[5]).toBe("Error: ../../etc/passwd is outside the workspace; use a path inside it")
    }))

  it.live("permission: a read-only policy refuses writes and commands, with the reason", () =>
    Effect.map(permissionDemo, (texts) =>
      expect(texts).toEqual([
        "Error: permission denied: write 1 lines to notes.md: this session is read-only",
        "Error: permission denied: rm -rf src: this session is read-only",
        "src/greet.ts"
      ])))

  it.live("records: a bash command's process group is recorded as it starts", () =>
    Effect.map(recordsDemo, (result) => {
      expect(result.call).toBe("job")
      expect(result.namespace).toBe("bash/process")
      expect(Either.isRight(result.process) && result.process.right.command).toBe("echo working")
      expect(Either.isRight(result.process) && result.process.right.pgid).toBeGreaterThan(1)
      expect(Either.isRight(result.process) && result.process.right.marker).toMatch(/^[0-9a-f-]{36}:1$/)
    }))

  it.live("search: RE2 patterns, the construct RE2 lacks named, skipped files said so", () =>
    Effect.map(searchDemo, (texts) =>
      expect(texts).toEqual([
        "src/greet.ts:1: export const greet = (name: string) => `Hello ${name}`\n(1 file not searched: 1 binary)",
        "Error: invalid regular expression (RE2 syntax): backreferences (\\1, \\2, ...) are not supported; RE2 " +
        "cannot match a repeat of an earlier group; search for the text itself; or set literal to search for the " +
        "text as it is",
        "logo.png was not searched: it is a binary file"
      ])))

  it.live("patch: two formats, all or nothing, the hunk that does not apply named", () =>
    Effect.map(patchDemo, (texts) => {
      expect(texts).toEqual([
        "applied the patch:\n  added src/farewell.ts (1 line)\n  updated src/greet.ts (+1 -1)",
        "Error: the patch was not applied, no file was changed: src/farewell.ts, hunk 1 of 1 (\"@@ -1 +1 @@\"): its " +
        "first line \"export const farewell = (name: string) => `Ciao ${name}`\" is not in the file; make its kept " +
        "and removed lines repeat the file's lines exactly (read_file shows them), then send the patch again"
      ])
      expect(fs.existsSync(path.join(root, "src/never.ts"))).toBe(false)
    }))

  it.live("fetch: a page as Markdown; a private address refused before any connection", () =>
    Effect.map(fetchDemo, (texts) =>
      expect(texts).toEqual([
        `${docsServer}/guide (text/html, 131 bytes, converted to Markdown)\n\n# Guide\n\nRead [the API](https://example.com/api).`,
        "Error: http://169.254.169.254/latest/meta-data/ was not fetched: 169.254.169.254 is a link-local address " +
        "(cloud metadata services live there); fetch reaches public addresses only (the host running the tools can " +
        "allow private ones)"
      ])))
})
