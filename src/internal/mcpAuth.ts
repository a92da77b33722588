/**
 * OAuth for the MCP client: an `OAuthClientProvider` of the SDK's (`@modelcontextprotocol/client`) over our token
 * stores, and the browser step as an Effect. The SDK runs the flows (protected resource and authorization server
 * discovery with their fallbacks, client ID metadata documents, dynamic registration, PKCE, resource indicators,
 * scope selection, step-up on `insufficient_scope`, refresh, RFC 9207 issuer checks); what is ours:
 *
 * - where credentials live ({@link TokenStore}: in memory, or a file per server, 0600);
 * - the browser step. The SDK's provider is told to "redirect the user agent", and a transport whose request
 *   needs it fails with `UnauthorizedError`; {@link OAuthProvider} records each authorization the SDK started
 *   ({@link Pending}: its URL, `state`, PKCE verifier and discovery state), and {@link authorize} runs the host's
 *   {@link McpAuth.Redirect} on the newest one, checks the `state` it comes back with, and hands the callback to the
 *   transport's `finishAuth` (which checks `iss`, then redeems the code). The caller then tries again.
 *
 * `McpAuth.ts` declares the types and takes its values from here; this module imports only types from it.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { pipeArguments } from "effect/Pipeable"
import * as Runtime from "effect/Runtime"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import { createHash, randomBytes } from "node:crypto"
import * as Fs from "node:fs/promises"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as Path from "node:path"
import type * as McpAuth from "../McpAuth.js"
import * as Sdk from "./mcpSdk.js"
import { reasonOf } from "./reason.js"

// ---------------------------------------------------------------------------------------------------------------
// the values McpAuth.ts exports
// ---------------------------------------------------------------------------------------------------------------

export const TypeId: McpAuth.TypeId = Symbol.for("effect-agent-tools/McpAuth") as McpAuth.TypeId

export class McpAuthError extends Schema.TaggedError<McpAuthError>("effect-agent-tools/McpAuthError")(
  "McpAuthError",
  {
    reason: Schema.Literal("Store", "Redirect", "Timeout"),
    message: Schema.String,
    cause: Schema.optional(Schema.Unknown)
  }
) {}

export const DEFAULT_AUTHORIZE_TIMEOUT: Duration.DurationInput = "5 minutes"

/** The name a client registers under when the host gives none. */
export const DEFAULT_CLIENT_NAME = "effect-agent-tools"

// ---------------------------------------------------------------------------------------------------------------
// OAuth values
// ---------------------------------------------------------------------------------------------------------------

const OAuthProto = {
  pipe() {
    // eslint-disable-next-line prefer-rest-params
    return pipeArguments(this, arguments)
  },
  toJSON(this: McpAuth.OAuth) {
    return { _id: "McpAuth.OAuth", redirect: this.options.redirect.url.href }
  }
}

export const oauth = (options: McpAuth.Options): McpAuth.OAuth => {
  if (options.clientMetadataUrl !== undefined) {
    const url = URL.canParse(options.clientMetadataUrl) ? new URL(options.clientMetadataUrl) : undefined
    if (url === undefined || url.protocol !== "https:" || url.pathname === "/") {
      throw new Error(
        `McpAuth.oauth: clientMetadataUrl ${
          JSON.stringify(options.clientMetadataUrl)
        } is not an https URL with a path (a client ID metadata document is served at one)`
      )
    }
  }
  return Object.assign(Object.create(OAuthProto), {
    [TypeId]: TypeId,
    options: { ...options, store: options.store ?? memoryStore() }
  })
}

export const isOAuth = (u: unknown): u is McpAuth.OAuth => typeof u === "object" && u !== null && TypeId in u

/** The key credentials are stored under: the server's URL without query or fragment. */
export const serverKey = (url: URL): string => `${url.origin}${url.pathname}`

// ---------------------------------------------------------------------------------------------------------------
// credentials on the wire and on disk
// ---------------------------------------------------------------------------------------------------------------

