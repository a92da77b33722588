/**
 * `fetch`: an HTTP GET of a URL, as text a model can read.
 *
 * - **What is read.** Text (HTML, Markdown, plain text, JSON, XML and the like), decoded by its charset; HTML is
 *   converted to Markdown with `turndown` (scripts, styles and the like left out) unless the model asks for it
 *   `raw`; JSON is pretty-printed. Anything else (an image, a PDF, an archive) is summarized by its type and size,
 *   and its body is not downloaded.
 * - **Bounds.** The body is streamed and read up to a cap (`maxBytes`, default {@link DEFAULT_FETCH_MAX_BYTES},
 *   counted after decompression); past it the connection is closed and the answer says so. HTML larger than
 *   {@link MAX_HTML_BYTES} is converted as its first part (the conversion is synchronous: about a second a
 *   megabyte). The whole fetch, redirects included, has a timeout (default {@link DEFAULT_FETCH_TIMEOUT}), and an
 *   interrupted fetch closes its connection at once. The model reads at most `max_length` characters of the
 *   result from `start_index`, and is told how to read on.
 * - **Where it may go.** `http:` and `https:` only; redirects are followed up to a cap, and every address on the
 *   way (the first URL's and each redirect's) is checked against addresses.ts: public addresses only, unless the
 *   host allows private ones or names hosts it allows.
 *
 * Built on `node:http`/`node:https` rather than `fetch`: their `lookup` option is where the resolved addresses are
 * checked and the same addresses connected to, which Node's `fetch` does not offer without undici's own API.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as dns from "node:dns"
import * as http from "node:http"
import * as https from "node:https"
import * as net from "node:net"
import type { Readable } from "node:stream"
import * as zlib from "node:zlib"
import * as Tool from "../Tool.js"
import { refusedBecause } from "./addresses.js"
import { quoted, WorkspaceError } from "./errors.js"

/** How much of a body is read, after decompression, when the host sets no `maxBytes`. */
export const DEFAULT_FETCH_MAX_BYTES = 5 * 1024 * 1024

/** How long a whole fetch (redirects included) may take when the host sets no `timeout`. */
export const DEFAULT_FETCH_TIMEOUT: Duration.Duration = Duration.seconds(30)

/** How many redirects are followed when the host sets no `maxRedirects`. */
export const DEFAULT_FETCH_MAX_REDIRECTS = 5

/**
 * The longest URL fetch takes (what HTTP asks servers to accept, RFC 9110): a longer one, from the model or a
 * redirect, is refused quoting its start, so no message echoes more of a URL than this.
 */
export const MAX_URL_LENGTH = 8192

/** HTML past this many bytes is not converted (the conversion holds the thread about a second a megabyte). */
export const MAX_HTML_BYTES = 2 * 1024 * 1024

/** Characters the model reads from `start_index` when it gives no `max_length`. */
export const DEFAULT_FETCH_LENGTH = 30_000

/** The largest `max_length` a model may ask for. */
export const MAX_FETCH_LENGTH = 200_000

/** How `fetch` behaves, as the host set it (Workspace.ts documents each). */
export interface Settings {
  readonly maxBytes: number
  readonly timeout: Duration.Duration
  readonly maxRedirects: number
  readonly allowPrivateNetwork: boolean
  /** `host` or `host:port`, lower case, as `URL.host` writes them. */
  readonly allowHosts: ReadonlySet<string>
  readonly userAgent: string
}

const failWith = (message: string) => Effect.fail(new WorkspaceError({ message }))

const sizeOf = (bytes: number): string =>
  bytes < 1024
    ? `${bytes} bytes`
    : bytes < 1024 * 1024
    ? `${Math.round(bytes / 1024)} KB`
    : `${(bytes / 1024 / 1024).toFixed(1)} MB`

// ---------------------------------------------------------------------------------------------------------------
// where a request may go
// ---------------------------------------------------------------------------------------------------------------

/** A resolved address the policy refused: the lookup's failure, told apart from the network's own. */
class AddressRefused extends Error {
  constructor(readonly host: string, readonly address: string, readonly why: string) {
    super(`${host} resolves to ${address}, ${why}`)
  }
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | Array<dns.LookupAddress>,
  family?: number
) => void

