/**
 * The examples of docs/mcp-client.md, run (see ./examples.ts for how the page and this file are kept the same).
 * The page's servers are values a host would write (`npx ...`, an HTTPS endpoint); the tests hand the same
 * functions the reference server run offline with this Node, and a file server of ours served in memory.
 */
import { describe, expect, it } from "@effect/vitest"
import { InMemoryTransport } from "@modelcontextprotocol/client"
import { McpServer as SdkMcpServer } from "@modelcontextprotocol/server"
import { Clock, Effect, Schema } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as z from "zod/v4"
import { Executor, Permission, Tool, Toolkit } from "../src/index.js"
import * as McpAuth from "../src/McpAuth.js"
import * as McpClient from "../src/McpClient.js"
import * as McpServer from "../src/McpServer.js"
import { modelText } from "../test/helpers.js"
import * as peers from "../test/interop/peers.js"
import { breakingServer } from "../test/mcpPeers.js"
import { authorizationServer, protectedServer } from "../test/oauthPeers.js"
import { checkExamples } from "./examples.js"

// #region connect
const everything = McpClient.stdio({ command: "npx", args: ["-y", "@modelcontextprotocol/server-everything"] })

const echo = (server: McpClient.Transport) =>
  Effect.scoped(Effect.gen(function*() {
    const client = yield* McpClient.connect(server, { prefix: "every" })
    const kit = yield* client.toolkit
    const [outcome] = yield* Executor.run(kit, [
      { id: "call_1", name: "every__echo", arguments: "{\"message\":\"hello\"}" },
      { id: "call_2", name: "every__get-sum", arguments: "{\"a\":\"x\",\"b\":1}" }
    ])
    return { server: client.serverInfo.name, echo: Toolkit.lookup(kit, "every__echo")._tag, outcome }
  }))
// echo(everything) => { server: "mcp-servers/everything", echo: "Some", outcome: Either.right(text "Echo: hello") }
// #endregion

// #region compose
const Now = Tool.make("now", {
  description: "The current time, as ISO 8601",
  handler: () => Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis).toISOString())
})

/** Connects to every server once; gives an Effect of the current toolkit, to read at the start of each turn. */
const connectAll = (servers: { readonly everything: McpClient.Transport; readonly files: McpClient.Transport }) =>
  Effect.gen(function*() {
    const every = yield* McpClient.connect(servers.everything, { prefix: "every" })
    const files = yield* McpClient.connect(servers.files, {
      prefix: "fs",
      // both tools touch the file named by `path`: calls on one file run one after another, in the model's order
      resource: {
        read_file: ({ path }) => `file:${path}`,
        write_file: ({ path }) => `file:${path}`
      },
      // a whole batch waits while the server is being reset
      sequential: { fs__reset: true }
    })
    return Effect.map(
      Effect.all([every.toolkit, files.toolkit]),
      ([everyKit, filesKit]) => Toolkit.merge(Toolkit.make(Now), everyKit, filesKit)
    )
  })

const turn = (toolkit: Effect.Effect<Toolkit.Toolkit<Tool.Tool<string>>>) =>
  Effect.flatMap(toolkit, (kit) =>
    Executor.run(kit, [
      { id: "1", name: "fs__write_file", arguments: { path: "notes.md", text: "# Notes" } },
      { id: "2", name: "fs__read_file", arguments: { path: "notes.md" } },
      { id: "3", name: "every__echo", arguments: { message: "meanwhile" } }
    ]))
// Effect.scoped(Effect.flatMap(connectAll(servers), turn))
// => outcomes in call order: "wrote notes.md", "# Notes", "Echo: meanwhile"
// #endregion

// #region trust
/** The tools this host has decided to let run without asking, by the names it gave them. */
const trusted = new Set(["fs__read_file", "fs__delete_file"])

/** Where a real host shows the request to a person; this one has nobody to show it to. */
const askSomeone = (_request: Permission.PermissionRequest) => Effect.succeed(Permission.deny("nobody to ask"))

const Policy = Permission.layer((request) =>
  // the host's own list can let a call through; a server's hint can only send it to a person
  trusted.has(request.tool) && request.annotations.destructive !== true
    ? Effect.succeed(Permission.allow)
    : askSomeone(request)
)