/** Anything else the SDK stored with them, kept as it was. */
const Rest = Schema.Record({ key: Schema.String, value: Schema.Unknown })

const ClientRegistration = Schema.Struct(
  {
    client_id: Schema.String,
    client_secret: Schema.optional(Schema.String),
    issuer: Schema.optional(Schema.String),
    redirect_uris: Schema.optional(Schema.Array(Schema.String))
  },
  Rest
)

const Tokens = Schema.Struct(
  {
    access_token: Schema.String,
    token_type: Schema.String,
    refresh_token: Schema.optional(Schema.String),
    expires_in: Schema.optional(Schema.Number),
    scope: Schema.optional(Schema.String),
    issuer: Schema.optional(Schema.String)
  },
  Rest
)

/** A stored file: the server it is for (a check against a file renamed into another's place), and what is known. */
const StoredFile = Schema.Struct({
  server: Schema.String,
  client: Schema.optional(ClientRegistration),
  tokens: Schema.optional(Tokens)
})

const decodeFile = Schema.decodeUnknownEither(Schema.parseJson(StoredFile))

// ---------------------------------------------------------------------------------------------------------------
// token stores
// ---------------------------------------------------------------------------------------------------------------

/** The most servers an in-memory store remembers; the least recently saved goes first. */
export const MAX_MEMORY_SERVERS = 1_000

export const memoryStore = (): McpAuth.TokenStore => {
  const entries = new Map<string, McpAuth.Credentials>()
  return {
    load: (server) => Effect.sync(() => entries.get(server)),
    save: (server, credentials) =>
      Effect.sync(() => {
        entries.delete(server)
        entries.set(server, credentials)
        if (entries.size > MAX_MEMORY_SERVERS) entries.delete(entries.keys().next().value!)
      })
  }
}

/** The largest credentials file read; a larger one is not ours. */
const MAX_FILE_BYTES = 1024 * 1024

/**
 * A file name for a server's credentials that no server name can turn into a path: its host (letters, digits, dots
 * and dashes, at most 64 of them) for people, then a digest of the whole key for uniqueness.
 */
export const fileNameOf = (server: string): string => {
  const host = URL.canParse(server) ? new URL(server).host : ""
  const readable = host.toLowerCase().replace(/[^a-z0-9.-]/g, "_").replace(/^\.+/, "_").slice(0, 64)
  const digest = createHash("sha256").update(server).digest("hex").slice(0, 16)
  return `${readable === "" ? "server" : readable}-${digest}.json`
}

const storeError = (message: string, cause?: unknown) =>
  new McpAuthError({ reason: "Store", message, ...(cause === undefined ? {} : { cause }) })

