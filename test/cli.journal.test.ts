/**
 * `agent-tools journal`, run as a user runs the binary (dist/cli/main.js, rebuilt by the global setup): the runs of
 * a SQLite journal, one run's steps and calls, the width and colour rules of every line for people, and the refusals
 * (no journal there: not created; no such run).
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import * as ChildProcess from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { widthOf } from "../src/cli/render.js"
import { Executor, Journal, Tool, Toolkit } from "../src/index.js"
import type { Ran } from "./helpers.js"
import { runNode } from "./helpers.js"

const root = path.resolve(import.meta.dirname, "..")
const bin = path.join(root, "dist/cli/main.js")
const ESC = String.fromCharCode(27)

const Echo = Tool.make("echo", {
  description: "Echo the text",
  parameters: { text: Schema.String },
  replay: "safe",
  handler: ({ text }) => text === "fail" ? Effect.fail({ message: "told to fail" }) : Effect.succeed(text)
})

/** A journal with a finished batch and a run whose process stopped mid-call, in a fresh folder. */
const makeJournalFile = Effect.gen(function*() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cli-journal-"))
  const filename = path.join(dir, "agent-journal.db")
  yield* Effect.gen(function*() {
    yield* Executor.run(Toolkit.make(Echo), [
      { id: "1", name: "echo", arguments: JSON.stringify({ text: "x".repeat(500) }) },
      { id: "2", name: "echo", arguments: "{\"text\":\"fail\"}" }
    ], { runId: "batch-1" })
    const journal = yield* Journal.Journal
    const runId = `stopped-${"r".repeat(150)}`
    yield* journal.begin({ runId, definitionsHash: "h", options: { kind: "batch" } })
    const calls = [{ id: "a", name: "echo", arguments: "{\"text\":\"a\"}" }, { id: "b", name: "echo", arguments: "{}" }]
    yield* journal.step({ runId, step: 0, response: { calls, tools: {} } })
    yield* journal.dispatch({
      runId,
      step: 0,
      callId: "a",
      index: 0,
      tool: "echo",
      arguments: calls[0].arguments,
      idempotencyKey: "k",
      replay: "safe"
    })
  }).pipe(Effect.provide(Layer.fresh(Journal.layerSqlite({ filename }))))
  return { dir, filename, stopped: `stopped-${"r".repeat(150)}` }
})

/** One journal file for every test of the file (they only read it), removed when the file is done. */
let shared: Promise<Effect.Effect.Success<typeof makeJournalFile>> | undefined
const journalFile = Effect.promise(() => shared ??= Effect.runPromise(makeJournalFile))

afterAll(async () => {
  if (shared !== undefined) fs.rmSync((await shared).dir, { recursive: true, force: true })
})

const runCli = (args: ReadonlyArray<string>) => Effect.promise(() => runNode(bin, args, { cwd: root }))

/** Runs the binary on a pseudo-terminal (util-linux's script) `columns` wide; gives what it wrote there. */
const onTerminal = (args: ReadonlyArray<string>, columns: number) =>
  Effect.promise(() =>
    new Promise<Ran>((resolve, reject) => {
      const line = [process.execPath, bin, ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(" ")
      const child = ChildProcess.spawn("script", ["-qfec", `stty cols ${columns} rows 40; ${line}`, "/dev/null"], {
        stdio: ["pipe", "pipe", "pipe"]
      })
      let stdout = ""
      child.stdout.on("data", (d) => (stdout += d))
      child.on("error", reject)
      child.on("close", (code) => resolve({ code, stdout, stderr: "" }))
    })
  )

const lines = (text: string) => text.split("\n").filter((line) => line !== "")

// the tests only read the journal and run their own processes: they run side by side
describe.concurrent("agent-tools journal", () => {
  it.live("lists the runs, the latest first, each line within 100 columns and without colour into a pipe", () =>
    Effect.gen(function*() {
      const { filename } = yield* journalFile
      const ran = yield* runCli(["journal", "--file", filename])
      expect(ran.code).toBe(0)
      const out = lines(ran.stdout)
      expect(out[0]).toMatch(/^RUN +STATUS +UPDATED +LEASE$/)
      expect(out).toHaveLength(3)
      expect(out[1]).toMatch(/^stopped-r+… running /)
      expect(out[2]).toMatch(/^batch-1 +completed /)
      expect(ran.stdout).not.toContain(ESC)
      for (const line of out) expect(widthOf(line)).toBeLessThanOrEqual(100)
    }))

  it.live("shows a run: each step's calls, with how each ended, or that it was running, or never started", () =>
    Effect.gen(function*() {
      const { filename, stopped } = yield* journalFile
      const done = yield* runCli(["journal", "--file", filename, "batch-1"])
      expect(done.code).toBe(0)
      const out = lines(done.stdout)
      expect(out[0]).toMatch(/^run batch-1 +completed$/)
      expect(out).toContain("step 0: 2 calls")
      expect(out.find((line) => line.includes("#1"))).toMatch(/#1 echo +\{"text":"x+… ✓ x+…$/)
      expect(out.find((line) => line.includes("#2"))).toMatch(/#2 echo +\{"text":"fail"\} +✗ Error: told to fail$/)
      for (const line of out) expect(widthOf(line)).toBeLessThanOrEqual(100)

      const cut = lines((yield* runCli(["journal", "--file", filename, stopped])).stdout)
      expect(cut.find((line) => line.includes("#1"))).toMatch(/▶ running when its process stopped$/)
      expect(cut.find((line) => line.includes("#2"))).toMatch(/… not started$/)
    }))

  // NO_COLOR is render.ts's rule, the same for every command (test/cli.test.ts)
  it.live("on a terminal every line fits its width, in colour", () =>
    Effect.gen(function*() {
      const { filename } = yield* journalFile
      const shown = yield* onTerminal(["journal", "--file", filename, "batch-1"], 50)
      expect(shown.stdout).toContain(`${ESC}[32m✓`)
      const plain = shown.stdout.replace(new RegExp(`${ESC}\\[[0-9;]*m`, "g"), "")
      for (const line of plain.split(/\r?\n/)) expect(widthOf(line)).toBeLessThanOrEqual(49)
    }))

  it.live("no journal at the file: exit 2 and nothing created; no such run: exit 1", () =>
    Effect.gen(function*() {
      const { dir, filename } = yield* journalFile
      const missing = path.join(dir, "none.db")
      const ran = yield* runCli(["journal", "--file", missing])
      expect(ran.code).toBe(2)
      expect(ran.stderr).toContain(`no journal at ${missing}`)
      expect(fs.existsSync(missing)).toBe(false)
      const unknown = yield* runCli(["journal", "--file", filename, "nope"])
      expect(unknown.code).toBe(1)
      expect(unknown.stderr).toBe("agent-tools journal: no run \"nope\" in the journal\n")
    }))
})
