/**
 * Signing in to a remote MCP server: `McpClient.http` with an `McpAuth.oauth` against a local authorization server
 * and the MCP server it protects (test/oauthPeers.ts), over real sockets: the whole flow, the token stores,
 * refresh, step-up, the issuer and state checks, and the loopback redirect the CLI uses.
 */
import { describe, expect, it } from "@effect/vitest"
import { McpServer as SdkMcpServer } from "@modelcontextprotocol/server"
import { Effect, Logger } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Executor from "../src/Executor.js"
import { fileNameOf } from "../src/internal/mcpAuth.js"
import * as McpAuth from "../src/McpAuth.js"
import * as McpClient from "../src/McpClient.js"
import type * as Tool from "../src/Tool.js"
import type * as Toolkit from "../src/Toolkit.js"
import { modelText } from "./helpers.js"
import { authorizationServer, protectedServer } from "./oauthPeers.js"

const text = (value: string) => ({ content: [{ type: "text" as const, text: value }] })

const notes = () => {
  const server = new SdkMcpServer({ name: "notes", version: "1.0.0" })
  server.registerTool("read_notes", { annotations: { readOnlyHint: true } }, () => text("a note"))
  server.registerTool("write_note", {}, () => text("written"))
  return server
}

const run = (kit: Toolkit.Toolkit<Tool.Tool<string>>, name: string) =>
  Effect.map(Executor.run(kit, [{ id: "call_1", name, arguments: {} }]), (outcomes) => outcomes[0])

const temporaryFolder = () => fs.mkdtempSync(path.join(os.tmpdir(), "mcp-auth-"))

/**
 * A browser that signs in at once: it opens the authorization page, and hands back the query of the page the
 * authorization server redirects to (without loading it); `change` may tamper with it on the way.
 */
const browser = (
  opened: Array<McpAuth.AuthorizationRequest>,
  change: (query: URLSearchParams) => URLSearchParams = (query) => query
): McpAuth.Redirect => ({
  url: new URL("http://127.0.0.1:9/callback"),
  authorize: (request) =>
    Effect.tryPromise({
      try: async () => {
        opened.push(request)
        const response = await fetch(request.url, { redirect: "manual" })
        const location = response.headers.get("location")
        if (location === null) throw new Error(`the authorization page answered ${response.status}`)
        return change(new URL(location).searchParams)
      },
      catch: (error) => new McpAuth.McpAuthError({ reason: "Redirect", message: String(error) })
    })
})

