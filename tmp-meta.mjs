import * as esbuild from "esbuild"
const entry = process.argv[2]
const r = esbuild.buildSync({ absWorkingDir: process.cwd(), entryPoints: [entry], outfile: "/tmp/tspeed-meta.mjs", bundle: true, platform: "node", format: "esm", target: "node20", external: ["better-sqlite3"], metafile: true, logLevel: "error", banner: { js: "import { createRequire as __createRequire } from \"node:module\"; const require = __createRequire(import.meta.url);" } })
const out = Object.values(r.metafile.outputs)[0]
const byPkg = {}
for (const [file, { bytesInOutput }] of Object.entries(out.inputs)) {
  const m = file.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/)
  const k = m ? m[1] : file.split("/").slice(0, 2).join("/")
  byPkg[k] = (byPkg[k] ?? 0) + bytesInOutput
}
console.log(Object.entries(byPkg).sort((a, b) => b[1] - a[1]).slice(0, 15).map(([k, v]) => `${(v / 1024).toFixed(0)}K ${k}`).join("\n"))
