/**
 * Row 15's processes: a tool whose result is 10 MB of text, and what the process's resident memory peaks at while
 * it makes, carries and sends that result. Linux's peak resident set (`VmHWM` in /proc/self/status) is reset
 * (`5` into /proc/self/clear_refs) just before, after a full collection (`node --expose-gc`).
 * - `floor`: the result made and held, nothing else (the least any program pays);
 * - `executor`: the tool called through `Executor.run`, its outcome held; prints `{"growth": bytes}`;
 * - `mcp`: the tool served by `McpServer.stdio`, beside a `memory` tool that resets the peak (`reset: true`) or reads
 *   it, so the client (bench/big-result.ts) measures the server around the call.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as fs from "node:fs"
import * as Executor from "../../src/Executor.js"
import * as McpServer from "../../src/McpServer.js"
import * as Tool from "../../src/Tool.js"
import * as Toolkit from "../../src/Toolkit.js"

import { RESULT_BYTES } from "../constants.js"

/** 128 characters: a line of text, its newline included. */
const LINE = `${"0123456789abcdefghijklmnopqrstuvwxyz ".repeat(4).slice(0, 127)}\n`

/** 10 MB of lines of text (128 characters each), made flat: one string of 10 MB and nothing else held. */
const makeResult = (): string => {
  const text = LINE.repeat(RESULT_BYTES / LINE.length)
  text.charCodeAt(RESULT_BYTES >> 1) // flattens the rope `repeat` makes
  return text
}

const kb = (field: string): number => {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(fs.readFileSync("/proc/self/status", "utf8"))
  if (match === null) throw new Error(`row 15: no ${field} in /proc/self/status`)
  return Number(match[1]) * 1024
}

/** A full collection, then the peak resident set reset to what is resident now; gives that. */
const resetPeak = (): number => {
  const gc = (globalThis as { gc?: () => void }).gc
  if (gc === undefined) throw new Error("row 15 needs node --expose-gc")
  gc()
  fs.writeFileSync("/proc/self/clear_refs", "5")
  return kb("VmRSS")
}

const peak = (): number => kb("VmHWM")

const Big = Tool.make("big", {
  description: "Answer 10 MB of text",
  handler: () => Effect.sync(makeResult)
})

const Memory = Tool.make("memory", {
  description: "Reset the peak resident memory, or read it",
  parameters: { reset: Schema.Boolean },
  handler: ({ reset }) => Effect.sync(() => JSON.stringify(reset ? { resident: resetPeak() } : { peak: peak() }))
})

const mode = process.argv[2]
let held: unknown
if (mode === "floor") {
  const before = resetPeak()
  held = makeResult()
  process.stdout.write(`${JSON.stringify({ growth: peak() - before, length: (held as string).length })}\n`)
} else if (mode === "executor") {
  const before = resetPeak()
  const outcomes = await Effect.runPromise(Executor.run(Toolkit.make(Big), [{ id: "1", name: "big", arguments: "{}" }]))
  held = outcomes
  const outcome = outcomes[0]
  if (Either.isLeft(outcome)) throw new Error(`row 15: ${outcome.left.message}`)
  const text = outcome.right.content.map((part) => (part.type === "text" ? part.text : "")).join("")
  process.stdout.write(`${JSON.stringify({ growth: peak() - before, length: text.length })}\n`)
} else if (mode === "mcp") {
  NodeRuntime.runMain(
    McpServer.stdio(Toolkit.make(Big, Memory), { name: "bench-big", version: "1.0.0" })
  )
} else {
  throw new Error(`row 15: no mode ${mode}`)
}
