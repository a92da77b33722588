/**
 * Signing in to remote MCP servers: OAuth 2.1 as MCP's authorization specification asks of a client, for
 * `McpClient.http`.
 *
 * Most hosted MCP servers answer a request without a token with `401` and the address of their protected resource
 * metadata. Given an {@link OAuth} value (`McpClient.http(url, { auth })`), the client then does what the
 * specification asks, with the MCP SDK's own implementation of each step: it discovers the server's authorization
 * server (RFC 9728, then RFC 8414 / OpenID metadata with their fallbacks), identifies itself (a client ID
 * metadata document, a pre-registered client, or dynamic registration where the server still offers it), starts an
 * authorization with PKCE, a resource indicator (RFC 8707) and the scope the server asked for, and redeems the
 * code, checking the issuer (RFC 9207). Later `401`s refresh the token; a `403 insufficient_scope` asks for the
 * wider scope (step-up).
 *
 * What is the host's:
 * - the **browser step** ({@link Redirect}): send the user to a URL and give back the query the authorization
 *   server redirected to. {@link loopback} is one for programs on the user's machine (it prints the URL and
 *   listens on `127.0.0.1`); a web host sends its user to the URL and hands over its own callback's query;
 * - **where credentials live** ({@link TokenStore}): {@link memoryStore} (the default: for the life of the
 *   process) or {@link fileStore} (a file per server, readable by its owner only, what `agent-tools` uses).
 *
 * @since 0.1.0
 */
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type { Pipeable } from "effect/Pipeable"
import type * as Scope from "effect/Scope"
import * as Internal from "./internal/mcpAuth.js"

/**
 * Marks a value as an {@link OAuth}.
 *
 * @example
 * ```ts
 * import { McpAuth } from "effect-agent-tools"
 *
 * const isOAuth = (u: unknown): u is McpAuth.OAuth => typeof u === "object" && u !== null && McpAuth.TypeId in u
 * ```
 *
 * @since 0.1.0
 * @category type ids
 */
export const TypeId: unique symbol = Internal.TypeId

/**
 * The type of {@link TypeId}.
 *
 * @since 0.1.0
 * @category type ids
 */
export type TypeId = typeof TypeId

