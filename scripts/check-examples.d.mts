// The types of scripts/check-examples.mjs, for the test that checks the checker (test/docs.examples.test.ts).

export interface Example {
  readonly file: string
  /** The page line of the block's first line of code (1-based). */
  readonly line: number
  readonly name: string | undefined
  readonly code: ReadonlyArray<string>
  /** The indexes of the earlier blocks it continues. */
  readonly continues: ReadonlyArray<number>
  /** Why an example it says it continues cannot be found. */
  readonly missing?: string
}

/** The ```ts blocks of a page. */
export declare const examplesOf: (file: string, text: string) => ReadonlyArray<Example>

/** Type-checks the examples of the pages; gives the problems as `page:line: message`, in page order. */
export declare const checkPages: (pages: ReadonlyArray<string>, root?: string) => ReadonlyArray<string>

/** README.md and every docs/*.md page. */
export declare const pages: (root?: string) => ReadonlyArray<string>
