/**
 * The client the MCP conformance suite (`@modelcontextprotocol/conformance`, client scenarios) runs: `npm run
 * conformance` points the suite's `--command` at it, and the suite runs
 *
 *   node --import tsx examples/conformance/client.ts <server url>
 *
 * with the scenario's name in `MCP_CONFORMANCE_SCENARIO` (and the revision in `MCP_CONFORMANCE_PROTOCOL_VERSION`). A
 * scenario it plays (./played.ts names them, ./scenarios.ts plays them on `McpClient`) runs against the URL; any
 * other is refused at once with exit code 1, before the library is even loaded, since the suite starts this
 * program once per scenario. `client.ts --list` prints the scenarios it plays, as JSON.
 */
import { PLAYED } from "./played.js"

const url = process.argv[2]
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? ""

if (url === "--list") {
  process.stdout.write(`${JSON.stringify(PLAYED)}\n`)
} else if (url === undefined) {
  process.stderr.write("usage: MCP_CONFORMANCE_SCENARIO=<scenario> client.ts <server url>\n")
  process.exitCode = 2
} else if (!(PLAYED as ReadonlyArray<string>).includes(scenario)) {
  process.stderr.write(
    `client.ts: scenario ${JSON.stringify(scenario)} is not implemented (it plays ${PLAYED.join(", ")})\n`
  )
  process.exitCode = 1
} else {
  const { main } = await import("./scenarios.js")
  main(url, scenario)
}
