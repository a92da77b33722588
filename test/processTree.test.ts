import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as ChildProcess from "node:child_process"
import * as ProcessTree from "../src/internal/processTree.js"
import { alive, killAll } from "./fixtures/processes.js"

/** Starts `bash -c script` in a session of its own and reads the pids it prints (one per line) until `count`. */
const start = (script: string, count: number, env: Record<string, string> = {}) =>
  Effect.async<{ readonly child: ChildProcess.ChildProcess; readonly pids: ReadonlyArray<number> }>((resume) => {
    const child = ChildProcess.spawn("/bin/bash", ["-c", script], {
      detached: true,
      stdio: ["ignore", "pipe", "ignore"],
      env: { ...process.env, ...env }
    })
    let text = ""
    child.stdout!.on("data", (chunk: Buffer) => {
      text += chunk.toString("utf8")
      const pids = text.split("\n").filter((line) => /^\d+$/.test(line)).map(Number)
      if (pids.length >= count) resume(Effect.succeed({ child, pids }))
    })
  })

const sleepMillis = (millis: number) => Effect.promise(() => new Promise((resolve) => setTimeout(resolve, millis)))

const aliveNow = alive

/**
 * Waits (up to 5 s of real time) until `check` holds: a background process announces its pid before it has run
 * its first instruction, so what it does first (`setsid`, being reparented) may not have happened yet.
 */
const until = (check: () => boolean) =>
  Effect.gen(function*() {
    const deadline = Date.now() + 5_000
    while (!check() && Date.now() < deadline) yield* sleepMillis(10)
  })

/** Ends whatever a test left behind. */
const cleanup = (pids: ReadonlyArray<number>) => Effect.sync(() => killAll(pids))

const fake = (pid: number, ppid: number, sid: number, pgid: number, startTicks: number): ProcessTree.ProcessInfo => ({
  pid,
  ppid,
  sid,
  pgid,
  startTicks,
  state: "S"
})

describe("processTree", () => {
  it.live("descendants: children and grandchildren by parent link, a setsid grandchild included", () =>
    Effect.gen(function*() {
      const { child, pids } = yield* start(
        "sleep 300 & echo $!; bash -c 'sleep 301 & echo $!; setsid sleep 302 & echo $!; wait' & wait",
        3
      )
      yield* Effect.addFinalizer(() => cleanup([child.pid!, ...pids]))
      yield* until(() => ProcessTree.info(pids[2])?.sid === pids[2])
      const found = ProcessTree.descendants(child.pid!).map((p) => p.pid)
      for (const pid of pids) expect(found).toContain(pid)
      const setsid = ProcessTree.info(pids[2])!
      expect(setsid.sid).toBe(pids[2])
      expect(found).not.toContain(child.pid)
    }).pipe(Effect.scoped))

  it.live("descendants: a session leader that exited still names its session, so what it left is found", () =>
    Effect.gen(function*() {
      const { child, pids } = yield* start("sleep 300 & echo $!", 1)
      yield* Effect.addFinalizer(() => cleanup(pids))
      const leader = ProcessTree.info(child.pid!)!
      yield* Effect.async<void>((resume) => {
        if (child.exitCode !== null) return resume(Effect.void)
        child.once("exit", () => resume(Effect.void))
      })
      yield* until(() => ProcessTree.info(pids[0])?.ppid !== child.pid)
      expect(ProcessTree.info(pids[0])!.ppid).not.toBe(child.pid)
      expect(ProcessTree.descendants(child.pid!, { startTicks: leader.startTicks }).map((p) => p.pid)).toEqual(pids)
    }).pipe(Effect.scoped))

  it("descendants: after a pid is reused, the newcomer's children are not taken, the old session is", () => {
    // 100 was a session leader started at tick 10; it exited and the number now names a process started at 50
    const processes = [
      fake(100, 1, 100, 100, 50),
      fake(200, 100, 100, 100, 60), // the newcomer's child
      fake(300, 1, 100, 100, 20), // left behind by the old 100
      fake(301, 300, 100, 100, 21), // its child
      fake(400, 1, 400, 400, 5) // unrelated
    ]
    expect(ProcessTree.descendants(100, { startTicks: 10, processes }).map((p) => p.pid)).toEqual([300, 301])
    expect(ProcessTree.descendants(100, { startTicks: 50, processes }).map((p) => p.pid)).toEqual([200, 300, 301])
  })

  it.live("withEnvironment: a setsid process whose parent exited is found by the marker in its environment", () =>
    Effect.gen(function*() {
      const marker = `test-${process.pid}-${Date.now()}`
      const { child, pids } = yield* start("setsid sleep 300 & echo $!", 1, { TREE_TEST_MARKER: marker })
      yield* Effect.addFinalizer(() => cleanup(pids))
      yield* Effect.async<void>((resume) => {
        if (child.exitCode !== null) return resume(Effect.void)
        child.once("exit", () => resume(Effect.void))
      })
      // the background process has called setsid: it is in a session of its own
      yield* until(() => ProcessTree.info(pids[0])?.sid === pids[0])
      expect(ProcessTree.descendants(child.pid!).map((p) => p.pid)).not.toContain(pids[0])
      expect(ProcessTree.withEnvironment("TREE_TEST_MARKER", (v) => v === marker).map((p) => p.pid)).toEqual(pids)
      expect(ProcessTree.withEnvironment("TREE_TEST_MARKER", (v) => v === "other")).toEqual([])
      expect(ProcessTree.environmentValue(pids[0], "TREE_TEST_MARKER")).toBe(marker)
    }).pipe(Effect.scoped))

  it.live("endTree: ends the process, its setsid grandchild, and one that ignores SIGTERM (after the grace)", () =>
    Effect.gen(function*() {
      const { child, pids } = yield* start(
        "setsid sleep 300 & echo $!; bash -c 'trap \"\" TERM; while true; do sleep 0.05; done' & echo $!; wait",
        2
      )
      yield* Effect.addFinalizer(() => cleanup([child.pid!, ...pids]))
      yield* sleepMillis(100)
      const started = Date.now()
      yield* ProcessTree.endTree(child.pid!, { graceMillis: 300 })
      const took = Date.now() - started
      for (const pid of [child.pid!, ...pids]) expect(aliveNow(pid), `pid ${pid}`).toBe(false)
      // the TERM-ignoring loop needed the SIGKILL after the grace
      expect(took).toBeGreaterThanOrEqual(280)
      expect(took).toBeLessThan(3000)
    }).pipe(Effect.scoped))

  it.live("end: processes that go on SIGTERM are not waited for longer than they take", () =>
    Effect.gen(function*() {
      const { child, pids } = yield* start("sleep 300 & echo $!; wait", 1)
      yield* Effect.addFinalizer(() => cleanup([child.pid!, ...pids]))
      const started = Date.now()
      yield* ProcessTree.endTree(child.pid!, { graceMillis: 5_000 })
      expect(Date.now() - started).toBeLessThan(1_000)
      expect(aliveNow(pids[0])).toBe(false)
    }).pipe(Effect.scoped))
})
