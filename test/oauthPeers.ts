/**
 * A small OAuth 2.1 authorization server and an MCP server that is its protected resource, for the client's
 * authorization tests: what MCP's authorization specification asks of both, and checks of what the client sends
 * (PKCE S256, the resource indicator, the redirect URI, the registered client), with hooks to misbehave (a wrong
 * `iss`, short-lived tokens, a scope a tool needs beyond the first).
 */
import type { McpServer } from "@modelcontextprotocol/server"
import { Effect } from "effect"
import type { Scope } from "effect"
import { createHash, randomBytes } from "node:crypto"
import type { Logged, WebServer } from "./mcpPeers.js"
import { forward, modernServer, webServer } from "./mcpPeers.js"

interface Grant {
  readonly clientId: string
  readonly scope: string
  readonly challenge: string
  readonly redirectUri: string
  readonly resource: string | null
}

interface Issued {
  readonly scope: string
  readonly expires: number
  readonly resource: string | null
}

export interface AuthorizationServer extends WebServer {
  /** What each endpoint was asked, in order: `register`, `authorize`, `token:authorization_code`, ... */
  readonly calls: Array<string>
  /** The `authorize` requests' query parameters. */
  readonly authorizations: Array<URLSearchParams>
  /** Lets the next redirects carry this `iss` instead of the issuer's. */
  issOverride: string | undefined
  /** How long access tokens live, in milliseconds. */
  tokenMillis: number
  readonly isValid: (token: string, scope?: string) => "valid" | "invalid" | "insufficient"
  /** Ends every access token issued so far (refresh tokens stay good), as if they had all expired. */
  readonly expireAll: () => void
}

const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } })

const s256 = (verifier: string) => createHash("sha256").update(verifier).digest("base64url")

/** An authorization server on its own origin (RFC 8414 metadata, dynamic registration, PKCE, refresh, RFC 9207). */
export const authorizationServer = (options?: {
  readonly scopes?: ReadonlyArray<string>
}): Effect.Effect<AuthorizationServer, never, Scope.Scope> => {
  const clients = new Map<string, { readonly redirectUris: ReadonlyArray<string> }>()
  const codes = new Map<string, Grant>()
  const access = new Map<string, Issued>()
  const refresh = new Map<string, Grant>()
  const calls: Array<string> = []
  const authorizations: Array<URLSearchParams> = []
  const state = { issOverride: undefined as string | undefined, tokenMillis: 60_000 }
  let issuer = ""

  const issue = (grant: Grant) => {
    const token = randomBytes(16).toString("hex")
    const refreshToken = randomBytes(16).toString("hex")
    access.set(token, { scope: grant.scope, expires: Date.now() + state.tokenMillis, resource: grant.resource })
    refresh.set(refreshToken, grant)
    return json({
      access_token: token,
      token_type: "Bearer",
      expires_in: Math.ceil(state.tokenMillis / 1000),
      refresh_token: refreshToken,
      scope: grant.scope
    })
  }

  const handle = async (request: Request, logged: Logged): Promise<Response> => {
    const url = new URL(request.url)
    if (url.pathname === "/.well-known/oauth-authorization-server") {
      return json({
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        registration_endpoint: `${issuer}/register`,
        response_types_supported: ["code"],
        grant_types_supported: ["authorization_code", "refresh_token"],
        code_challenge_methods_supported: ["S256"],
        token_endpoint_auth_methods_supported: ["none"],
        scopes_supported: options?.scopes ?? ["read", "write"],
        authorization_response_iss_parameter_supported: true
      })
    }
    if (url.pathname === "/register" && request.method === "POST") {
      calls.push("register")
      const metadata = JSON.parse(logged.body) as { redirect_uris?: ReadonlyArray<string> }
      const clientId = `client-${randomBytes(6).toString("hex")}`
      clients.set(clientId, { redirectUris: metadata.redirect_uris ?? [] })
      return json({ ...metadata, client_id: clientId, token_endpoint_auth_method: "none" }, 201)
    }
    if (url.pathname === "/authorize") {
      calls.push("authorize")
      const query = url.searchParams
      authorizations.push(query)
      const clientId = query.get("client_id") ?? ""
      const redirectUri = query.get("redirect_uri") ?? ""
      const client = clients.get(clientId)
      if (client === undefined || !client.redirectUris.includes(redirectUri)) {
        return new Response("unknown client or redirect", { status: 400 })
      }
      if (query.get("code_challenge_method") !== "S256" || query.get("code_challenge") === null) {
        return new Response("PKCE S256 required", { status: 400 })
      }
      const code = randomBytes(16).toString("hex")
      codes.set(code, {
        clientId,
        scope: query.get("scope") ?? "",
        challenge: query.get("code_challenge")!,
        redirectUri,
        resource: query.get("resource")
      })
      const back = new URL(redirectUri)
      back.searchParams.set("code", code)
      const sentState = query.get("state")
      if (sentState !== null) back.searchParams.set("state", sentState)
      back.searchParams.set("iss", state.issOverride ?? issuer)
      return new Response(null, { status: 302, headers: { location: back.href } })
    }
    if (url.pathname === "/token" && request.method === "POST") {
      const form = new URLSearchParams(logged.body)
      const grantType = form.get("grant_type") ?? ""
      calls.push(`token:${grantType}`)
      if (grantType === "authorization_code") {
        const grant = codes.get(form.get("code") ?? "")
        codes.delete(form.get("code") ?? "")
        if (
          grant === undefined || grant.clientId !== form.get("client_id") ||
          grant.redirectUri !== form.get("redirect_uri") || s256(form.get("code_verifier") ?? "") !== grant.challenge ||
          grant.resource !== form.get("resource")
        ) {
          return json({ error: "invalid_grant", error_description: "the code does not match" }, 400)
        }
        return issue(grant)
      }
      if (grantType === "refresh_token") {
        const grant = refresh.get(form.get("refresh_token") ?? "")
        if (grant === undefined) return json({ error: "invalid_grant" }, 400)
        refresh.delete(form.get("refresh_token") ?? "")
        return issue(grant)
      }
      return json({ error: "unsupported_grant_type" }, 400)
    }
    return new Response("not found", { status: 404 })
  }

  return Effect.map(webServer(handle, ""), (web) => {
    issuer = web.origin
    const server: AuthorizationServer = {
      ...web,
      calls,
      authorizations,
      get issOverride() {
        return state.issOverride
      },
      set issOverride(value) {
        state.issOverride = value
      },
      get tokenMillis() {
        return state.tokenMillis
      },
      set tokenMillis(value) {
        state.tokenMillis = value
      },
      expireAll: () => access.clear(),
      isValid: (token, scope) => {
        const issued = access.get(token)
        if (issued === undefined || issued.expires < Date.now()) return "invalid"
        if (scope !== undefined && !issued.scope.split(" ").includes(scope)) return "insufficient"
        return "valid"
      }
    }
    return server
  })
}

