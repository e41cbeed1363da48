/**
 * The contracts between suites, variants, the child process that measures one variant and the
 * orchestrator that runs them all.
 *
 * @module
 */

/**
 * One variant, ready to run: `run` is what is timed; `verify` checks what `run` produced and is
 * called outside the timing, after every run (warm-up included). `verify` must throw on a wrong output.
 */
export interface PreparedVariant<Output = unknown> {
  run(): Promise<Output>;
  verify(output: Output): void;
}

/** What a variant module exports: builds its inputs (untimed) and returns the timed run. */
export interface VariantModule {
  prepare(): PreparedVariant | Promise<PreparedVariant>;
}

/** A variant of a suite. `load` imports the module lazily, so each child loads only what it measures. */
export interface VariantEntry {
  readonly name: string;
  /** One line for the report. */
  readonly description: string;
  readonly load: () => Promise<VariantModule>;
  /**
   * Caps on the warm-up and timed runs per process, for variants whose single run takes seconds
   * (the orchestrator uses the smaller of the cap and its own setting).
   */
  readonly maxRuns?: { readonly warmup: number; readonly timed: number };
  /**
   * The variant's module is in `bench/peers` (a peer library that is not in the root install): the
   * orchestrator installs and compiles the peers before a suite with such a variant runs.
   */
  readonly fromPeers?: boolean;
}

/** A goal of a suite: `variant` takes at most `maxRatio` × the time of `baseline`. */
export interface Target {
  readonly variant: string;
  readonly baseline: string;
  readonly maxRatio: number;
}

/** A set of variants measured on the same workload, one fresh process per measurement. */
export interface Suite {
  readonly name: string;
  readonly title: string;
  /** What every variant does, for the report. */
  readonly workload: string;
  /** The variant every other is compared with (the floor). */
  readonly baseline: string;
  readonly variants: readonly VariantEntry[];
  /** Extra head-to-head ratios to report, `[a, b]` meaning a / b. */
  readonly comparisons?: readonly (readonly [string, string])[];
  readonly targets?: readonly Target[];
}

/** What a child process prints (one JSON line on stdout) after measuring one variant. */
export interface ChildReport {
  readonly suite: string;
  readonly variant: string;
  /** Wall time of each timed run, until `run()` resolved, in ms. */
  readonly runsMs: readonly number[];
  /** Median of `runsMs`. */
  readonly medianMs: number;
  /**
   * CPU time (user + system, all threads) of each timed run, from its start until the process was
   * idle again, in ms: includes work the variant left running after its result resolved.
   */
  readonly cpuMs: readonly number[];
  /** Median of `cpuMs`. */
  readonly medianCpuMs: number;
  /** Peak resident set size of the process, in MB. */
  readonly maxRssMb: number;
}
