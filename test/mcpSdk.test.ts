/**
 * The check of a `tools/call` result the client runs in a session of the 2025 revisions (`legacyCallToolResult`),
 * against the SDK's own: every result a server might send is answered once through `Client.callTool` and once
 * through `Client.request` with our check, over the same connection, and the two must agree, in the value given or
 * in the words of the refusal.
 */
import { describe, expect, it } from "@effect/vitest"
import { Client, InMemoryTransport } from "@modelcontextprotocol/client"
import type { JSONRPCMessage } from "@modelcontextprotocol/client"
import { legacyCallToolResult, malformedResult } from "../src/internal/mcpSdk.js"

/** What a server may answer a call with, well-formed or not, keyed by the tool's name. */
const RESULTS: Record<string, unknown> = {
  text: { content: [{ type: "text", text: "hi" }] },
  texts: { content: [{ type: "text", text: "a" }, { type: "text", text: "b" }], isError: true },
  textWithMore: { content: [{ type: "text", text: "hi", extra: 1 }], extraTop: 2 },
  annotated: { content: [{ type: "text", text: "hi", annotations: { audience: ["user"], priority: 0.5 } }] },
  textNotString: { content: [{ type: "text", text: 5 }] },
  nullPart: { content: [null] },
  unknownPart: { content: [{ type: "video", url: "x" }] },
  isErrorNotBoolean: { content: [], isError: "yes" },
  image: { content: [{ type: "image", data: "AAEC", mimeType: "image/png" }] },
  imageNotBase64: { content: [{ type: "image", data: "!!", mimeType: "image/png" }] },
  link: { content: [{ type: "resource_link", uri: "file:///a.txt", name: "a.txt" }] },
  resource: { content: [{ type: "resource", resource: { uri: "file:///a.txt", text: "a" } }] },
  noContent: {},
  noContentWithTask: { task: { taskId: "t1", status: "working" } },
  noContentWithRequestState: { requestState: "s" },
  contentWithTask: { content: [], task: { taskId: "t1" } },
  contentNotArray: { content: "hi" },
  structured: { content: [], structuredContent: { a: 1 } },
  structuredArray: { content: [], structuredContent: [1] },
  structuredString: { content: [{ type: "text", text: "x" }], structuredContent: "x" },
  meta: { content: [{ type: "text", text: "a" }], _meta: { "example.com/x": 1 } }
}

/** A server of the 2025 revisions in memory: it answers `initialize`, and each call with its result above. */
const connect = async (): Promise<Client> => {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  serverSide.onmessage = (message: JSONRPCMessage) => {
    if (!("method" in message) || !("id" in message)) return
    const result = message.method === "initialize"
      ? { protocolVersion: "2025-11-25", capabilities: { tools: {} }, serverInfo: { name: "raw", version: "1" } }
      : RESULTS[(message.params as { name: string }).name]
    void serverSide.send({ jsonrpc: "2.0", id: message.id, result } as JSONRPCMessage)
  }
  await serverSide.start()
  const client = new Client({ name: "test", version: "1" }, { versionNegotiation: { mode: "legacy" } })
  await client.connect(clientSide)
  return client
}

const settle = (promise: Promise<unknown>): Promise<{ value: unknown } | { error: string }> =>
  promise.then((value) => ({ value }), (error: unknown) => ({ error: (error as Error).message }))

describe("legacyCallToolResult", () => {
  it("agrees with the SDK's callTool on every result, in the value or in the words of the refusal", async () => {
    const client = await connect()
    try {
      const ours: Array<unknown> = []
      const theirs: Array<unknown> = []
      for (const name of Object.keys(RESULTS)) {
        theirs.push({ name, ...await settle(client.callTool({ name, arguments: {} })) })
        ours.push({
          name,
          ...await settle(
            client.request({ method: "tools/call", params: { name, arguments: {} } }, legacyCallToolResult)
          )
        })
      }
      expect(ours).toEqual(theirs)
    } finally {
      await client.close()
    }
  })

  it("takes a result of bare text parts as it came, and says what is wrong with one that breaks the schema", () => {
    const value = RESULTS.text
    const taken = legacyCallToolResult["~standard"].validate(value)
    expect(taken).toEqual({ value })
    expect((taken as { value: unknown }).value).toBe(value)
    const refused = legacyCallToolResult["~standard"].validate(RESULTS.textNotString) as {
      issues: ReadonlyArray<{ message: string }>
    }
    expect(refused.issues).toHaveLength(1)
    expect(JSON.parse(refused.issues[0].message)[0].path).toEqual(["content", 0])
  })

  it("a refusal reads as one line naming what is wrong, as the SDK's own did", async () => {
    const client = await connect()
    try {
      const failed = await client.request(
        { method: "tools/call", params: { name: "textNotString", arguments: {} } },
        legacyCallToolResult
      ).then(() => undefined, (error: unknown) => error)
      expect(malformedResult(failed)).toBe("content[0].text: expected string, received number")
      const array = await client.request(
        { method: "tools/call", params: { name: "structuredArray", arguments: {} } },
        legacyCallToolResult
      ).then(() => undefined, (error: unknown) => error)
      expect(malformedResult(array)).toMatch(/^structuredContent: /)
    } finally {
      await client.close()
    }
  })
})