/**
 * How a client signs in to servers that ask for it: made by {@link oauth}, given to `McpClient.http`. One value may
 * serve several servers: credentials are kept per server.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { McpAuth, McpClient } from "effect-agent-tools"
 *
 * const connect = (auth: McpAuth.OAuth) =>
 *   McpClient.connect(McpClient.http("https://mcp.example.com/mcp", { auth }))
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface OAuth extends Pipeable {
  readonly [TypeId]: TypeId
  readonly options: Options
}

/**
 * What {@link oauth} takes.
 *
 * - `redirect` (required): the browser step and the redirect URL it listens on ({@link Redirect}).
 * - `store`: where credentials live (default: a {@link memoryStore} of this value's own).
 * - `clientName`: the name the client registers under (default `effect-agent-tools`).
 * - `clientMetadataUrl`: an `https` URL where the host serves its client ID metadata document (SEP-991); used as
 *   the client id by authorization servers that support such documents, which is how MCP prefers a client to
 *   identify itself.
 * - `client`: a client registered with the authorization server beforehand (`id`, and `secret` for a confidential
 *   client); without it (and without a metadata document the server accepts) the client registers itself
 *   dynamically where the server offers it.
 * - `scope`: the scope to ask for when the server names none (neither in its challenge nor in its metadata).
 * - `timeout`: how long the browser step may take (default {@link DEFAULT_AUTHORIZE_TIMEOUT}).
 *
 * @example
 * ```ts
 * import { McpAuth } from "effect-agent-tools"
 *
 * const options = (redirect: McpAuth.Redirect): McpAuth.Options => ({
 *   redirect,
 *   clientName: "my-agent",
 *   client: { id: "my-agent-prod" },
 *   timeout: "2 minutes"
 * })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly redirect: Redirect
  readonly store?: TokenStore | undefined
  readonly clientName?: string | undefined
  readonly clientMetadataUrl?: string | undefined
  readonly client?: { readonly id: string; readonly secret?: string | undefined } | undefined
  readonly scope?: string | undefined
  readonly timeout?: Duration.DurationInput | undefined
}

/**
 * The browser step: `url` is the redirect URI the client registers and sends; `authorize` sends the user to the
 * authorization page and gives back the query string the authorization server redirected to (`code`, `state`,
 * `iss`; or `error`). The client checks `state` and `iss` itself. It may fail with an {@link McpAuthError}
 * (the user went away, the page could not be shown).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import type { McpAuth } from "effect-agent-tools"
 *
 * // a web host: it has already sent its user to the page, and its own callback route resolves this
 * const webRedirect = (
 *   callbackUrl: URL,
 *   callbackOf: (state: string) => Effect.Effect<URLSearchParams, McpAuth.McpAuthError>
 * ): McpAuth.Redirect => ({
 *   url: callbackUrl,
 *   authorize: (request) => callbackOf(request.state)
 * })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Redirect {
  readonly url: URL
  readonly authorize: (request: AuthorizationRequest) => Effect.Effect<URLSearchParams, McpAuthError>
}

/**
 * One authorization to carry out: the page to send the user to (`url`), the MCP server that asked for it, and
 * the `state` the callback must come back with.
 *
 * @example
 * ```ts
 * import type { McpAuth } from "effect-agent-tools"
 *
 * const prompt = (request: McpAuth.AuthorizationRequest) =>
 *   `${request.server.host} asks you to sign in: ${request.url.href}`
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface AuthorizationRequest {
  readonly url: URL
  readonly server: URL
  readonly state: string
}

/**
 * Where a client's credentials live, by server (the server's URL without query or fragment). `load` gives what
 * was saved, or `undefined`; `save` replaces it. The client saves when the authorization server registers it and
 * whenever it gets tokens (a refresh included); a failed save is logged and the session goes on.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import type { McpAuth } from "effect-agent-tools"
 *
 * // a store in a key-value service of the host's
 * const kvStore = (kv: {
 *   readonly get: (key: string) => Promise<string | undefined>
 *   readonly set: (key: string, value: string) => Promise<void>
 * }, toError: (cause: unknown) => McpAuth.McpAuthError): McpAuth.TokenStore => ({
 *   load: (server) =>
 *     Effect.tryPromise({
 *       try: async () => {
 *         const text = await kv.get(`mcp-auth:${server}`)
 *         return text === undefined ? undefined : JSON.parse(text) as McpAuth.Credentials
 *       },
 *       catch: toError
 *     }),
 *   save: (server, credentials) =>
 *     Effect.tryPromise({ try: () => kv.set(`mcp-auth:${server}`, JSON.stringify(credentials)), catch: toError })
 * })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface TokenStore {
  readonly load: (server: string) => Effect.Effect<Credentials | undefined, McpAuthError>
  readonly save: (server: string, credentials: Credentials) => Effect.Effect<void, McpAuthError>
}

/**
 * What a client knows for one server: its registration with the server's authorization server, and its tokens.
 * Each carries the `issuer` it is bound to: a server that moves to another authorization server gets a new
 * registration and new tokens, never the old ones.
 *
 * @example
 * ```ts
 * import type { McpAuth } from "effect-agent-tools"
 *
 * const signedIn = (credentials: McpAuth.Credentials | undefined) => credentials?.tokens !== undefined
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Credentials {
  readonly client?: ClientRegistration | undefined
  readonly tokens?: Tokens | undefined
}

/**
 * A client's registration with an authorization server, as the server gave it (extra fields kept).
 *
 * @example
 * ```ts
 * import type { McpAuth } from "effect-agent-tools"
 *
 * const registration: McpAuth.ClientRegistration = { client_id: "abc123", issuer: "https://auth.example.com" }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface ClientRegistration {
  readonly client_id: string
  readonly client_secret?: string | undefined
  readonly issuer?: string | undefined
  readonly redirect_uris?: ReadonlyArray<string> | undefined
  readonly [key: string]: unknown
}

/**
 * Tokens as the authorization server issued them (extra fields kept).
 *
 * @example
 * ```ts
 * import type { McpAuth } from "effect-agent-tools"
 *
 * const canRefresh = (tokens: McpAuth.Tokens) => tokens.refresh_token !== undefined
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Tokens {
  readonly access_token: string
  readonly token_type: string
  readonly refresh_token?: string | undefined
  readonly expires_in?: number | undefined
  readonly scope?: string | undefined
  readonly issuer?: string | undefined
  readonly [key: string]: unknown
}

/**
 * What went wrong on the host's side of signing in:
 * - `Store`: a token store could not read or write (saving fails only with a warning);
 * - `Redirect`: the browser step failed, or came back with the wrong `state`;
 * - `Timeout`: nobody finished the browser step in time.
 *
 * A connect or a call that could not be authorized fails with an `McpClientError` of reason `Unauthorized`, which
 * carries this (or the SDK's OAuth error) as its `cause`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { McpAuth } from "effect-agent-tools"
 *
 * const load = (store: McpAuth.TokenStore) =>
 *   store.load("https://mcp.example.com/mcp").pipe(
 *     Effect.catchTag("McpAuthError", (error) => Effect.as(Effect.logWarning(error.message), undefined))
 *   )
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export const McpAuthError: typeof Internal.McpAuthError = Internal.McpAuthError

/**
 * @since 0.1.0
 * @category errors
 */