export const fileStore = (directory: string): McpAuth.TokenStore => {
  const fileOf = (server: string) => Path.join(directory, fileNameOf(server))
  return {
    load: (server) =>
      Effect.tryPromise({
        try: async () => {
          const file = fileOf(server)
          let handle: Fs.FileHandle
          try {
            handle = await Fs.open(file, "r")
          } catch (error) {
            if ((error as NodeJS.ErrnoException).code === "ENOENT") return { _tag: "None" as const }
            throw error
          }
          try {
            const { size } = await handle.stat()
            if (size > MAX_FILE_BYTES) return { _tag: "Unreadable" as const, why: `it is ${size} bytes` }
            return { _tag: "Read" as const, text: await handle.readFile("utf8") }
          } finally {
            await handle.close()
          }
        },
        catch: (error) => storeError(`the credentials of ${server} could not be read: ${reasonOf(error)}`, error)
      }).pipe(
        Effect.flatMap((read) => {
          if (read._tag === "None") return Effect.succeed(undefined)
          const decoded = read._tag === "Read" ? decodeFile(read.text) : undefined
          if (decoded !== undefined && decoded._tag === "Right" && decoded.right.server === server) {
            const { client, tokens } = decoded.right
            return Effect.succeed<McpAuth.Credentials>({
              ...(client === undefined ? {} : { client }),
              ...(tokens === undefined ? {} : { tokens })
            })
          }
          // a file that is not what we write is not trusted, and not fatal: the server asks again
          return Effect.as(
            Effect.logWarning(
              `the stored credentials of ${server} (${fileOf(server)}) are not usable and are ignored: ${
                read._tag === "Unreadable"
                  ? read.why
                  : decoded?._tag === "Right"
                  ? "they are another server's"
                  : "they are not what this library writes"
              }`
            ),
            undefined
          )
        })
      ),
    save: (server, credentials) =>
      Effect.tryPromise({
        try: async () => {
          await Fs.mkdir(directory, { recursive: true, mode: 0o700 })
          const file = fileOf(server)
          const temporary = `${file}.${randomBytes(6).toString("hex")}.tmp`
          const text = JSON.stringify({ server, ...credentials }, null, 2)
          // created 0600 before a byte is written, then renamed into place: never readable by others, never torn
          await Fs.writeFile(temporary, text, { mode: 0o600, flag: "wx" })
          try {
            await Fs.rename(temporary, file)
          } catch (error) {
            await Fs.rm(temporary, { force: true })
            throw error
          }
        },
        catch: (error) => storeError(`the credentials of ${server} could not be saved: ${reasonOf(error)}`, error)
      })
  }
}

// ---------------------------------------------------------------------------------------------------------------
// the provider
// ---------------------------------------------------------------------------------------------------------------

/** An authorization the SDK started: what finishing it needs, kept until it is finished or superseded. */
export interface Pending {
  readonly url: URL
  readonly state: string
  readonly verifier: string | undefined
  readonly discovery: Sdk.OAuthDiscoveryState | undefined
}

/** The most authorizations waiting for the browser step at once; an older one is dropped. */
const MAX_PENDING = 8

/**
 * The SDK's `OAuthClientProvider` for one server, over a {@link McpAuth.TokenStore}: reads are synchronous (the
 * credentials are loaded before the first request), writes go to the store as they happen (a failed write is
 * logged; the session goes on with what it holds).
 *
 * Discovery state is kept only while an authorization waits for its callback (the SDK binds the callback to the
 * authorization server it started with): once tokens are saved it is dropped, so the next challenge discovers the
 * server's authorization server afresh (a server may move to another, SEP-2352).
 */
export class OAuthProvider implements Sdk.OAuthClientProvider {
  private credentials: McpAuth.Credentials
  private lastState: string | undefined
  private lastVerifier: string | undefined
  private discovery: Sdk.OAuthDiscoveryState | undefined
  /** The authorization being finished: its verifier and discovery state are the ones the SDK reads. */
  private finishing: Pending | undefined
  private readonly pending: Array<Pending> = []
  /** Counts the token sets saved: a caller that waited for the browser step can tell another one finished. */
  generation = 0
  /** The client ID metadata document's URL (SEP-991), when the host serves one. */
  readonly clientMetadataUrl?: string

  constructor(
    readonly server: URL,
    readonly options: McpAuth.Options & { readonly store: McpAuth.TokenStore },
    loaded: McpAuth.Credentials | undefined,
    private readonly runtime: Runtime.Runtime<never>
  ) {
    this.credentials = loaded ?? {}
    if (options.clientMetadataUrl !== undefined) this.clientMetadataUrl = options.clientMetadataUrl
  }

  get redirectUrl(): string {
    return this.options.redirect.url.href
  }

  get clientMetadata(): Sdk.OAuthClientMetadata {
    return {
      client_name: this.options.clientName ?? DEFAULT_CLIENT_NAME,
      redirect_uris: [this.redirectUrl],
      ...(this.options.scope === undefined ? {} : { scope: this.options.scope })
    }
  }

  state(): string {
    this.lastState = randomBytes(24).toString("base64url")
    return this.lastState
  }