/** The socket's resolver: every address a name resolves to is checked, and only checked addresses are used. */
const checkedLookup = (
  hostname: string,
  options: dns.LookupOptions,
  callback: LookupCallback
): void => {
  dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error !== null) return callback(error, [])
    for (const { address } of addresses) {
      const why = refusedBecause(address)
      if (why !== undefined) return callback(new AddressRefused(hostname, address, why), [])
    }
    if (addresses.length === 0) return callback(Object.assign(new Error("no address"), { code: "ENOTFOUND" }), [])
    if (options.all === true) return callback(null, addresses)
    callback(null, addresses[0].address, addresses[0].family)
  })
}

/** Whether the policy lets `url` be reached without looking at its addresses (the host allowed it). */
const allowedAsIs = (settings: Settings, url: URL): boolean =>
  settings.allowPrivateNetwork || settings.allowHosts.has(url.host.toLowerCase())

const PRIVATE_HINT = "fetch reaches public addresses only (the host running the tools can allow private ones)"

/** `http(s)://...` as a URL, or why not. */
const parseUrl = (given: string): Parsed => {
  const tooLong = (url: string) =>
    `the URL ${quoted(url)} is ${url.length} characters long, over the ${MAX_URL_LENGTH} fetch takes`
  if (given.length > MAX_URL_LENGTH) return { problem: tooLong(given) }
  let url: URL
  try {
    url = new URL(given)
  } catch {
    return { problem: `${quoted(given)} is not a URL; give a whole one, starting with https:// or http://` }
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return {
      problem: `${quoted(given)} is not an http or https URL (its scheme is ${url.protocol}); fetch reads ` +
        "web pages only"
    }
  }
  // written out (escaped, punycode), a URL may grow
  if (url.href.length > MAX_URL_LENGTH) return { problem: tooLong(url.href) }
  return { url }
}

type Parsed = { readonly url: URL; readonly problem?: undefined } | {
  readonly problem: string
  readonly url?: undefined
}

/** A URL whose host is an address (not a name) is checked before any connection: no lookup happens for it. */
const literalRefusal = (settings: Settings, url: URL): string | undefined => {
  if (allowedAsIs(settings, url)) return undefined
  const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname
  if (net.isIP(host) === 0) return undefined
  const why = refusedBecause(host)
  return why === undefined ? undefined : `${host} is ${why}`
}

// ---------------------------------------------------------------------------------------------------------------
// one request
// ---------------------------------------------------------------------------------------------------------------

const ACCEPT = "text/markdown, text/html;q=0.9, application/xhtml+xml;q=0.9, text/plain;q=0.8, " +
  "application/json;q=0.8, */*;q=0.5"

/** What a request must do while it runs: count the bytes for a timeout's message. */
interface Progress {
  received: number
}

/** Sends a GET and gives its answer's head; the connection is destroyed when the scope closes. */
const open = (
  settings: Settings,
  url: URL
): Effect.Effect<http.IncomingMessage, WorkspaceError, Scope.Scope> =>
  Effect.gen(function*() {
    const request = yield* Effect.acquireRelease(
      Effect.try({
        try: () =>
          (url.protocol === "https:" ? https : http).request(url, {
            method: "GET",
            agent: false,
            headers: { "user-agent": settings.userAgent, accept: ACCEPT, "accept-encoding": "gzip, deflate, br" },
            ...(allowedAsIs(settings, url) ? {} : { lookup: checkedLookup as unknown as typeof dns.lookup })
          }),
        catch: (error) => new WorkspaceError({ message: `cannot fetch ${url.href}: ${(error as Error).message}` })
      }),
      // a request destroyed before its answer came may still report an error: nobody is waiting for it then
      (request) => Effect.sync(() => request.on("error", () => {}).destroy())
    )
    return yield* Effect.async<http.IncomingMessage, WorkspaceError>((resume) => {
      request.once("response", (response) => {
        // an answer whose body is not read (a redirect, an image) is destroyed with its request
        response.on("error", () => {})
        resume(Effect.succeed(response))
      })
      request.once("error", (error) => resume(Effect.fail(connectionError(url, error))))
      request.end()
    })
  })

const connectionError = (url: URL, error: Error): WorkspaceError => {
  if (error instanceof AddressRefused) {
    return new WorkspaceError({
      message: `${url.href} was not fetched: ${error.message}; ${PRIVATE_HINT}`
    })
  }
  const code = (error as NodeJS.ErrnoException).code
  const message = code === "ENOTFOUND" || code === "EAI_AGAIN"
    ? `the name ${url.hostname} does not resolve (${code}); check the URL`
    : code === "ECONNREFUSED"
    ? `nothing is listening at ${url.host} (ECONNREFUSED)`
    : code === "ECONNRESET"
    ? `the connection to ${url.host} was reset (ECONNRESET)`
    : `${error.message}${code === undefined ? "" : ` (${code})`}`
  return new WorkspaceError({ message: `cannot fetch ${url.href}: ${message}` })
}