export type McpAuthError = Internal.McpAuthError

/**
 * How long the browser step may take by default: five minutes, time to find a password.
 *
 * @example
 * ```ts
 * import { McpAuth } from "effect-agent-tools"
 *
 * const patient = (redirect: McpAuth.Redirect) =>
 *   McpAuth.oauth({ redirect, timeout: McpAuth.DEFAULT_AUTHORIZE_TIMEOUT })
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_AUTHORIZE_TIMEOUT: Duration.DurationInput = Internal.DEFAULT_AUTHORIZE_TIMEOUT

/**
 * Signing in with OAuth, for `McpClient.http(url, { auth })` (see {@link Options}). Throws for a
 * `clientMetadataUrl` that is not an `https` URL with a path (a programmer error).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { McpAuth, McpClient } from "effect-agent-tools"
 *
 * const program = Effect.scoped(Effect.gen(function*() {
 *   const redirect = yield* McpAuth.loopback()
 *   const auth = McpAuth.oauth({ redirect, store: McpAuth.fileStore(".agent-tools/auth") })
 *   const client = yield* McpClient.connect(McpClient.http("https://mcp.example.com/mcp", { auth }))
 *   return client.serverInfo
 * }))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const oauth: (options: Options) => OAuth = Internal.oauth

/**
 * A token store in memory: credentials last as long as the store (the default of {@link oauth} is one per
 * {@link OAuth} value). It remembers at most 1,000 servers, the least recently saved going first.
 *
 * @example
 * ```ts
 * import { McpAuth } from "effect-agent-tools"
 *
 * // one store shared by two configurations: a server signed in through one is signed in for the other
 * const store = McpAuth.memoryStore()
 * ```
 *
 * @since 0.1.0
 * @category token stores
 */
export const memoryStore: () => TokenStore = Internal.memoryStore

/**
 * A token store in a folder: one JSON file per server, created readable and writable by its owner only (`0600`,
 * the folder `0700`), written whole and renamed into place. A file is named by the server's host (letters, digits,
 * dots and dashes) and a digest of its URL, so no server's name can make a path; a file that is not what this
 * store writes (or that names another server) is ignored with a warning, and the server asks the user again.
 *
 * @example
 * ```ts
 * import { McpAuth } from "effect-agent-tools"
 * import * as os from "node:os"
 * import * as path from "node:path"
 *
 * const store = McpAuth.fileStore(path.join(os.homedir(), ".config", "my-agent", "mcp-auth"))
 * ```
 *
 * @since 0.1.0
 * @category token stores
 */
export const fileStore: (directory: string) => TokenStore = Internal.fileStore

/**
 * A {@link Redirect} for a program on the user's machine: listens on `127.0.0.1` (a free port unless `port` says,
 * path `/callback` unless `path` says) for the life of the scope; each browser step shows the user the URL
 * (`onUrl`; by default a line on stderr) and waits for the authorization server's redirect with its `state`,
 * answering the browser with a page that says whether it worked. Anything else that reaches the port gets a
 * `404`. A registration made for another port is not reused: the client registers again.
 *
 * @example
 * ```ts
 * import { Console, Effect } from "effect"
 * import { McpAuth } from "effect-agent-tools"
 *
 * const redirect = McpAuth.loopback({
 *   onUrl: (request) => Console.log(`Sign in to ${request.server.host}: ${request.url.href}`)
 * })
 * ```
 *
 * @since 0.1.0
 * @category redirects
 */
export const loopback: (options?: {
  readonly host?: string | undefined
  readonly port?: number | undefined
  readonly path?: string | undefined
  readonly onUrl?: ((request: AuthorizationRequest) => Effect.Effect<void>) | undefined
}) => Effect.Effect<Redirect, McpAuthError, Scope.Scope> = Internal.loopback