  clientInformation(): Sdk.StoredOAuthClientInformation | undefined {
    const client = this.options.client
    if (client !== undefined) {
      return {
        client_id: client.id,
        ...(client.secret === undefined ? {} : { client_secret: client.secret }),
        redirect_uris: [this.redirectUrl],
        // the issuer the SDK stamped on a pre-registered client, so it is not stamped again on every request
        ...(this.credentials.client?.client_id === client.id && this.credentials.client.issuer !== undefined
          ? { issuer: this.credentials.client.issuer }
          : {})
      }
    }
    const stored = this.credentials.client
    // a registration made for another redirect (a loopback port that changed) cannot finish here: register again
    if (stored?.redirect_uris !== undefined && !stored.redirect_uris.includes(this.redirectUrl)) return undefined
    return stored as Sdk.StoredOAuthClientInformation | undefined
  }

  saveClientInformation(information: Sdk.StoredOAuthClientInformation): Promise<void> {
    return this.update({ client: information as McpAuth.ClientRegistration })
  }

  tokens(): Sdk.StoredOAuthTokens | undefined {
    return this.credentials.tokens as Sdk.StoredOAuthTokens | undefined
  }

  saveTokens(tokens: Sdk.StoredOAuthTokens): Promise<void> {
    this.generation++
    this.discovery = undefined
    return this.update({ tokens: tokens as McpAuth.Tokens })
  }

  redirectToAuthorization(url: URL): void {
    const state = url.searchParams.get("state") ?? this.lastState ?? ""
    this.pending.push({ url, state, verifier: this.lastVerifier, discovery: this.discovery })
    if (this.pending.length > MAX_PENDING) this.pending.shift()
  }

  saveCodeVerifier(verifier: string): void {
    this.lastVerifier = verifier
  }

  codeVerifier(): string {
    const verifier = this.finishing?.verifier ?? this.lastVerifier
    if (verifier === undefined) throw new Error("no authorization was started: there is no PKCE code verifier")
    return verifier
  }

  saveDiscoveryState(state: Sdk.OAuthDiscoveryState): void {
    this.discovery = state
  }

  discoveryState(): Sdk.OAuthDiscoveryState | undefined {
    return this.finishing !== undefined ? this.finishing.discovery : this.discovery
  }

  invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery"): Promise<void> {
    if (scope === "verifier") this.lastVerifier = undefined
    if (scope === "discovery" || scope === "all") this.discovery = undefined
    if (scope === "verifier" || scope === "discovery") return Promise.resolve()
    const { client, tokens } = this.credentials
    return this.replace({
      ...(scope === "client" || scope === "all" || client === undefined ? {} : { client }),
      ...(scope === "tokens" || scope === "all" || tokens === undefined ? {} : { tokens })
    })
  }

  /** The newest authorization the SDK started and nobody finished, taken off the list. */
  takePending(): Pending | undefined {
    const newest = this.pending.pop()
    this.pending.length = 0
    return newest
  }

  /** Runs `finish` (the transport's `finishAuth`) with `pending`'s verifier and discovery state in force. */
  async finishWith<A>(pending: Pending, finish: () => Promise<A>): Promise<A> {
    this.finishing = pending
    try {
      return await finish()
    } finally {
      this.finishing = undefined
    }
  }

  private update(change: McpAuth.Credentials): Promise<void> {
    return this.replace({ ...this.credentials, ...change })
  }

  private replace(credentials: McpAuth.Credentials): Promise<void> {
    this.credentials = credentials
    const save = Effect.catchAll(
      this.options.store.save(serverKey(this.server), credentials),
      (error) => Effect.logWarning(`${error.message}; the session goes on with them in memory`)
    )
    return Runtime.runPromise(this.runtime)(save)
  }
}

