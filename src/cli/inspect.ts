/**
 * What `agent-tools inspect` does (its options are in edges.ts): loaded when the command runs, so the other
 * commands never load the MCP client, OAuth and the SDK's client modules (a cold start of `agent-tools mcp` reads
 * and evaluates less; benchmark row 4b).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Os from "node:os"
import * as Path from "node:path"
import * as McpAuth from "../McpAuth.js"
import * as McpClient from "../McpClient.js"
import * as Tool from "../Tool.js"
import * as ToolError from "../ToolError.js"
import * as Toolkit from "../Toolkit.js"
import { CommandFailed, printable, progressPrinter, UsageError } from "./commands.js"
import type { Sink } from "./render.js"
import { cell, oneLine, stdoutSink, truncate, widthOf, writeText } from "./render.js"

/**
 * The tools of a server as a table: name, hints, description; on a terminal every row fits its width (a long
 * description is cut), elsewhere a description keeps its first 80 characters.
 */
const toolTable = (tools: ReadonlyArray<Tool.Any>, sink: Sink): string => {
  const nameWidth = Math.min(32, Math.max(4, ...tools.map((t) => widthOf(oneLine(t.name)))))
  const hints = (t: Tool.Any) =>
    [
      t.annotations.readOnly === true ? "read-only" : undefined,
      t.annotations.destructive === true ? "destructive" : undefined,
      t.annotations.idempotent === true ? "idempotent" : undefined,
      t.annotations.openWorld === true ? "open-world" : undefined
    ].filter((h) => h !== undefined).join(",")
  const hintsWidth = Math.max(5, ...tools.map((t) => hints(t).length))
  const descriptionWidth = sink.isTTY ? Math.max(10, sink.columns - 1 - nameWidth - hintsWidth - 4) : 80
  const row = (name: string, hint: string, description: string) => {
    const text = `${cell(name, nameWidth)}  ${cell(hint, hintsWidth)}  ${truncate(description, descriptionWidth)}`
    return sink.isTTY ? truncate(text, sink.columns - 1) : text
  }
  const rows = tools.map((t) => row(oneLine(t.name), hints(t), oneLine(t.description)))
  return [row("TOOL", "HINTS", "DESCRIPTION"), ...rows].map((r) => r.trimEnd()).join("\n")
}

/** Where `inspect` keeps what it signed in with: one file per server, its owner's only. */
const authStoreOf = (given: Option.Option<string>): string =>
  Option.getOrElse(
    given,
    () => Path.join(process.env.XDG_CONFIG_HOME ?? Path.join(Os.homedir(), ".config"), "agent-tools", "mcp-auth")
  )

/**
 * Signing in for `inspect --url`: the browser step is the user's (the page's URL on stderr, the authorization
 * server's redirect caught on a loopback port), the credentials kept in the auth store for the next run.
 */
const signIn = (store: Option.Option<string>) =>
  Effect.map(
    McpAuth.loopback({
      onUrl: (request) =>
        Effect.sync(() =>
          void process.stderr.write(
            `${request.server.host} asks you to sign in. Open this page in a browser, then come back here:\n  ${request.url.href}\n`
          )
        )
    }),
    (redirect) => McpAuth.oauth({ redirect, store: McpAuth.fileStore(authStoreOf(store)), clientName: "agent-tools" })
  )

/** `inspect`, its options parsed. */
export const inspect = ({ args, authStore, call, command, url }: {
  readonly url: Option.Option<string>
  readonly authStore: Option.Option<string>
  readonly call: Option.Option<string>
  readonly args: Option.Option<string>
  readonly command: ReadonlyArray<string>
}) =>
  Effect.scoped(Effect.gen(function*() {
    if (Option.isSome(url) === command.length > 0) {
      return yield* Effect.fail(new UsageError({ message: "give either --url URL or -- <command> [args...]" }))
    }
    if (Option.isSome(url) && !URL.canParse(url.value)) {
      return yield* Effect.fail(new UsageError({ message: `--url ${JSON.stringify(url.value)} is not a URL` }))
    }
    const transport = Option.isSome(url)
      ? McpClient.http(url.value, { auth: yield* signIn(authStore) })
      : McpClient.stdio({ command: command[0], args: command.slice(1) })
    const client = yield* McpClient.connect(transport)
    const kit = yield* client.toolkit
    if (Option.isNone(call)) {
      // what a server says about itself goes through writeText, which drops control characters on the way
      const sink = stdoutSink()
      writeText(sink, `${client.serverInfo.name} ${client.serverInfo.version} (MCP ${client.protocolVersion})`)
      if (client.instructions !== undefined) writeText(sink, client.instructions)
      sink.write(`\n${toolTable(kit.tools, sink)}\n`)
      return
    }
    const tool = kit.byName.get(call.value)
    if (tool === undefined) {
      return yield* Effect.fail(
        new UsageError({ message: `the server has no tool "${call.value}"; it has ${Toolkit.names(kit).join(", ")}` })
      )
    }
    const progress = progressPrinter()
    const outcome = yield* Tool.execute(tool, { id: "inspect", arguments: Option.getOrElse(args, () => "{}") }, {
      onProgress: progress.report
    }).pipe(Effect.ensuring(Effect.sync(progress.done)))
    if (Either.isLeft(outcome)) {
      process.stderr.write(`${ToolError.toModelText(outcome.left)}\n`)
      return yield* Effect.fail(new CommandFailed({ code: 1 }))
    }
    const text = printable(outcome.right)
    process.stdout.write(text.endsWith("\n") ? text : `${text}\n`)
  }))