/** What was read of a body. */
interface Body {
  readonly bytes: Buffer
  /** The cap was reached: the rest was not read. */
  readonly cut: boolean
}

/**
 * Reads a body to its end or to `maxBytes` (counted after decompression), whichever comes first; at the cap the
 * connection is closed. One callback core, wrapped once: an interruption destroys the streams.
 */
const readBody = (
  response: http.IncomingMessage,
  url: URL,
  maxBytes: number,
  progress: Progress
): Effect.Effect<Body, WorkspaceError> =>
  Effect.async<Body, WorkspaceError>((resume) => {
    const encoding = String(response.headers["content-encoding"] ?? "").trim().toLowerCase()
    let stream: Readable = response
    if (encoding === "gzip" || encoding === "x-gzip") stream = response.pipe(zlib.createGunzip())
    else if (encoding === "deflate") stream = response.pipe(zlib.createInflate())
    else if (encoding === "br") stream = response.pipe(zlib.createBrotliDecompress())
    else if (encoding !== "" && encoding !== "identity") {
      return resume(failWith(`${url.href} answered in the ${encoding} encoding, which fetch cannot decode`))
    }
    const chunks: Array<Buffer> = []
    let size = 0
    let done = false
    const stop = () => {
      done = true
      stream.destroy()
      response.destroy()
    }
    const finish = (result: Effect.Effect<Body, WorkspaceError>) => {
      if (done) return
      stop()
      resume(result)
    }
    const failed = (why: string) =>
      finish(failWith(`cannot fetch ${url.href}: ${why} after ${sizeOf(size)} of its answer`))
    stream.on("data", (chunk: Buffer) => {
      if (done) return
      const room = maxBytes - size
      if (chunk.length > room) {
        chunks.push(chunk.subarray(0, room))
        size += room
        progress.received = size
        return finish(Effect.succeed({ bytes: Buffer.concat(chunks), cut: true }))
      }
      chunks.push(chunk)
      size += chunk.length
      progress.received = size
    })
    stream.on("end", () => finish(Effect.succeed({ bytes: Buffer.concat(chunks), cut: false })))
    stream.on("error", (error) =>
      failed(stream === response ? `the connection failed (${error.message})` : `its body cannot be decoded`))
    response.on("error", (error) =>
      failed(`the connection failed (${error.message})`))
    response.on("close", () => {
      if (!response.complete) failed("the connection closed before the end")
    })
    return Effect.sync(() => {
      if (!done) stop()
    })
  })

// ---------------------------------------------------------------------------------------------------------------
// what a body is
// ---------------------------------------------------------------------------------------------------------------

type Kind = "html" | "json" | "text" | "other"

const TEXT_TYPES = new Set([
  "application/javascript",
  "application/ecmascript",
  "application/x-javascript",
  "application/xml",
  "application/x-yaml",
  "application/yaml",
  "application/toml",
  "application/x-sh",
  "application/sql",
  "application/graphql",
  "application/x-ndjson",
  "application/rss+xml",
  "application/atom+xml"
])

/** What a content type says the body is. */
const kindOf = (mediaType: string): Kind | undefined => {
  if (mediaType === "") return undefined
  if (mediaType === "text/html" || mediaType === "application/xhtml+xml") return "html"
  if (mediaType === "application/json" || mediaType.endsWith("+json")) return "json"
  if (mediaType.startsWith("text/") || mediaType.endsWith("+xml") || TEXT_TYPES.has(mediaType)) return "text"
  return "other"
}

/** A body with no content type: binary if it has a NUL byte early on, HTML if it starts like HTML, else text. */
const sniff = (bytes: Uint8Array): Kind => {
  const head = bytes.subarray(0, 8192)
  if (head.includes(0)) return "other"
  const start = Buffer.from(head.subarray(0, 512)).toString("latin1").trimStart().toLowerCase()
  return start.startsWith("<!doctype html") || start.startsWith("<html") ? "html" : "text"
}

const decode = (bytes: Uint8Array, charset: string | undefined): string => {
  try {
    return new TextDecoder(charset ?? "utf-8").decode(bytes)
  } catch {
    return new TextDecoder("utf-8").decode(bytes)
  }
}

let converter: Promise<(html: string) => string> | undefined

