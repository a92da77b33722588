/**
 * Every row runs as compiled JavaScript, ours and the baselines alike: `src/` and `bench/` are transpiled file by
 * file (no bundling, so the module graph a process loads is the one `dist/` gives a user) into a cache folder, and
 * each row, server and provider runs there with plain `node`. Running TypeScript through a loader instead would
 * charge our code for the loader's helpers (`__name` on every closure) and the baselines' code, already
 * JavaScript, nothing.
 */
import * as esbuild from "esbuild"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

/** The project's folder: the nearest one up holding its package.json (this file also runs compiled, elsewhere). */
export const root = ((): string => {
  let dir = path.dirname(fileURLToPath(import.meta.url))
  while (!isProject(dir)) {
    const parent = path.dirname(dir)
    if (parent === dir) throw new Error("bench: cannot find the project's package.json")
    dir = parent
  }
  return dir
})()

function isProject(dir: string): boolean {
  try {
    const manifest = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")) as { name?: unknown }
    return manifest.name === "effect-agent-tools"
  } catch {
    return false
  }
}

/** Inside `node_modules`, so the compiled files resolve the project's dependencies as the sources do. */
export const outDir = path.join(root, "node_modules/.cache/effect-agent-tools-bench")

/** Compiles `src/` and `bench/` into {@link outDir}. */
export const compile = async (): Promise<void> => {
  fs.rmSync(outDir, { recursive: true, force: true })
  await esbuild.build({
    entryPoints: ["src/**/*.ts", "bench/**/*.ts"],
    outdir: outDir,
    outbase: root,
    absWorkingDir: root,
    bundle: false,
    platform: "node",
    format: "esm",
    target: "node20",
    logLevel: "warning"
  })
  // a folder under node_modules is outside the project's package scope: say that these files are ES modules
  fs.writeFileSync(path.join(outDir, "package.json"), JSON.stringify({ type: "module" }) + "\n")
}

/** The compiled form of a file of the project, `bench/executor.ts` -> `<outDir>/bench/executor.js`. */
export const compiled = (file: string): string => path.join(outDir, file.replace(/\.ts$/, ".js"))