const guarded = (files: McpClient.Transport) =>
  Effect.scoped(Effect.gen(function*() {
    const client = yield* McpClient.connect(files, { prefix: "fs", permission: "mcp" })
    return yield* Executor.run(yield* client.toolkit, [
      { id: "1", name: "fs__read_file", arguments: { path: "notes.md" } },
      { id: "2", name: "fs__delete_file", arguments: { path: "notes.md" } },
      { id: "3", name: "fs__write_file", arguments: { path: "notes.md", text: "gone?" } }
    ])
  })).pipe(Effect.provide(Policy))
// => read_file runs; delete_file (trusted, but it says it is destructive) and write_file (not trusted) go to
//    askSomeone: "Error: permission denied: call delete_file on the MCP server "files" with {...}: nobody to ask"
// #endregion

// #region sign-in
// given: openBrowser: (url: URL) => Effect.Effect<void>

/** The notes of a hosted server: signs in the first time (in the user's browser), then with what it stored. */
const readNotes = (url: string, authStore: string) =>
  Effect.scoped(Effect.gen(function*() {
    // a page on 127.0.0.1 for the authorization server to send the browser back to, for the life of the scope
    const redirect = yield* McpAuth.loopback({ onUrl: (request) => openBrowser(request.url) })
    const auth = McpAuth.oauth({ redirect, store: McpAuth.fileStore(authStore), clientName: "notes-agent" })
    const client = yield* McpClient.connect(McpClient.http(url, { auth }))
    const [outcome] = yield* Executor.run(yield* client.toolkit, [{ id: "1", name: "read_notes", arguments: {} }])
    return outcome
  }))
// readNotes(url, store) => the browser opens once; the next readNotes(url, store) signs in with the stored tokens
// #endregion

// #region revision
/** A search over HTTP: searching twice is harmless, though the server does not mark its tool so. */
const search = (url: string, query: string) =>
  Effect.scoped(Effect.gen(function*() {
    const client = yield* McpClient.connect(McpClient.http(url), { replay: { search: "safe" } })
    const [outcome] = yield* Executor.run(yield* client.toolkit, [{ id: "1", name: "search", arguments: { query } }])
    return { revision: client.protocolVersion, outcome }
  }))
// search(url, "mcp") => { revision: "2026-07-28", outcome: text "3 results for mcp" }, even when the connection
//   broke under the first attempt (it is sent again); without replay it would fail, saying it may have run
// #endregion

// ---------------------------------------------------------------------------------------------------------------
// the peers the tests give those functions
// ---------------------------------------------------------------------------------------------------------------

const everythingOffline = McpClient.stdio({ command: process.execPath, args: [peers.serverEverything] })

/** A small file server of ours, served in memory: what `files` stands for on the page. */
const filesServer = Effect.gen(function*() {
  const files = new Map<string, string>()
  const ReadFile = Tool.make("read_file", {
    description: "Read a file",
    parameters: { path: Schema.String },
    annotations: { readOnly: true, destructive: false, openWorld: false },
    handler: ({ path }) => Effect.succeed(files.get(path) ?? "")
  })
  const WriteFile = Tool.make("write_file", {
    description: "Write a file",
    parameters: { path: Schema.String, text: Schema.String },
    annotations: { readOnly: false, destructive: true, openWorld: false },
    // slow on purpose: a read of the same file, sent alongside, must still wait for it
    handler: ({ path, text }) =>
      Effect.as(
        Effect.zipRight(Effect.promise(() => sleep(50)), Effect.sync(() => files.set(path, text))),
        `wrote ${path}`
      )
  })
  const DeleteFile = Tool.make("delete_file", {
    description: "Delete a file",
    parameters: { path: Schema.String },
    annotations: { readOnly: false, destructive: true, openWorld: false },
    handler: ({ path }) => Effect.succeed(files.delete(path) ? `deleted ${path}` : `no ${path}`)
  })
  const Reset = Tool.make("reset", {
    description: "Forget every file",
    handler: () => Effect.sync(() => files.clear())
  })
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  yield* McpServer.serve(
    Toolkit.make(ReadFile, WriteFile, DeleteFile, Reset),
    { name: "files", version: "1.0.0" },
    serverSide
  )
  return { transport: clientSide, files }
})

