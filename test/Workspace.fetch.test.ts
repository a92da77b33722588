/**
 * `fetch` against HTTP servers the tests start on the loopback interface: what each kind of answer reads as, the
 * bounds (size, time, redirects), and the address policy. No test connects anywhere but 127.0.0.1: a refused
 * address is refused before a connection is tried, which is what these tests check.
 */
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Ref } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as zlib from "node:zlib"
import { Executor, Permission } from "../src/index.js"
import * as Workspace from "../src/Workspace.js"
import { refusedBecause } from "../src/workspace/addresses.js"
import { call, makeRoot, text } from "./fixtures/workspace.js"

/** What a test server saw of one request. */
interface Seen {
  readonly url: string
  readonly headers: http.IncomingHttpHeaders
  /** Resolves when the client closed the connection or the answer ended, with the bytes written by then. */
  readonly closed: Promise<number>
}

type Handler = (request: http.IncomingMessage, response: http.ServerResponse) => void

/** An HTTP server on 127.0.0.1 for the test's scope; `seen` lists its requests. */
const server = (handler: Handler) =>
  Effect.acquireRelease(
    Effect.async<{ readonly origin: string; readonly host: string; readonly seen: Array<Seen> }>((resume) => {
      const seen: Array<Seen> = []
      const s = http.createServer((request, response) => {
        let written = 0
        const write = response.write.bind(response)
        response.write = ((chunk: Buffer | string, ...rest: Array<never>) => {
          written += typeof chunk === "string" ? Buffer.byteLength(chunk) : chunk.length
          return write(chunk, ...rest)
        }) as typeof response.write
        const closed = new Promise<number>((done) => response.on("close", () => done(written)))
        seen.push({ url: request.url ?? "", headers: request.headers, closed })
        handler(request, response)
      })
      s.listen(0, "127.0.0.1", () => {
        const { port } = s.address() as AddressInfo
        resume(Effect.succeed({ origin: `http://127.0.0.1:${port}`, host: `127.0.0.1:${port}`, seen, s }))
      })
    }),
    (started) =>
      Effect.async<void>((resume) => {
        const s = (started as unknown as { s: http.Server }).s
        s.closeAllConnections()
        s.close(() => resume(Effect.void))
      })
  )

/** Fetches through a fresh workspace toolkit with `fetch` set as given; gives what the model reads. */
const fetchText = (options: Workspace.FetchOptions, args: Record<string, unknown>) =>
  Effect.scoped(Effect.gen(function*() {
    const kit = yield* Workspace.toolkit({ root: makeRoot(), fetch: options })
    const [outcome] = yield* Executor.run(kit, [call("fetch", args)])
    return text(outcome)
  })).pipe(Effect.provide(NodeContext.layer))

const page = "<!doctype html><html><head><title>Docs</title><style>body { color: red }</style>" +
  "<script>alert('x')</script></head><body><h1>Getting started</h1><p>Install it with <code>npm i x</code>, " +
  "then read <a href=\"/api\">the API</a>.</p><ul><li>one</li><li>two</li></ul></body></html>"

