/**
 * The shell under attack and under faults: a bash that is killed, commands that go after the protocol, output
 * without end, state that must last (or go), processes that leave their group.
 */
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Fiber, Layer, Ref, Schedule, Stream } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Executor, Recorder } from "../src/index.js"
import * as Workspace from "../src/Workspace.js"
import * as Shell from "../src/workspace/shell.js"
import { alive, killAll as killPids } from "./fixtures/processes.js"
import { call, makeRoot, session, text } from "./fixtures/workspace.js"

const bash = (command: string, timeout_ms = 10_000) => call("bash", { command, timeout_ms })

/** Runs commands one by one in one shell; gives each answer. */
const commands = (root: string, lines: ReadonlyArray<string>) =>
  session(
    root,
    (batch) =>
      Effect.forEach(lines, (line) => Effect.map(batch([bash(line)]), ([answer]) => answer), { concurrency: 1 })
  )

const aliveNow = alive

const killAll = (pids: ReadonlyArray<number>) => Effect.sync(() => killPids(pids))

/** The pids a command printed, one per line of its answer. */
const pidsIn = (answer: string): Array<number> => answer.split("\n").filter((l) => /^\d+$/.test(l)).map(Number)

// each test has a root and a shell of its own, and mostly waits on them: the tests run side by side
describe.concurrent("Workspace bash", () => {
  describe("a shell that is killed", () => {
    it.live("kill -9 $$: the answer says so, the next command runs, with the state from before", () =>
      Effect.gen(function*() {
        const root = makeRoot({ "sub/x.txt": "x" })
        const answers = yield* commands(root, [
          "cd sub && export KEPT=yes",
          "cd .. && export LOST=yes && kill -9 $$",
          "basename $PWD; echo ${KEPT-} ${LOST-none}"
        ])
        expect(answers[1]).toBe(
          "(no output)\n(the shell running this command was killed by SIGKILL; the working directory and exported " +
            "variables are as they were before this command; the next command starts a new shell)"
        )
        expect(answers[2]).toBe("sub\nyes none\n(exit code 0)")
      }))

    it.live("a bash killed from outside mid-command (as the OOM killer would): the same, and the shell goes on", () =>
      Effect.gen(function*() {
        const root = makeRoot()
        const entries = yield* Ref.make<ReadonlyArray<Recorder.Entry>>([])
        yield* Effect.scoped(Effect.gen(function*() {
          const kit = yield* Workspace.toolkit({ root })
          const started = yield* Executor.start(kit, [bash("echo begun; sleep 30")])
          const events = yield* Effect.fork(Stream.runCollect(started.events))
          let pgid: number | undefined
          while (pgid === undefined) {
            yield* Effect.sleep("20 millis")
            const [entry] = yield* Ref.get(entries)
            pgid = entry === undefined ? undefined : (entry.record.data as Workspace.BashProcess).pgid
          }
          yield* Effect.sleep("200 millis")
          process.kill(pgid, "SIGKILL")
          const finished = Chunk.toReadonlyArray(yield* Fiber.join(events)).filter((e) => e._tag === "Finished")
          expect(finished.map((e) => e._tag === "Finished" && text(e.outcome))).toEqual([
            "begun\n(the shell running this command was killed by SIGKILL; the working directory and exported " +
            "variables are as they were before this command; the next command starts a new shell)"
          ])
          expect((yield* Executor.run(kit, [bash("echo alive")])).map(text)).toEqual(["alive\n(exit code 0)"])
        })).pipe(Effect.provide(Layer.merge(NodeContext.layer, Recorder.layerMemory(entries))))
      }))
  })

  describe("commands that go after the protocol", () => {
    const attacks: ReadonlyArray<readonly [string, string]> = [
      ["the old status variable, exported", "export __agent_tools_status=done"],
      ["the old status variable, readonly and exported", "declare -rx __agent_tools_status=0"],
      ["the wrapper's save function unset", "unset -f __agent_tools_save"],
      [
        "builtins redefined and exported",
        "builtin() { :; }; printf() { :; }; echo() { :; }; export -f builtin printf echo"
      ],
      [
        "aliases for exit, builtin and printf",
        "shopt -s expand_aliases; alias exit='true' builtin='true' printf='true'"
      ],
      ["a trap that rewrites the exit status", "trap 'exit 0' EXIT"],
      ["traps on every signal", "trap '' TERM INT HUP EXIT"],
      ["stdout and stderr closed", "exec >/dev/null 2>&1; exec 1>&- 2>&-"],
      ["PROMPT_COMMAND", "export PROMPT_COMMAND='exit 0'"],
      [
        "BASH_ENV pointing at a script that exits 0",
        "echo 'exit 0' > \"$PWD/evil.sh\"; export BASH_ENV=\"$PWD/evil.sh\" ENV=\"$PWD/evil.sh\""
      ],
      ["shell options exported for the next bash", "set -o errexit -o nounset -o noglob -o xtrace; export SHELLOPTS"],
      ["bash options exported", "shopt -s expand_aliases extdebug; export BASHOPTS"],
      ["posix mode", "export POSIXLY_CORRECT=1"],
      ["a file size limit of zero", "ulimit -f 0"],
      ["exec replacing the shell", "exec true"],
      ["IFS made readonly", "declare -rx IFS=x"],
      ["a stopped shell", "kill -STOP $$"]
    ]
    for (const [name, attack] of attacks) {
      it.live(`${name}: later commands still report their exit codes, output and state`, () =>
        Effect.gen(function*() {
          const root = makeRoot({ "sub/x.txt": "x" })
          yield* session(root, (batch) =>
            Effect.gen(function*() {
              // the attack itself may end however it likes, even by timing out; it must not outlive itself
              yield* batch([bash(attack, 2_000)])
              const after = yield* batch([bash("false", 5_000)])
              expect(after).toEqual(["(no output)\n(exit code 1)"])
              expect(yield* batch([bash("cd sub && export AFTER=ok && echo done", 5_000)])).toEqual([
                "done\n(exit code 0)"
              ])
              expect(yield* batch([bash("basename \"$PWD\"; echo \"$AFTER\"; exit 7", 5_000)])).toEqual([
                "sub\nok\n(exit code 7)"
              ])
            }))
        }))
    }

    it.live("a command's own exit status is its own: the trap it set decides it, for that command only", () =>
      Effect.gen(function*() {
        const root = makeRoot()
        expect(yield* commands(root, ["trap 'exit 0' EXIT; false", "false"])).toEqual([
          "(no output)\n(exit code 0)",
          "(no output)\n(exit code 1)"
        ])
      }))

    it.live("a save that fails (exec in place of the shell) keeps the state from before, and says so", () =>
      Effect.gen(function*() {
        const root = makeRoot({ "sub/x.txt": "x" })
        const answers = yield* commands(root, ["export A=1", "export A=2; cd sub; exec true", "echo $A; basename $PWD"])
        expect(answers[1]).toBe(
          "(no output)\n(the state this command left could not be read; the working directory and exported variables " +
            "are as they were before this command)\n(exit code 0)"
        )
        expect(answers[2]).toBe(`1\n${path.basename(root)}\n(exit code 0)`)
      }))

    it.live("the process group is recorded before the command runs; if the record fails, it never runs", () =>
      Effect.gen(function*() {
        const root = makeRoot()
        const seen: Array<boolean> = []
        const watching = Layer.succeed(Recorder.Recorder, {
          write: () => Effect.sync(() => void seen.push(fs.existsSync(path.join(root, "ran"))))
        })
        const failing = Layer.succeed(Recorder.Recorder, {
          write: (entry) =>
            Effect.fail(new Recorder.RecordError({ namespace: entry.record.namespace, reason: "disk full" }))
        })
        const runWith = (layer: Layer.Layer<Recorder.Recorder>) =>
          Effect.scoped(Effect.gen(function*() {
            const kit = yield* Workspace.toolkit({ root })
            return (yield* Executor.run(kit, [bash("touch ran")])).map(text)
          })).pipe(Effect.provide(Layer.merge(NodeContext.layer, layer)))
        expect(yield* runWith(failing)).toEqual([
          "Error: the command was not run: its process could not be recorded (RecordError: the record \"bash/process\" " +
          "could not be written: disk full)"
        ])
        expect(fs.existsSync(path.join(root, "ran"))).toBe(false)
        expect(yield* runWith(watching)).toEqual(["(no output)\n(exit code 0)"])
        expect(seen).toEqual([false])
        expect(fs.existsSync(path.join(root, "ran"))).toBe(true)
      }))
  })

  describe("output", () => {
    it.live(
      "yes for 2 s: head and tail kept, the middle counted and dropped, nothing written to disk",
      () =>
        Effect.gen(function*() {
          const root = makeRoot()
          const tmp = os.tmpdir()
          const shellFolders = () => new Set(fs.readdirSync(tmp).filter((n) => n.startsWith("agent-tools-shell-")))
          const before = shellFolders()
          let largest = 0
          const [answer] = yield* session(root, (batch) =>
            Effect.gen(function*() {
              const sample = Effect.repeat(
                Effect.sync(() => {
                  for (const name of shellFolders()) {
                    if (before.has(name)) continue
                    for (const file of fs.readdirSync(path.join(tmp, name))) {
                      try {
                        largest = Math.max(largest, fs.statSync(path.join(tmp, name, file)).size)
                      } catch {
                        // removed meanwhile
                      }
                    }
                  }
                }),
                { schedule: Schedule.spaced("100 millis") }
              )
              const sampler = yield* Effect.fork(sample)
              const answers = yield* batch([bash("timeout 2 yes; echo done")])
              yield* Fiber.interrupt(sampler)
              return answers
            }))
          const cut = /\n… \[(\d+) bytes cut\] …\n/.exec(answer)
          expect(cut).not.toBeNull()
          const dropped = Number(cut![1])
          console.log(
            `yes for 2 s: ${dropped} bytes read and dropped, ${answer.length} characters kept, the largest file in ` +
              `the shell's folder ${largest} bytes`
          )
          expect(dropped).toBeGreaterThan(10_000_000)
          expect(answer.startsWith("y\ny\ny\n")).toBe(true)
          expect(answer.endsWith("y\ny\ndone\n(exit code 0)")).toBe(true)
          expect(answer.length).toBeLessThan(Shell.MAX_OUTPUT_CHARACTERS + 200)
          expect(largest).toBeLessThan(64 * 1024)
        }),
      20_000
    )

    it.live("the last output before the exit is never lost to the end of the command", () =>
      Effect.gen(function*() {
        const root = makeRoot()
        const answers = yield* commands(root, [
          "sleep 0.3; head -c 200000 /dev/zero | tr '\\0' x; echo; echo end",
          "sleep 0.2; echo only"
        ])
        expect(answers[0].endsWith("x\nend\n(exit code 0)")).toBe(true)
        expect(answers[1]).toBe("only\n(exit code 0)")
      }))

    it.live(
      "a background writer after its command returned is read at a bounded rate, never to disk",
      () =>
        Effect.gen(function*() {
          const root = makeRoot()
          yield* session(root, (batch) =>
            Effect.gen(function*() {
              const [answer] = yield* batch([bash("echo started; yes & echo $! > yes.pid")])
              expect(answer).toContain("started")
              const pid = Number(fs.readFileSync(path.join(root, "yes.pid"), "utf8"))
              yield* Effect.addFinalizer(() => killAll([pid]))
              const ticks = () => {
                const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
                const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
                return Number(fields[11]) + Number(fields[12])
              }
              const first = ticks()
              yield* Effect.sleep("2 seconds")
              // at 1 MB/s the writer spends nearly all its time blocked on the full pipe
              const cpuSeconds = (ticks() - first) / 100
              console.log(`yes & for 2 s after its command returned: ${cpuSeconds} s of CPU`)
              expect(cpuSeconds).toBeLessThan(0.5)
              expect(aliveNow(pid)).toBe(true)
              expect(yield* batch([bash("echo next")])).toEqual(["next\n(exit code 0)"])
              // and a writer that needs more than a pipe's buffer, at less than the rate, is not blocked by it
              yield* batch([bash("(head -c 600000 /dev/zero | tr '\\0' x; touch finished) & echo started")])
              yield* Effect.sleep("1500 millis")
              expect(fs.existsSync(path.join(root, "finished"))).toBe(true)
            }).pipe(Effect.scoped))
        }),
      20_000
    )
  })

  describe("state", () => {
    it.live("unset lasts across calls", () =>
      Effect.gen(function*() {
        const root = makeRoot()
        expect(yield* commands(root, ["export TOKEN=secret", "echo $TOKEN", "unset TOKEN", "echo ${TOKEN-unset}"]))
          .toEqual([
            "(no output)\n(exit code 0)",
            "secret\n(exit code 0)",
            "(no output)\n(exit code 0)",
            "unset\n(exit code 0)"
          ])
      }))

    it.live("a command's own trap ... EXIT runs, and its cd and exports last", () =>
      Effect.gen(function*() {
        const root = makeRoot({ "sub/x.txt": "x" })
        expect(
          yield* commands(root, ["cd sub && export A=1 && trap 'echo bye' EXIT && echo hi", "basename $PWD; echo $A"])
        ).toEqual(["hi\nbye\n(exit code 0)", "sub\n1\n(exit code 0)"])
      }))

    it.live("a working directory removed meanwhile: the command runs in the root, and says so", () =>
      Effect.gen(function*() {
        const root = makeRoot({ "gone/x.txt": "x" })
        const real = fs.realpathSync(root)
        const answers = yield* commands(root, ["cd gone", `rm -rf ${JSON.stringify(path.join(root, "gone"))}`, "pwd"])
        expect(answers[2]).toBe(
          `${real}\n(the working directory ${real}/gone no longer exists; this command ran in the workspace root)\n` +
            "(exit code 0)"
        )
      }))
  })

  describe("processes that leave their group", () => {
    it.live("setsid children, and a double fork whose parent exited, end with the toolkit's scope", () =>
      Effect.gen(function*() {
        const root = makeRoot()
        const answers = yield* commands(root, [
          "setsid sleep 300 & echo $!",
          "setsid bash -c 'sleep 301 & echo $!' ; sleep 0.1",
          "nohup sleep 302 >/dev/null 2>&1 & echo $!"
        ])
        const pids = answers.flatMap(pidsIn)
        expect(pids.length).toBe(3)
        yield* Effect.addFinalizer(() => killAll(pids))
        yield* Effect.sleep("100 millis")
        for (const pid of pids) expect(aliveNow(pid), `pid ${pid}`).toBe(false)
      }).pipe(Effect.scoped))

    it.live("a cancelled or timed-out command ends its setsid children too", () =>
      Effect.gen(function*() {
        const root = makeRoot()
        yield* session(root, (batch) =>
          Effect.gen(function*() {
            const [timedOut] = yield* batch([
              bash("setsid sleep 303 & echo $!; setsid bash -c 'sleep 304 & echo $!'; wait", 800)
            ])
            const pids = pidsIn(timedOut.replace(/^.*output so far:\n/s, ""))
            expect(pids.length).toBe(2)
            yield* Effect.addFinalizer(() => killAll(pids))
            for (const pid of pids) expect(aliveNow(pid), `pid ${pid}`).toBe(false)
            // the shell is still there, and so is what an earlier command left running on purpose
            const [server] = yield* batch([bash("sleep 305 & echo $!")])
            const serverPid = pidsIn(server)[0]
            yield* Effect.addFinalizer(() => killAll([serverPid]))
            yield* batch([bash("sleep 306", 300)])
            expect(aliveNow(serverPid)).toBe(true)
          }).pipe(Effect.scoped))
      }))
  })
})