/** A provider for `server` over `auth`'s store, loaded from it. */
export const providerFor = (
  auth: McpAuth.OAuth,
  server: URL
): Effect.Effect<OAuthProvider, McpAuthError> =>
  Effect.gen(function*() {
    const options = auth.options as McpAuth.Options & { readonly store: McpAuth.TokenStore }
    const loaded = yield* options.store.load(serverKey(server))
    const runtime = yield* Effect.runtime<never>()
    return new OAuthProvider(server, options, loaded, runtime)
  })

// ---------------------------------------------------------------------------------------------------------------
// the browser step
// ---------------------------------------------------------------------------------------------------------------

/** What {@link authorize} hands the SDK's transport: its `finishAuth`. */
export interface Finisher {
  readonly finishAuth: (callback: URLSearchParams) => Promise<void>
}

/**
 * Runs the host's browser step for the newest authorization `provider` holds, within the options' timeout, checks
 * the `state` it came back with, and finishes it on `transport` (the SDK checks `iss` before it redeems the code).
 * Gives `false` when there was nothing to authorize.
 */
export const authorize = (
  provider: OAuthProvider,
  transport: Finisher
): Effect.Effect<boolean, McpAuthError | FlowError> =>
  Effect.suspend(() => {
    const pending = provider.takePending()
    if (pending === undefined) return Effect.succeed(false)
    const timeout = Duration.decode(provider.options.timeout ?? DEFAULT_AUTHORIZE_TIMEOUT)
    return provider.options.redirect.authorize({ url: pending.url, server: provider.server, state: pending.state })
      .pipe(
        Effect.timeoutFail({
          duration: timeout,
          onTimeout: () =>
            new McpAuthError({
              reason: "Timeout",
              message: `nobody finished authorizing at ${pending.url.origin} within ${Duration.format(timeout)}`
            })
        }),
        Effect.flatMap((callback): Effect.Effect<void, McpAuthError | FlowError> => {
          if (callback.get("state") !== pending.state) {
            return Effect.fail(
              new McpAuthError({
                reason: "Redirect",
                message:
                  "the authorization came back with a state that is not the one sent (a forged or stale redirect)"
              })
            )
          }
          return Effect.tryPromise({
            try: () => provider.finishWith(pending, () => transport.finishAuth(callback)),
            catch: (error) => new FlowError({ error })
          })
        }),
        Effect.as(true)
      )
  })

/** A failure of the SDK's OAuth flow (discovery, registration, the token endpoint, an issuer check). */
export class FlowError extends Schema.TaggedError<FlowError>("effect-agent-tools/McpAuth/FlowError")("FlowError", {
  error: Schema.Unknown
}) {}

/** Whether an error from the SDK says the request needs an authorization (a 401 the provider could not answer). */
export const isUnauthorized = (error: unknown): boolean => error instanceof Sdk.UnauthorizedError

/** How the SDK marks an error that came out of its OAuth flow, whatever its class (a global symbol). */
const AUTH_SEAM = Symbol.for("mcp.authSeamEscape")

/**
 * Whether a failed request failed on authorization: the server's `401` or `403` that the flow could not answer,
 * or the flow itself (an issuer or a resource that did not match, a refused registration, the token endpoint).
 */
export const isAuthFailure = (error: unknown): boolean =>
  error instanceof McpAuthError || error instanceof FlowError || error instanceof Sdk.UnauthorizedError ||
  error instanceof Sdk.OAuthClientFlowError || error instanceof Sdk.OAuthError ||
  (error instanceof Sdk.SdkHttpError &&
    (error.code === Sdk.SdkErrorCode.ClientHttpAuthentication ||
      error.code === Sdk.SdkErrorCode.ClientHttpForbidden)) ||
  (typeof error === "object" && error !== null && (error as Record<symbol, unknown>)[AUTH_SEAM] === true)

/**
 * What went wrong with authorization, in one line: the SDK's OAuth errors are specific (an issuer that does not
 * match, a resource the server does not own, a step-up that went past its limit); anything else is its reason.
 */