describe("fetch", () => {
  it.scoped("an HTML page comes back as Markdown, without its scripts and styles", () =>
    Effect.gen(function*() {
      const { host, origin, seen } = yield* server((_, response) => {
        response.writeHead(200, { "content-type": "text/html; charset=utf-8" })
        response.end(page)
      })
      const answer = yield* fetchText({ allowHosts: [host] }, { url: `${origin}/docs` })
      expect(answer).toBe(
        `${origin}/docs (text/html, ${page.length} bytes, converted to Markdown)\n\n` +
          "# Getting started\n\nInstall it with `npm i x`, then read [the API](/api).\n\n-   one\n-   two"
      )
      expect(seen[0].headers["user-agent"]).toBe("effect-agent-tools-fetch/0.1")
      const raw = yield* fetchText({ allowHosts: [host] }, { url: `${origin}/docs`, raw: true })
      expect(raw).toBe(`${origin}/docs (text/html, ${page.length} bytes)\n\n${page}`)
    }))

  it.scoped("JSON is pretty-printed; gzip is decoded; long text comes in parts the model can read on from", () =>
    Effect.gen(function*() {
      const { host, origin } = yield* server((request, response) => {
        if (request.url === "/json") {
          response.writeHead(200, { "content-type": "application/json" })
          return response.end("{\"name\":\"x\",\"tags\":[1,2]}")
        }
        response.writeHead(200, { "content-type": "text/plain", "content-encoding": "gzip" })
        response.end(zlib.gzipSync("0123456789".repeat(10)))
      })
      expect(yield* fetchText({ allowHosts: [host] }, { url: `${origin}/json` })).toBe(
        `${origin}/json (application/json, 25 bytes)\n\n{\n  "name": "x",\n  "tags": [\n    1,\n    2\n  ]\n}`
      )
      expect(yield* fetchText({ allowHosts: [host] }, { url: `${origin}/text`, max_length: 30 })).toBe(
        `${origin}/text (text/plain, 100 bytes)\n\n012345678901234567890123456789\n\n` +
          "(showing characters 0-30 of 100; call fetch again with start_index 30 to read on)"
      )
      expect(yield* fetchText({ allowHosts: [host] }, { url: `${origin}/text`, start_index: 90 })).toBe(
        `${origin}/text (text/plain, 100 bytes)\n\n0123456789\n\n(showing characters 90-100 of 100)`
      )
    }))

  it.scoped("the cap counts decompressed bytes (a gzip bomb stops at it); a charset other than UTF-8 is decoded", () =>
    Effect.gen(function*() {
      const bomb = zlib.gzipSync(Buffer.alloc(100 * 1024 * 1024, "z"))
      const { host, origin } = yield* server((request, response) => {
        if (request.url === "/latin1") {
          response.writeHead(200, { "content-type": "text/plain; charset=iso-8859-1" })
          return response.end(Buffer.from([0x63, 0x61, 0x66, 0xe9]))
        }
        response.writeHead(200, { "content-type": "text/plain", "content-encoding": "gzip" })
        response.end(bomb)
      })
      const answer = yield* fetchText({ allowHosts: [host], maxBytes: 1024 * 1024 }, {
        url: `${origin}/bomb`,
        max_length: 5
      })
      expect(answer).toBe(
        `${origin}/bomb (text/plain, 1.0 MB)\n\nzzzzz\n\n(showing characters 0-5 of 1048576; call fetch again with ` +
          "start_index 5 to read on)\n(only the first 1.0 MB of the answer were read; the rest was not downloaded)"
      )
      expect(yield* fetchText({ allowHosts: [host] }, { url: `${origin}/latin1` })).toBe(
        `${origin}/latin1 (text/plain, 4 bytes)\n\ncafé`
      )
    }))

  it.scoped("an image or a binary is described by its type and size, and its body is not downloaded", () =>
    Effect.gen(function*() {
      const { host, origin, seen } = yield* server((_, response) => {
        response.writeHead(200, { "content-type": "image/png", "content-length": String(20 * 1024 * 1024) })
        const chunk = Buffer.alloc(64 * 1024)
        const pump = () => {
          while (response.write(chunk)) if (response.destroyed) return
          response.once("drain", pump)
        }
        pump()
      })
      const answer = yield* fetchText({ allowHosts: [host] }, { url: `${origin}/logo.png` })
      expect(answer).toBe(
        `${origin}/logo.png is image/png (20.0 MB); fetch reads text only (HTML, Markdown, JSON, XML, plain text), ` +
          "so its content was not downloaded"
      )
      expect(yield* Effect.promise(() => seen[0].closed)).toBeLessThan(20 * 1024 * 1024)
    }))

  it.scoped("a 50 MB body is read to the default cap of 5 MB, then the connection is closed; memory stays bounded", () =>
    Effect.gen(function*() {
      const total = 50 * 1024 * 1024
      const { host, origin, seen } = yield* server((_, response) => {
        response.writeHead(200, { "content-type": "text/plain" })
        const chunk = Buffer.alloc(64 * 1024, "a")
        let sent = 0
        const pump = () => {
          while (sent < total) {
            sent += chunk.length
            if (!response.write(chunk)) return void response.once("drain", pump)
          }
          response.end()
        }
        pump()
      })
      const before = process.memoryUsage()
      const answer = yield* fetchText({ allowHosts: [host] }, { url: `${origin}/big` })
      const after = process.memoryUsage()
      expect(answer.split("\n")[0]).toBe(`${origin}/big (text/plain, 5.0 MB)`)
      expect(answer).toMatch(
        /\n\n\(showing characters 0-30000 of 5242880; call fetch again with start_index 30000 to read on\)\n\(only the first 5\.0 MB of the answer were read; the rest was not downloaded\)$/
      )
      // the server was stopped well before the end: the client closed the connection at the cap
      expect(yield* Effect.promise(() => seen[0].closed)).toBeLessThan(total / 2)
      expect(after.arrayBuffers - before.arrayBuffers).toBeLessThan(32 * 1024 * 1024)
    }))

  it.scopedLive("a server that never finishes its answer, or never starts it, meets the timeout", () =>
    Effect.gen(function*() {
      const { host, origin, seen } = yield* server((request, response) => {
        if (request.url === "/silent") return
        response.writeHead(200, { "content-type": "text/plain" })
        const drip = setInterval(() => response.write("."), 20)
        response.on("close", () => clearInterval(drip))
      })
      const started = Date.now()
      const dripping = yield* fetchText({ allowHosts: [host], timeout: "300 millis" }, { url: `${origin}/stream` })
      expect(dripping).toMatch(
        new RegExp(
          `^Error: ${origin}/stream did not answer in full within 300ms \\(\\d+ bytes received\\); the connection ` +
            "was closed\\. The server may be slow, or its answer may never end \\(a stream\\); try again later or " +
            "another URL$"
        )
      )
      const silent = yield* fetchText({ allowHosts: [host], timeout: "300 millis" }, { url: `${origin}/silent` })
      expect(silent).toMatch(/did not answer in full within 300ms \(0 bytes received\)/)
      expect(Date.now() - started).toBeLessThan(5_000)
      // the connections were closed by the client, not left open
      yield* Effect.promise(() => Promise.all(seen.map((s) => s.closed)))
    }))

  describe("where it may go", () => {
    it.scoped("by default the test's own loopback server is refused, before any connection", () =>
      Effect.gen(function*() {
        const { origin, seen } = yield* server((_, response) => response.end("hi"))
        expect(yield* fetchText({}, { url: `${origin}/` })).toBe(
          `Error: ${origin}/ was not fetched: 127.0.0.1 is a loopback address; fetch reaches public addresses only ` +
            "(the host running the tools can allow private ones)"
        )
        const port = origin.split(":")[2]
        // a name is resolved, and its addresses checked, by the socket's own lookup
        expect(yield* fetchText({}, { url: `http://localhost:${port}/` })).toMatch(
          /^Error: http:\/\/localhost:\d+\/ was not fetched: localhost resolves to (127\.0\.0\.1|::1), a loopback address; /
        )
        expect(seen).toEqual([])
      }))

    it.scoped("a redirect to a private address is refused; allowPrivateNetwork follows it", () =>
      Effect.gen(function*() {
        const target = yield* server((_, response) => {
          response.writeHead(200, { "content-type": "text/plain" })
          response.end("the inside")
        })
        const { host, origin } = yield* server((request, response) => {
          response.writeHead(302, { location: request.url === "/lan" ? "http://10.0.0.1/admin" : `${target.origin}/x` })
          response.end()
        })
        expect(yield* fetchText({ allowHosts: [host] }, { url: `${origin}/lan` })).toBe(
          `Error: http://10.0.0.1/admin (a redirect from ${origin}/lan) was not fetched: 10.0.0.1 is a private ` +
            "address; fetch reaches public addresses only (the host running the tools can allow private ones)"
        )
        expect(yield* fetchText({ allowHosts: [host] }, { url: `${origin}/loop` })).toBe(
          `Error: ${target.origin}/x (a redirect from ${origin}/loop) was not fetched: 127.0.0.1 is a loopback ` +
            "address; fetch reaches public addresses only (the host running the tools can allow private ones)"
        )
        expect(target.seen).toEqual([])
        expect(yield* fetchText({ allowPrivateNetwork: true }, { url: `${origin}/loop` })).toBe(
          `${target.origin}/x (text/plain, 10 bytes; redirected from ${origin}/loop)\n\nthe inside`
        )
      }))

    it.scoped("redirects are followed up to the cap", () =>
      Effect.gen(function*() {
        const { host, origin } = yield* server((request, response) => {
          const n = Number(request.url?.slice(1))
          response.writeHead(301, { location: `/${n + 1}` })
          response.end()
        })
        expect(yield* fetchText({ allowHosts: [host], maxRedirects: 2 }, { url: `${origin}/0` })).toBe(
          `Error: ${origin}/0 redirected more than 2 times (the last time to ${origin}/3); fetch the final address ` +
            "directly if it is the right one"
        )
      }))

    it.effect("only http and https URLs", () =>
      Effect.gen(function*() {
        expect(yield* fetchText({}, { url: "file:///etc/passwd" })).toBe(
          "Error: \"file:///etc/passwd\" is not an http or https URL (its scheme is file:); fetch reads web pages only"
        )
        expect(yield* fetchText({}, { url: "example.com" })).toBe(
          "Error: \"example.com\" is not a URL; give a whole one, starting with https:// or http://"
        )
      }))

    it("the ranges refused, the IPv6 forms of IPv4 addresses among them", () => {
      const cases: Record<string, string | undefined> = {
        "8.8.8.8": undefined,
        "2606:4700:4700::1111": undefined,
        "127.0.0.1": "a loopback address",
        "10.1.2.3": "a private address",
        "172.31.255.255": "a private address",
        "172.32.0.1": undefined,
        "192.168.1.1": "a private address",
        "169.254.169.254": "a link-local address (cloud metadata services live there)",
        "100.64.0.1": "a carrier-grade NAT address",
        "0.0.0.0": "a 'this network' address",
        "224.0.0.1": "a multicast address",
        "::1": "a loopback address",
        "::": "the unspecified address",
        "fd12::1": "a private address",
        "fe80::1%eth0": "a link-local address",
        "::ffff:127.0.0.1": "a loopback address",
        "::ffff:a00:1": "a private address",
        "64:ff9b::7f00:1": "a loopback address (127.0.0.1, inside an IPv6 address)",
        "2002:a9fe:a9fe::1":
          "a link-local address (cloud metadata services live there) (169.254.169.254, inside an IPv6 address)",
        "example.com": "not an IP address"
      }
      for (const [address, expected] of Object.entries(cases)) expect(refusedBecause(address), address).toBe(expected)
    })
  })

  describe("the tool", () => {
    it.scoped("an error status fails the call with the status and the start of the page", () =>
      Effect.gen(function*() {
        const { host, origin } = yield* server((_, response) => {
          response.writeHead(404, { "content-type": "text/html" })
          response.end("<h1>Not here</h1>")
        })
        expect(yield* fetchText({ allowHosts: [host] }, { url: `${origin}/gone` })).toBe(
          `Error: ${origin}/gone answered 404 Not Found:\n# Not here`
        )
      }))

    it.effect("it asks permission with the action fetch and the URL", () =>
      Effect.gen(function*() {
        const requests = yield* Ref.make<ReadonlyArray<Permission.PermissionRequest>>([])
        const layer = Permission.layer((request) =>
          Effect.as(Ref.update(requests, (all) => [...all, request]), Permission.deny("offline"))
        )
        const answer = yield* Effect.scoped(Effect.gen(function*() {
          const kit = yield* Workspace.toolkit({ root: makeRoot(), fetch: true })
          const [outcome] = yield* Executor.run(kit, [call("fetch", { url: "https://example.com/a" })])
          return text(outcome)
        })).pipe(Effect.provide(Layer.merge(NodeContext.layer, layer)))
        expect(answer).toBe("Error: permission denied: GET https://example.com/a: offline")
        const [request] = yield* Ref.get(requests)
        expect([request.action, request.path]).toEqual(["fetch", "https://example.com/a"])
        expect(request.annotations).toMatchObject({ readOnly: true, openWorld: true })
      }))

    it.effect("it is not in the toolkit unless asked for", () =>
      Effect.gen(function*() {
        const names = yield* Effect.scoped(
          Effect.map(Workspace.toolkit({ root: makeRoot() }), (kit) => kit.tools.map((t) => t.name))
        ).pipe(Effect.provide(NodeContext.layer))
        expect(names).not.toContain("fetch")
      }))
  })
})
