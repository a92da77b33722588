/**
 * `agent-tools demo`: one scripted model turn against a fresh temporary workspace, rendered live, then what goes
 * back to the model, in call order. It shows the library's main job in a few seconds, with or without a terminal.
 *
 * @internal
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Path from "@effect/platform/Path"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as fs from "node:fs"
import * as os from "node:os"
import * as nodePath from "node:path"
import * as Executor from "../Executor.js"
import * as Permission from "../Permission.js"
import * as Tool from "../Tool.js"
import * as Toolkit from "../Toolkit.js"
import * as Workspace from "../Workspace.js"
import type { Sink } from "./render.js"
import { label, makeView, modelText, renderBatch, writeText } from "./render.js"

const files: Record<string, string> = {
  "README.md": "# calculator\n\nA tiny calculator. Run `node src/math.js`.\n",
  "src/math.js": [
    "// TODO: handle division by zero",
    "export const add = (a, b) => a + b",
    "export const subtract = (a, b) => a + b",
    "export const divide = (a, b) => a / b",
    ""
  ].join("\n"),
  "src/main.js": "import { add } from \"./math.js\"\nconsole.log(add(2, 3))\n"
}

/** A slow tool that reports progress: what any long-running tool looks like to the host. */
const IndexDocs = Tool.make("index_docs", {
  description: "Index the documentation (slowly)",
  parameters: { steps: Schema.Int.pipe(Schema.between(1, 20)) },
  annotations: { readOnly: true },
  handler: ({ steps }) =>
    Effect.gen(function*() {
      for (let step = 1; step <= steps; step++) {
        yield* Effect.sleep("250 millis")
        yield* Tool.progress({ progress: step, total: steps, message: `indexed chunk ${step}` })
      }
      return `indexed ${steps} chunks`
    })
})

/** The model's turn: what it asked for, with two mistakes of the kind models make. */
const turn: ReadonlyArray<Executor.ToolCall> = [
  { id: "call_1", name: "read_file", arguments: "{\"path\":\"README.md\"}" },
  { id: "call_2", name: "read_file", arguments: "{\"path\":\"src/math.js\"}" },
  { id: "call_3", name: "grep", arguments: "{\"pattern\":\"TODO\"}" },
  { id: "call_4", name: "bash", arguments: "{\"command\":\"cd src && export STEP=one && ls\"}" },
  { id: "call_5", name: "bash", arguments: "{\"command\":\"echo \\\"in $(basename $PWD) after step $STEP\\\"\"}" },
  {
    id: "call_6",
    name: "edit_file",
    arguments: JSON.stringify({
      path: "src/math.js",
      old_string: "export const subtract = (a, b) => a + b",
      new_string: "export const subtract = (a, b) => a - b"
    })
  },
  { id: "call_7", name: "index_docs", arguments: "{\"steps\":6}" },
  { id: "call_8", name: "read_file", arguments: "{\"path\": 42}" },
  { id: "call_9", name: "deploy_to_production", arguments: "{}" }
]

export const run = (sink: Sink): Effect.Effect<void, Workspace.WorkspaceError, FileSystem.FileSystem | Path.Path> =>
  Effect.scoped(Effect.gen(function*() {
    const root = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const dir = fs.mkdtempSync(nodePath.join(os.tmpdir(), "agent-tools-demo-"))
        for (const [name, content] of Object.entries(files)) {
          fs.mkdirSync(nodePath.dirname(nodePath.join(dir, name)), { recursive: true })
          fs.writeFileSync(nodePath.join(dir, name), content)
        }
        return dir
      }),
      (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
    )
    writeText(sink, `A scripted model turn of ${turn.length} tool calls against a fresh workspace (${root}).`)
    writeText(
      sink,
      "Calls on one file and the two bash calls (one shell) keep the model's order; the rest run alongside.\n\n"
    )
    const kit = Toolkit.merge(yield* Workspace.toolkit({ root }), Toolkit.make(IndexDocs))
    const view = makeView(turn, sink)
    // the demo approves what it is asked, and shows what it approved: a real host would ask a person here
    const approve = Permission.layer((request) =>
      Effect.sync(() => {
        if (request.tool === "edit_file" || request.tool === "write_file") {
          const index = turn.findIndex((call) => call.id === request.callId)
          view.note(
            `${label(index)} asked permission to ${request.description} (approved)\n${request.preview ?? ""}`
          )
        }
        return Permission.allow
      })
    )
    const outcomes = yield* renderBatch(view, Executor.stream(kit, turn)).pipe(Effect.provide(approve))
    writeText(sink, "\nWhat goes back to the model, in call order:\n\n")
    outcomes.forEach((outcome, i) => {
      writeText(sink, `${label(i)} ${turn[i].name} (${turn[i].id})`)
      writeText(sink, modelText(outcome), "  ")
      sink.write("\n")
    })
  }))