const sleep = (millis: number) => new Promise<void>((resolve) => setTimeout(resolve, millis))

/** The user's browser, as far as the page needs one: it loads the page, follows the redirects, signs in at once. */
const opened: Array<string> = []
const openBrowser = (url: URL) =>
  Effect.sync(() => {
    opened.push(url.href)
    void fetch(url).then((page) => page.text())
  })

describe("docs/mcp-client.md", () => {
  it("shows exactly the code that runs here", () => {
    checkExamples(new URL("./mcp-client.md", import.meta.url), new URL("./mcp-client.test.ts", import.meta.url))
  })

  it.live("connect: a spawned server's tools, prefixed, run through the executor", () =>
    Effect.gen(function*() {
      expect(everything).toMatchObject({ _tag: "StdioTransport", command: "npx" })
      const result = yield* echo(everythingOffline)
      expect(result.server).toBe("mcp-servers/everything")
      expect(result.echo).toBe("Some")
      expect(modelText(result.outcome)).toBe("Echo: hello")
    }))

  it.scopedLive("compose: several servers and local tools in one toolkit, the host's resource keys applied", () =>
    Effect.gen(function*() {
      const files = yield* filesServer
      const toolkit = yield* connectAll({ everything: everythingOffline, files: files.transport })
      const kit = yield* toolkit
      expect(Toolkit.names(kit)).toContain("now")
      expect(Toolkit.names(kit)).toContain("every__echo")
      expect(Toolkit.names(kit)).toContain("fs__write_file")
      const outcomes = yield* turn(toolkit)
      expect(outcomes.map(modelText)).toEqual(["wrote notes.md", "# Notes", "Echo: meanwhile"])
    }))

  it.scopedLive("trust: hints can send a call to a person, never let one through", () =>
    Effect.gen(function*() {
      const files = yield* filesServer
      files.files.set("notes.md", "# Notes")
      const outcomes = yield* guarded(files.transport)
      expect(outcomes.map(modelText)).toEqual([
        "# Notes",
        "Error: permission denied: call delete_file on the MCP server \"files\" with {\"path\":\"notes.md\"}: " +
        "nobody to ask",
        "Error: permission denied: call write_file on the MCP server \"files\" with " +
        "{\"path\":\"notes.md\",\"text\":\"gone?\"}: nobody to ask"
      ])
      expect(files.files.get("notes.md")).toBe("# Notes")
    }))

  it.scopedLive("sign-in: OAuth the first time, through the loopback page; the stored tokens the next", () =>
    Effect.gen(function*() {
      const as = yield* authorizationServer()
      const notes = yield* protectedServer(as, () => {
        const server = new SdkMcpServer({ name: "notes", version: "1.0.0" })
        server.registerTool("read_notes", {}, () => ({ content: [{ type: "text", text: "buy milk" }] }))
        return server
      })
      const store = fs.mkdtempSync(path.join(os.tmpdir(), "docs-auth-"))
      opened.length = 0
      expect(modelText(yield* readNotes(notes.url, store))).toBe("buy milk")
      expect(opened.length).toBe(1)
      expect(modelText(yield* readNotes(notes.url, store))).toBe("buy milk")
      expect(opened.length).toBe(1)
    }))

  it.scopedLive("revision: 2026-07-28 negotiated; a search whose connection broke is sent again", () =>
    Effect.gen(function*() {
      const server = yield* breakingServer(() => {
        const mcp = new SdkMcpServer({ name: "search", version: "1.0.0" })
        mcp.registerTool("search", { inputSchema: z.object({ query: z.string() }) }, ({ query }) => ({
          content: [{ type: "text", text: `3 results for ${query}` }]
        }))
        return mcp
      })
      const result = yield* search(server.url, "mcp")
      expect(result.revision).toBe("2026-07-28")
      expect(modelText(result.outcome)).toBe("3 results for mcp")
      expect(server.ran).toEqual(["search", "search"])
    }))
})
