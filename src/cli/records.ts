/**
 * What the CLI's hosts (`mcp`, `provider`, `call`) record of the calls they run, and the cleanup, at the next
 * start, of what a host that died left running.
 *
 * Each host appends its calls' records (`Recorder` entries; `bash/process` is the one that matters here) to a
 * JSON-lines file of its own, synced before the command it covers runs:
 * `$XDG_STATE_HOME/agent-tools/hosts/<hash of the root>/<pid>-<start ticks>.jsonl` (`~/.local/state` when
 * `XDG_STATE_HOME` is unset). One file per host, so two hosts serving one folder never write the same file and
 * need no lock. At start, a host reads the files of the hosts of its root that are gone (no live process with that
 * pid and start time: the id of a dead host cannot be taken for a live one), ends what their `bash` commands left
 * running (`Workspace.endLeftovers`, which touches only processes that carry a recorded marker) and removes the
 * files. A host that ends normally removes its own file: its scope ended its processes already.
 *
 * Recording is best effort for the host: if the folder cannot be written, the host says so on stderr once and runs
 * without a recorder. The cleanup needs `/proc` (Linux); elsewhere files are written and left alone. The durable
 * journal will take this over (the same records, the same cleanup).
 *
 * @internal
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as nodePath from "node:path"
import * as ProcessTree from "../internal/processTree.js"
import * as Recorder from "../Recorder.js"
import * as Workspace from "../Workspace.js"

/** A dead host's file larger than this is read only this far (its first records are the ones that matter). */
const MAX_RECORDS_BYTES = 16 * 1024 * 1024

/** The folder of the records of the hosts serving `root` (`env` gives `XDG_STATE_HOME`). */
export const folder = (root: string, env: NodeJS.ProcessEnv = process.env): string => {
  const state = env.XDG_STATE_HOME !== undefined && env.XDG_STATE_HOME !== ""
    ? env.XDG_STATE_HOME
    : nodePath.join(os.homedir(), ".local", "state")
  let real = nodePath.resolve(root)
  try {
    real = fs.realpathSync(real)
  } catch {
    // a root that does not resolve is hashed as given
  }
  return nodePath.join(state, "agent-tools", "hosts", createHash("sha256").update(real).digest("hex").slice(0, 16))
}

const HOST_FILE = /^(\d+)-(\d+)\.jsonl$/

/** Whether the host a file is named for is still running. */
const hostAlive = (pid: number, startTicks: number): boolean => {
  const found = ProcessTree.info(pid)
  return found !== undefined && found.state !== "Z" && found.startTicks === startTicks
}

/** The `bash/process` records of a file. */
const bashRecords = (file: string): Array<Workspace.BashProcess> => {
  let text: string
  try {
    const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK)
    try {
      const buffer = Buffer.alloc(Math.min(fs.fstatSync(fd).size, MAX_RECORDS_BYTES))
      text = buffer.subarray(0, fs.readSync(fd, buffer, 0, buffer.length, 0)).toString("utf8")
    } finally {
      fs.closeSync(fd)
    }
  } catch {
    return []
  }
  const out: Array<Workspace.BashProcess> = []
  for (const line of text.split("\n")) {
    let parsed: unknown
    try {
      parsed = JSON.parse(line)
    } catch {
      continue // a line cut short by the crash
    }
    const entry = parsed as { namespace?: unknown; data?: unknown }
    if (entry?.namespace !== Workspace.BASH_PROCESS_NAMESPACE) continue
    const decoded = Recorder.decode(
      new Recorder.Record({ namespace: Workspace.BASH_PROCESS_NAMESPACE, data: entry.data }),
      Workspace.BashProcess
    )
    if (Either.isRight(decoded)) out.push(decoded.right)
  }
  return out
}

/**
 * Ends what the dead hosts of `dir` left running and removes their files; gives how many processes were found.
 * The files of live hosts (and this one's) are left alone.
 */
export const cleanUp = (dir: string): Effect.Effect<number> =>
  Effect.gen(function*() {
    // without /proc no host can be told alive, and no leftover found: leave every file as it is
    if (ProcessTree.info(process.pid) === undefined) return 0
    let names: Array<string>
    try {
      names = fs.readdirSync(dir)
    } catch {
      return 0
    }
    const dead: Array<string> = []
    for (const name of names) {
      const match = HOST_FILE.exec(name)
      if (match === null || hostAlive(Number(match[1]), Number(match[2]))) continue
      dead.push(nodePath.join(dir, name))
    }
    if (dead.length === 0) return 0
    const ended = yield* Workspace.endLeftovers(dead.flatMap(bashRecords))
    for (const file of dead) fs.rmSync(file, { force: true })
    return ended
  })

/**
 * The `Recorder` of a host serving `root` (none when its folder cannot be written), after the cleanup of what dead
 * hosts of that root left running. Its file is removed when the layer's scope closes.
 */
export const layer = (root: string): Layer.Layer<never, never, FileSystem.FileSystem> =>
  Layer.unwrapScoped(Effect.gen(function*() {
    const dir = folder(root)
    const self = ProcessTree.info(process.pid)
    const file = nodePath.join(dir, `${process.pid}-${self?.startTicks ?? 0}.jsonl`)
    const made = Either.try(() => fs.mkdirSync(dir, { recursive: true, mode: 0o700 }))
    if (Either.isLeft(made)) {
      process.stderr.write(
        `agent-tools: the shell's processes are not recorded (${dir}: ${made.left}); what a crash leaves running ` +
          "will not be ended at the next start\n"
      )
      return Layer.empty
    }
    yield* cleanUp(dir)
    yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(file, { force: true })))
    return Recorder.layerJsonLines(file).pipe(
      Layer.catchAll((error) =>
        Layer.effectDiscard(Effect.sync(() => {
          process.stderr.write(`agent-tools: the shell's processes are not recorded (${error.message})\n`)
        }))
      )
    )
  }))