/**
 * An MCP server (2026-07-28 and 2025, stateless, from `make`) that is `as`'s protected resource: its metadata at
 * RFC 9728's well-known address, `401` with a challenge for a request without a valid token, and `403
 * insufficient_scope` for a call of a tool in `needs` without that scope.
 */
export const protectedServer = (
  as: AuthorizationServer,
  make: () => McpServer,
  options?: { readonly scope?: string; readonly needs?: Readonly<Record<string, string>> }
): Effect.Effect<WebServer, never, Scope.Scope> =>
  Effect.gen(function*() {
    const mcp = yield* modernServer(make)
    let origin = ""
    const metadataUrl = () => `${origin}/.well-known/oauth-protected-resource/mcp`
    const challenge = (extra: string) =>
      `Bearer resource_metadata="${metadataUrl()}"${
        options?.scope === undefined ? "" : `, scope="${options.scope}"`
      }${extra}`
    const web = yield* webServer(async (request, logged) => {
      const url = new URL(request.url)
      if (url.pathname === "/.well-known/oauth-protected-resource/mcp") {
        return json({
          resource: `${origin}/mcp`,
          authorization_servers: [as.origin],
          ...(options?.scope === undefined ? {} : { scopes_supported: options.scope.split(" ") })
        })
      }
      const token = /^Bearer (.+)$/.exec(request.headers.get("authorization") ?? "")?.[1]
      if (token === undefined || as.isValid(token) !== "valid") {
        return new Response("unauthorized", { status: 401, headers: { "www-authenticate": challenge("") } })
      }
      const message = JSON.parse(logged.body || "{}") as { method?: string; params?: { name?: string } }
      const needed = message.method === "tools/call" ? options?.needs?.[message.params?.name ?? ""] : undefined
      if (needed !== undefined && as.isValid(token, needed) === "insufficient") {
        return new Response("forbidden", {
          status: 403,
          headers: {
            "www-authenticate": `Bearer error="insufficient_scope", scope="${
              options?.scope ?? ""
            } ${needed}", resource_metadata="${metadataUrl()}"`
          }
        })
      }
      return forward(mcp.url, request, logged.body)
    })
    origin = web.origin
    return web
  })