describe("McpAuth with McpClient.http", () => {
  it.scopedLive("signs in as MCP asks: discovery, registration, PKCE, the resource, the code redeemed; stored 0600", () =>
    Effect.gen(function*() {
      const as = yield* authorizationServer()
      const mcp = yield* protectedServer(as, notes, { scope: "read" })
      const folder = temporaryFolder()
      const opened: Array<McpAuth.AuthorizationRequest> = []
      const auth = McpAuth.oauth({ redirect: browser(opened), store: McpAuth.fileStore(folder) })
      const client = yield* McpClient.connect(McpClient.http(mcp.url, { auth }))
      expect(modelText(yield* run(yield* client.toolkit, "read_notes"))).toBe("a note")
      expect(as.calls).toEqual(["register", "authorize", "token:authorization_code"])
      expect(opened.map((request) => request.server.href)).toEqual([mcp.url])
      const asked = as.authorizations[0]
      expect(asked.get("code_challenge_method")).toBe("S256")
      expect(asked.get("resource")).toBe(mcp.url)
      expect(asked.get("scope")).toBe("read")
      expect(asked.get("state")).toBe(opened[0].state)
      // one file per server, the owner's only, holding the registration and the tokens
      const files = fs.readdirSync(folder)
      expect(files).toEqual([fileNameOf(mcp.url)])
      expect(fs.statSync(path.join(folder, files[0])).mode & 0o777).toBe(0o600)
      expect(fs.statSync(folder).mode & 0o777).toBe(0o700)
      const stored = JSON.parse(fs.readFileSync(path.join(folder, files[0]), "utf8"))
      expect(stored).toMatchObject({ server: mcp.url, client: { issuer: as.origin }, tokens: { token_type: "Bearer" } })
    }))

  it.scopedLive("a session with the same store signs in without the browser; an expired token is refreshed", () =>
    Effect.gen(function*() {
      const as = yield* authorizationServer()
      const mcp = yield* protectedServer(as, notes, { scope: "read" })
      const store = McpAuth.fileStore(temporaryFolder())
      const opened: Array<McpAuth.AuthorizationRequest> = []
      yield* Effect.scoped(
        McpClient.connect(McpClient.http(mcp.url, { auth: McpAuth.oauth({ redirect: browser(opened), store }) }))
      )
      // another configuration, another process: the same store
      const again = McpAuth.oauth({ redirect: browser(opened), store })
      yield* Effect.scoped(McpClient.connect(McpClient.http(mcp.url, { auth: again })))
      expect(as.calls).toEqual(["register", "authorize", "token:authorization_code"])
      // the access token expires: a refresh, still no browser
      as.expireAll()
      const client = yield* McpClient.connect(McpClient.http(mcp.url, { auth: again }))
      expect(modelText(yield* run(yield* client.toolkit, "read_notes"))).toBe("a note")
      expect(as.calls).toEqual(["register", "authorize", "token:authorization_code", "token:refresh_token"])
      expect(opened.length).toBe(1)
      // and mid-session too
      as.expireAll()
      expect(modelText(yield* run(yield* client.toolkit, "read_notes"))).toBe("a note")
      expect(as.calls.filter((call) => call === "token:refresh_token").length).toBe(2)
      expect(opened.length).toBe(1)
    }))

  it.scopedLive("a call that needs a wider scope asks for it (step-up), and goes through", () =>
    Effect.gen(function*() {
      const as = yield* authorizationServer()
      const mcp = yield* protectedServer(as, notes, { scope: "read", needs: { write_note: "write" } })
      const opened: Array<McpAuth.AuthorizationRequest> = []
      const client = yield* McpClient.connect(
        McpClient.http(mcp.url, { auth: McpAuth.oauth({ redirect: browser(opened) }) })
      )
      expect(modelText(yield* run(yield* client.toolkit, "write_note"))).toBe("written")
      expect(opened.length).toBe(2)
      expect(as.authorizations.map((query) => query.get("scope"))).toEqual(["read", "read write"])
    }))

  it.scopedLive("an authorization that comes back from another issuer is refused (RFC 9207)", () =>
    Effect.gen(function*() {
      const as = yield* authorizationServer()
      const mcp = yield* protectedServer(as, notes)
      as.issOverride = "https://attacker.example"
      const error = yield* Effect.flip(McpClient.connect(
        McpClient.http(mcp.url, { auth: McpAuth.oauth({ redirect: browser([]) }) })
      ))
      expect(error.reason).toBe("Unauthorized")
      expect(error.message).toMatch(/^authorizing with the MCP server at http:\/\/127\.0\.0\.1:\d+\/mcp failed: /)
      expect(error.message).toContain("issuer")
      expect(as.calls).not.toContain("token:authorization_code")
    }))

  it.scopedLive("an authorization that comes back with another state is refused", () =>
    Effect.gen(function*() {
      const as = yield* authorizationServer()
      const mcp = yield* protectedServer(as, notes)
      const forged = (query: URLSearchParams) => {
        const changed = new URLSearchParams(query)
        changed.set("state", "forged")
        return changed
      }
      const error = yield* Effect.flip(McpClient.connect(
        McpClient.http(mcp.url, { auth: McpAuth.oauth({ redirect: browser([], forged) }) })
      ))
      expect(error.reason).toBe("Unauthorized")
      expect(error.message).toContain("a state that is not the one sent")
      expect(as.calls).not.toContain("token:authorization_code")
    }))

  it.scopedLive("a browser step nobody finishes fails within the timeout", () =>
    Effect.gen(function*() {
      const as = yield* authorizationServer()
      const mcp = yield* protectedServer(as, notes)
      const never: McpAuth.Redirect = { url: new URL("http://127.0.0.1:9/callback"), authorize: () => Effect.never }
      const error = yield* Effect.flip(McpClient.connect(
        McpClient.http(mcp.url, { auth: McpAuth.oauth({ redirect: never, timeout: "200 millis" }) })
      ))
      expect(error.reason).toBe("Unauthorized")
      expect(error.message).toMatch(/nobody finished authorizing at http:\/\/127\.0\.0\.1:\d+ within 200ms/)
    }))

  it.scopedLive("a server that asks for authorization fails connect with Unauthorized when the client has no auth", () =>
    Effect.gen(function*() {
      const as = yield* authorizationServer()
      const mcp = yield* protectedServer(as, notes)
      const error = yield* Effect.flip(McpClient.connect(McpClient.http(mcp.url)))
      expect(error.reason).toBe("Unauthorized")
      expect(error.message).toContain("asks for authorization, and this client has no way to sign in")
    }))

  it.scopedLive("the loopback redirect: the user opens the page, the authorization server comes back to it", () =>
    Effect.gen(function*() {
      const as = yield* authorizationServer()
      const mcp = yield* protectedServer(as, notes)
      const shown: Array<string> = []
      const redirect = yield* McpAuth.loopback({
        onUrl: (request) =>
          Effect.sync(() => {
            shown.push(request.url.href)
            // the user's browser: follows the authorization server's redirect to the loopback page
            void fetch(request.url).then((page) => page.text())
          })
      })
      expect(redirect.url.href).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/)
      const client = yield* McpClient.connect(McpClient.http(mcp.url, { auth: McpAuth.oauth({ redirect }) }))
      expect(modelText(yield* run(yield* client.toolkit, "read_notes"))).toBe("a note")
      expect(shown.length).toBe(1)
      expect(shown[0].startsWith(`${as.origin}/authorize?`)).toBe(true)
      // anything else that reaches the page is turned away
      const stray = yield* Effect.promise(() => fetch(`${redirect.url.href}?code=x&state=guess`))
      expect(stray.status).toBe(404)
    }))
})

