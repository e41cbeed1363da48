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
  /**
   * Extra measurements of one run (e.g. heap per in-flight step), by the keys the suite declares in
   * {@link Suite.metrics}; called after `verify`, outside the timing. The report shows the median
   * across runs, then across processes.
   */
  measure?(output: Output): Readonly<Record<string, number>> | Promise<Readonly<Record<string, number>>>;
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
   * Floors on the warm-up and timed runs per process, for variants whose runs are short but whose
   * first runs are still the JIT warming up (the orchestrator uses the larger of the floor and its
   * own setting, within {@link VariantEntry.maxRuns}).
   */
  readonly minRuns?: { readonly warmup: number; readonly timed: number };
  /**
   * The variant's module is in `bench/peers` (a peer library that is not in the root install): the
   * orchestrator installs and compiles the peers before a suite with such a variant runs.
   */
  readonly fromPeers?: boolean;
  /**
   * The variant this one is compared with; default the suite's {@link Suite.baseline}. A variant
   * naming itself is a baseline of its own (e.g. the floor of one cell of a grid).
   */
  readonly baseline?: string;
  /**
   * Where the variant goes on a cost-vs-work chart ({@link Suite.chart} `cost-vs-work`): its line
   * (`series`), the amount of work of one step (`work`, the x axis), and how many steps a timed run
   * does (the chart plots the time of one: the run's time divided by them; default 1).
   */
  readonly plot?: { readonly series: string; readonly work: number; readonly stepsPerRun?: number };
}

/**
 * A goal of a suite. A ratio target: `variant` takes at most `maxRatio` × the wall time of `baseline`
 * (the median of the per-round paired ratios). A metric target: the median of `metric` (one of the
 * suite's {@link Suite.metrics}) is at most `max`.
 */
export type Target =
  | { readonly variant: string; readonly baseline: string; readonly maxRatio: number }
  | { readonly variant: string; readonly metric: string; readonly max: number };

/** An extra measurement a suite's variants report through {@link PreparedVariant.measure}. */
export interface MetricSpec {
  readonly key: string;
  /** Column title in the report, with its unit. */
  readonly label: string;
  readonly decimals: number;
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
  /** Extra measurements the variants report (columns of the report). */
  readonly metrics?: readonly MetricSpec[];
  /**
   * Whether the variants run in the measuring process (default `true`). `false` for suites that time
   * other processes (cold start): the report then leaves out the CPU, GC and RSS columns, which would
   * be the measuring process's.
   */
  readonly inProcess?: boolean;
  /** The chart of the suite: ratio bars (default), or cost against work (variants with a `plot`). */
  readonly chart?: 'ratio-bars' | 'cost-vs-work';
  /** What the work axis of a `cost-vs-work` chart counts, e.g. `text deltas per step`. */
  readonly workUnit?: string;
  /**
   * Bounds on the rounds the orchestrator runs until the medians are stable, for suites whose rounds
   * take long (default: its own bounds, see `run.ts`). `--rounds=N` overrides both.
   */
  readonly rounds?: { readonly min: number; readonly max: number };
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
  /** Time spent in garbage collection during each timed run, in ms (`v8.GCProfiler`). */
  readonly gcMs: readonly number[];
  /** Median of `gcMs`. */
  readonly medianGcMs: number;
  /** The median of each extra measurement ({@link PreparedVariant.measure}) over the timed runs. */
  readonly metrics: Readonly<Record<string, number>>;
}