/** The Markdown converter, loaded the first time a page is converted (it is large, and most hosts never fetch). */
const markdown: Effect.Effect<(html: string) => string> = Effect.promise(() =>
  converter ??= import("turndown").then(({ default: TurndownService }) => {
    const service = new TurndownService({ headingStyle: "atx", codeBlockStyle: "fenced", bulletListMarker: "-" })
    service.remove(["head", "title", "script", "style", "noscript", "template", "iframe", "object", "embed", "svg"])
    return (html: string) => service.turndown(html)
  })
)

// ---------------------------------------------------------------------------------------------------------------
// the fetch
// ---------------------------------------------------------------------------------------------------------------

const REDIRECTS = new Set([301, 302, 303, 307, 308])

interface Fetched {
  readonly url: URL
  readonly redirects: ReadonlyArray<string>
  readonly status: number
  readonly statusText: string
  readonly mediaType: string
  readonly charset: string | undefined
  readonly length: number | undefined
  /** Undefined when the body was not read (not text). */
  readonly body: Body | undefined
  readonly kind: Kind
}

const mediaTypeOf = (header: string | undefined) => {
  const [type = "", ...params] = (header ?? "").split(";")
  const charset = params.map((p) => /^\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(p)?.[1]).find((c) => c !== undefined)
  return { mediaType: type.trim().toLowerCase(), charset }
}

/** Follows redirects to an answer, checking each hop; reads its body if it is text. */
const get = (settings: Settings, first: URL, progress: Progress) =>
  Effect.gen(function*() {
    let url = first
    const redirects: Array<string> = []
    for (;;) {
      const refused = literalRefusal(settings, url)
      if (refused !== undefined) {
        const via = redirects.length === 0 ? "" : ` (a redirect from ${first.href})`
        return yield* failWith(`${url.href}${via} was not fetched: ${refused}; ${PRIVATE_HINT}`)
      }
      const answer = yield* Effect.scoped(Effect.gen(function*() {
        const response = yield* open(settings, url).pipe(
          Effect.mapError((error) =>
            redirects.length === 0
              ? error
              : new WorkspaceError({ message: `${error.message} (a redirect from ${first.href})` })
          )
        )
        const status = response.statusCode ?? 0
        const location = response.headers.location
        if (REDIRECTS.has(status) && location !== undefined) return { _tag: "Redirect" as const, location }
        const { charset, mediaType } = mediaTypeOf(response.headers["content-type"])
        const declared = Number(response.headers["content-length"])
        const length = Number.isFinite(declared) && declared >= 0 ? declared : undefined
        const stated = kindOf(mediaType)
        const body = stated === "other" ? undefined : yield* readBody(response, url, settings.maxBytes, progress)
        const kind = stated ?? sniff(body!.bytes)
        return {
          _tag: "Answer" as const,
          fetched: {
            url,
            redirects,
            status,
            statusText: response.statusMessage ?? "",
            mediaType: mediaType === "" ? "(no content type)" : mediaType,
            charset,
            length,
            body: kind === "other" ? undefined : body,
            kind
          } satisfies Fetched
        }
      }))
      if (answer._tag === "Answer") return answer.fetched
      const next = yield* Effect.try({
        try: () => new URL(answer.location, url),
        catch: () =>
          new WorkspaceError({ message: `${url.href} redirected to ${quoted(answer.location)}, which is no URL` })
      })
      if (next.protocol !== "http:" && next.protocol !== "https:") {
        return yield* failWith(`${url.href} redirected to ${quoted(next.href)}, which is not an http or https URL`)
      }
      if (next.href.length > MAX_URL_LENGTH) {
        return yield* failWith(
          `${url.href} redirected to ${quoted(next.href)}, a URL of ${next.href.length} characters, over the ` +
            `${MAX_URL_LENGTH} fetch takes`
        )
      }
      redirects.push(url.href)
      if (redirects.length > settings.maxRedirects) {
        return yield* failWith(
          `${first.href} redirected more than ${settings.maxRedirects} times (the last time to ${next.href}); ` +
            "fetch the final address directly if it is the right one"
        )
      }
      url = next
    }
  })