export const describe = (error: unknown): string => {
  if (error instanceof McpAuthError) return error.message
  if (error instanceof FlowError) return describe(error.error)
  if (error instanceof Sdk.IssuerMismatchError) {
    return `the authorization server's issuer is not the one expected (RFC 9207): ${reasonOf(error)}`
  }
  if (error instanceof Sdk.OAuthError) return `${error.code}: ${reasonOf(error)}`
  return reasonOf(error)
}

// ---------------------------------------------------------------------------------------------------------------
// a loopback redirect
// ---------------------------------------------------------------------------------------------------------------

/** The most browser steps one loopback redirect waits for at once. */
const MAX_WAITING = 16

const page = (title: string, text: string): string =>
  `<!doctype html><meta charset="utf-8"><title>${title}</title><p>${text}</p>`

export const loopback = (options?: {
  readonly host?: string | undefined
  readonly port?: number | undefined
  readonly path?: string | undefined
  readonly onUrl?: ((request: McpAuth.AuthorizationRequest) => Effect.Effect<void>) | undefined
}): Effect.Effect<McpAuth.Redirect, McpAuthError, Scope.Scope> =>
  Effect.gen(function*() {
    const host = options?.host ?? "127.0.0.1"
    const path = options?.path ?? "/callback"
    const waiting = new Map<string, (callback: URLSearchParams) => void>()
    const server = yield* Effect.acquireRelease(
      Effect.async<Http.Server, McpAuthError>((resume) => {
        const server = Http.createServer((request, response) => {
          const url = new URL(request.url ?? "/", "http://loopback")
          const state = url.searchParams.get("state")
          const waiter = state === null ? undefined : waiting.get(state)
          if (request.method !== "GET" || url.pathname !== path || waiter === undefined || state === null) {
            response.writeHead(404, { "content-type": "text/html; charset=utf-8" })
            return void response.end(page("Not found", "No authorization is waiting for this page."))
          }
          waiting.delete(state)
          const failed = url.searchParams.has("error")
          response.writeHead(200, { "content-type": "text/html; charset=utf-8" })
          response.end(
            failed
              ? page("Not authorized", "The authorization did not complete. You can close this tab.")
              : page("Authorized", "You are signed in. You can close this tab and go back to the terminal.")
          )
          waiter(url.searchParams)
        })
        server.once("error", (error) =>
          resume(Effect.fail(
            new McpAuthError({
              reason: "Redirect",
              message: `the redirect page could not listen on ${host}:${options?.port ?? 0}: ${reasonOf(error)}`,
              cause: error
            })
          )))
        server.listen(options?.port ?? 0, host, () => resume(Effect.succeed(server)))
      }),
      (server) =>
        Effect.async<void>((resume) => {
          server.closeAllConnections()
          server.close(() => resume(Effect.void))
        })
    )
    const port = (server.address() as AddressInfo).port
    const url = new URL(`http://${host.includes(":") ? `[${host}]` : host}:${port}${path}`)
    const onUrl = options?.onUrl ??
      ((request: McpAuth.AuthorizationRequest) =>
        Effect.sync(() =>
          void process.stderr.write(
            `The MCP server at ${request.server.origin} asks you to sign in. Open this page to authorize:\n${request.url.href}\n`
          )
        ))
    const redirect: McpAuth.Redirect = {
      url,
      authorize: (request) =>
        Effect.zipRight(
          onUrl(request),
          Effect.async<URLSearchParams, McpAuthError>((resume) => {
            if (waiting.size >= MAX_WAITING) {
              return void resume(Effect.fail(
                new McpAuthError({
                  reason: "Redirect",
                  message: `${MAX_WAITING} authorizations are already waiting for their redirect`
                })
              ))
            }
            waiting.set(request.state, (callback) => resume(Effect.succeed(callback)))
            return Effect.sync(() => void waiting.delete(request.state))
          })
        )
    }
    return redirect
  })
