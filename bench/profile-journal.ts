/**
 * A loop over row 8's journaled batch (or the journal's store alone), to run under `node --cpu-prof`:
 * `npm run bench -- --only 8` says how fast against a baseline, this says where the time goes. Run compiled (see
 * `build.ts`), with the journal on a tmpfs to see the CPU without the disk's fsync:
 * `TMPDIR=/dev/shm node --cpu-prof node_modules/.cache/effect-agent-tools-bench/bench/profile-journal.js [rounds]
 * [executor|store]`.
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Schema from "effect/Schema"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Executor from "../src/Executor.js"
import * as Journal from "../src/Journal.js"
import * as Tool from "../src/Tool.js"
import * as Toolkit from "../src/Toolkit.js"
import * as ToolResult from "../src/ToolResult.js"

const CALLS = 1000
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "prof-journal-"))
const runtime = ManagedRuntime.make(Journal.layerSqlite({ filename: path.join(dir, "j.db") }))
const Noop = Tool.make("read_file", {
  description: "x",
  parameters: { path: Schema.String },
  replay: "safe",
  handler: () => Effect.succeed("ok")
})
const ARGS = "{\"path\":\"/tmp/b\"}"
const calls = Array.from({ length: CALLS }, (_, i) => ({ id: `call_${i}`, name: "read_file", arguments: ARGS }))
const OK = Either.right(ToolResult.text("ok"))
const store = (runId: string) =>
  Effect.gen(function*() {
    const journal = yield* Journal.Journal
    yield* journal.begin({ runId, definitionsHash: "bench" })
    yield* Effect.forEach(calls, (c, i) => {
      const key = { runId, step: 0, callId: c.id }
      return Effect.zipRight(
        journal.dispatch({
          ...key,
          index: i,
          tool: "read_file",
          arguments: ARGS,
          idempotencyKey: Journal.idempotencyKey(key),
          replay: "safe"
        }),
        journal.outcome({ ...key, index: i, tool: "read_file", arguments: ARGS, outcome: OK })
      )
    }, { concurrency: 8, discard: true })
  })
const mode = process.argv[3] ?? "executor"
for (let r = 0; r < Number(process.argv[2] ?? 20); r++) {
  const t = performance.now()
  await runtime.runPromise(
    mode === "store" ? store(`s${r}`) : Executor.run(Toolkit.make(Noop), calls, { runId: `r${r}`, maxParallel: 8 })
  )
  process.stderr.write(`${r}: ${(performance.now() - t).toFixed(1)} ms\n`)
}
await runtime.dispose()
fs.rmSync(dir, { recursive: true, force: true })