describe("McpAuth token stores", () => {
  it("a file is named for its server's host and a digest, whatever the server's name", () => {
    for (
      const server of [
        "https://mcp.example.com/mcp",
        "http://127.0.0.1:8080/../../etc/passwd",
        "https://EXAMPLE.com:443/a/b?c=d",
        "not a url/../x",
        "https://xn--caf-dma.example/"
      ]
    ) {
      const name = fileNameOf(server)
      expect(name).toMatch(/^[a-z0-9_][a-z0-9._-]{0,63}-[0-9a-f]{16}\.json$/)
      expect(path.basename(name)).toBe(name)
    }
    expect(fileNameOf("https://a.example/x")).not.toBe(fileNameOf("https://a.example/y"))
  })

  it.effect("saves and loads per server; a file that is not ours, or another server's, is ignored with a warning", () =>
    Effect.gen(function*() {
      const folder = temporaryFolder()
      const store = McpAuth.fileStore(folder)
      const credentials: McpAuth.Credentials = {
        client: { client_id: "abc", issuer: "https://auth.example" },
        tokens: { access_token: "t", token_type: "Bearer", refresh_token: "r", extra: 1 }
      }
      yield* store.save("https://a.example/mcp", credentials)
      expect(yield* store.load("https://a.example/mcp")).toEqual(credentials)
      expect(yield* store.load("https://b.example/mcp")).toBeUndefined()
      const logs: Array<string> = []
      const logger = Logger.make(({ message }) => void logs.push(String(message)))
      // a corrupt file, and a file renamed into another server's place
      fs.writeFileSync(path.join(folder, fileNameOf("https://c.example/mcp")), "{not json")
      fs.copyFileSync(
        path.join(folder, fileNameOf("https://a.example/mcp")),
        path.join(folder, fileNameOf("https://d.example/mcp"))
      )
      const loaded = yield* Effect.all([store.load("https://c.example/mcp"), store.load("https://d.example/mcp")]).pipe(
        Effect.provide(Logger.replace(Logger.defaultLogger, logger))
      )
      expect(loaded).toEqual([undefined, undefined])
      expect(logs.join("\n")).toContain("they are not what this library writes")
      expect(logs.join("\n")).toContain("they are another server's")
    }))

  it.effect("the memory store keeps what it is given, per server", () =>
    Effect.gen(function*() {
      const store = McpAuth.memoryStore()
      yield* store.save("https://a.example/mcp", { tokens: { access_token: "t", token_type: "Bearer" } })
      expect(yield* store.load("https://a.example/mcp")).toEqual({
        tokens: { access_token: "t", token_type: "Bearer" }
      })
      expect(yield* store.load("https://b.example/mcp")).toBeUndefined()
    }))

  it("a client ID metadata document's URL must be https with a path", () => {
    const redirect = browser([])
    expect(() => McpAuth.oauth({ redirect, clientMetadataUrl: "http://example.com/client.json" })).toThrow(
      /is not an https URL with a path/
    )
    expect(() => McpAuth.oauth({ redirect, clientMetadataUrl: "https://example.com/" })).toThrow()
    expect(McpAuth.oauth({ redirect, clientMetadataUrl: "https://example.com/client.json" }).options.clientMetadataUrl)
      .toBe("https://example.com/client.json")
  })
})