/** The text a model reads of an answer, and what it should know about it. */
const render = (
  fetched: Fetched,
  text: string,
  notes: ReadonlyArray<string>,
  startIndex: number,
  maxLength: number,
  how: string
): string => {
  const size = fetched.body === undefined ? "" : `, ${sizeOf(fetched.body.bytes.length)}`
  const redirected = fetched.redirects.length === 0 ? "" : `; redirected from ${fetched.redirects[0]}`
  const head = `${fetched.url.href} (${fetched.mediaType}${size}${how}${redirected})`
  const window = text.slice(startIndex, startIndex + maxLength)
  const end = startIndex + window.length
  const paging = startIndex >= text.length && text.length > 0
    ? [`start_index ${startIndex} is past the end: the text has ${text.length} characters`]
    : end < text.length
    ? [
      `showing characters ${startIndex}-${end} of ${text.length}; call fetch again with start_index ${end} to read on`
    ]
    : startIndex > 0
    ? [`showing characters ${startIndex}-${end} of ${text.length}`]
    : []
  const all = [...paging, ...notes].map((note) => `(${note})`).join("\n")
  return `${head}\n\n${window === "" ? "(no content)" : window}${all === "" ? "" : `\n\n${all}`}`
}

export const fetchTool = (settings: Settings) =>
  Tool.make("fetch", {
    description: "Fetch a web page (HTTP GET) and read it as text: HTML comes back as Markdown, JSON " +
      "pretty-printed; other content (images, PDFs) is only described. Long pages come in parts: " +
      `${DEFAULT_FETCH_LENGTH} characters from start_index by default.`,
    parameters: {
      url: Schema.String.annotations({ description: "The http:// or https:// URL to fetch" }),
      max_length: Schema.optional(
        Schema.Int.pipe(Schema.between(1, MAX_FETCH_LENGTH)).annotations({
          description: `The most characters to return (default ${DEFAULT_FETCH_LENGTH})`
        })
      ),
      start_index: Schema.optional(
        Schema.NonNegativeInt.annotations({
          description: "Start at this character of the text (to read on after a part; default 0)"
        })
      ),
      raw: Schema.optional(
        Schema.Boolean.annotations({ description: "Give HTML as it is instead of converting it to Markdown" })
      )
    },
    failure: WorkspaceError,
    annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: true },
    permission: { action: "fetch", describe: ({ url }) => `GET ${url}`, path: ({ url }) => url },
    handler: ({ max_length = DEFAULT_FETCH_LENGTH, raw = false, start_index = 0, url: given }) =>
      Effect.gen(function*() {
        const parsed = parseUrl(given)
        if (parsed.url === undefined) return yield* failWith(parsed.problem)
        const progress: Progress = { received: 0 }
        const fetched = yield* get(settings, parsed.url, progress).pipe(
          Effect.timeoutOption(settings.timeout),
          Effect.flatMap(Option.match({
            onNone: () =>
              failWith(
                `${parsed.url.href} did not answer in full within ${Duration.format(settings.timeout)} (${
                  sizeOf(progress.received)
                } received); the connection was closed. The server may be slow, or its answer may never end (a ` +
                  "stream); try again later or another URL"
              ),
            onSome: Effect.succeed
          }))
        )
        if (fetched.body === undefined) {
          const size = fetched.length === undefined ? "size not stated" : sizeOf(fetched.length)
          return `${fetched.url.href} is ${fetched.mediaType} (${size}); fetch reads text only (HTML, Markdown, ` +
            "JSON, XML, plain text), so its content was not downloaded"
        }
        const body = fetched.body
        const notes: Array<string> = []
        if (body.cut) {
          notes.push(`only the first ${sizeOf(settings.maxBytes)} of the answer were read; the rest was not downloaded`)
        }
        let text = decode(body.bytes, fetched.charset)
        let how = ""
        if (fetched.kind === "html" && !raw) {
          if (body.bytes.length > MAX_HTML_BYTES) {
            text = decode(body.bytes.subarray(0, MAX_HTML_BYTES), fetched.charset)
            notes.push(
              `the page is larger than ${sizeOf(MAX_HTML_BYTES)}: only its first ${
                sizeOf(MAX_HTML_BYTES)
              } were converted (raw: true gives all of the HTML)`
            )
          }
          const convert = yield* markdown
          text = convert(text)
          how = ", converted to Markdown"
        } else if (fetched.kind === "json" && !body.cut) {
          try {
            text = JSON.stringify(JSON.parse(text), null, 2)
          } catch {
            notes.push("it is not valid JSON: shown as it is")
          }
        }
        if (fetched.status < 200 || fetched.status >= 300) {
          return yield* failWith(
            `${fetched.url.href} answered ${fetched.status} ${fetched.statusText}`.trimEnd() +
              (text.trim() === "" ? "" : `:\n${text.slice(0, 1000)}`)
          )
        }
        return render(fetched, text, notes, start_index, max_length, how)
      })
  })
