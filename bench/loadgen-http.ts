/**
 * Row 10's load generator, a process of its own: `node loadgen-http.js <url> <calls> <in flight>` sends that many
 * 2026-07-28 `tools/call` requests (the `_meta` envelope, `Mcp-Method`/`Mcp-Name`, one POST each) with that many
 * outstanding, checks every answer, and prints the calls per second as its last line. Each run is one round.
 */
import * as Http from "node:http"
import { ANSWER, TOOL_NAME } from "./constants.js"

const [url = "", callsText = "400", inFlightText = "16"] = process.argv.slice(2)
const calls = Number(callsText)
const inFlight = Number(inFlightText)
const agent = new Http.Agent({ keepAlive: true, maxSockets: inFlight })
const target = new URL(url)

const post = (i: number): Promise<void> =>
  new Promise((resolve, reject) => {
    const body = JSON.stringify({
      jsonrpc: "2.0",
      id: i,
      method: "tools/call",
      params: {
        name: TOOL_NAME,
        arguments: { path: `/srv/data/file-${i}.txt`, max_bytes: 1024 + i },
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {},
          "io.modelcontextprotocol/clientInfo": { name: "loadgen", version: "1.0.0" }
        }
      }
    })
    const request = Http.request(target, {
      method: "POST",
      agent,
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "content-length": Buffer.byteLength(body),
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": TOOL_NAME
      }
    }, (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () => {
        const text = Buffer.concat(chunks).toString()
        if (!text.includes(`"text":"${ANSWER}"`)) {
          return reject(new Error(`row 10: an answer was ${text.slice(0, 300)}`))
        }
        resolve()
      })
    })
    request.on("error", reject)
    request.end(body)
  })

let next = 0
const worker = async () => {
  while (next < calls) await post(next++)
}
const started = performance.now()
await Promise.all(Array.from({ length: inFlight }, worker))
const elapsed = performance.now() - started
agent.destroy()
process.stdout.write(`${calls / (elapsed / 1000)}\n`)
