// The types of scripts/bundle.mjs, for the TypeScript that imports it (test/fixtures/compiled.ts, the test setup).

/** The repository's root folder. */
export declare const root: string

/** node_modules/.cache/effect-agent-tools: the lists of inputs and the compiled test fixtures. */
export declare const cacheDir: string

/** Where the list of the files `outfile` was built from is kept. */
export declare const inputsFileOf: (outfile: string) => string

/** Whether `outfile` exists and is newer than every file it was last built from. */
export declare const isFresh: (outfile: string) => boolean

/** Bundles `entry` into `outfile` unless it is fresh (or `force`); gives whether it built. */
export declare const bundle: (
  entry: string,
  outfile: string,
  options?: {
    readonly executable?: boolean | undefined
    readonly force?: boolean | undefined
    /** "esm" (the default) or "cjs" */
    readonly format?: "esm" | "cjs" | undefined
    /** whitespace and syntax minified, names kept */
    readonly minify?: boolean | undefined
  }
) => boolean

/** The agent-tools binary: the CLI's entry and its CommonJS bundle, the launcher's entry and the `bin` it becomes. */
export declare const CLI: {
  readonly entry: string
  readonly outfile: string
  readonly launcher: string
  readonly bin: string
}

/**
 * Bundles the agent-tools binary (dist/cli/agent-tools.cjs and its launcher dist/cli/main.js) unless fresh (or
 * `force`); gives whether it built.
 */
export declare const bundleCli: (options?: { readonly force?: boolean | undefined }) => boolean
