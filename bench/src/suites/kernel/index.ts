/**
 * The `kernel` suite: what the kernel adds to a step — resolving provider, toolset and hooks from the
 * container, and delivering every event to ten hook plugins — on the `step` suite's workload; whether
 * class-bound hooks cost more than hook objects (they should not: each scope resolves them once);
 * whether a step costs more among 10,000 tenants than among 10; and the heap a tenant holds (after
 * each timed run of a tenant variant, untimed: 10,000 more tenants of its kind defined, measured after
 * full collections, removed).
 *
 * @module
 */
import type { Suite } from '../../harness.js';
import { stepSuite } from '../step/index.js';

export const kernelSuite: Suite = {
  name: 'kernel',
  title: 'Kernel: runner.step vs bare step()',
  workload: `${stepSuite.workload} (the step suite's workload)`,
  baseline: 'step',
  variants: [
    { name: 'step', description: 'plain `step()` + `toolResults()`', load: async () => ({ prepare: (await import('./variants.js')).prepareStepBaseline }) },
    {
      name: 'runner',
      description: '`kernel.runner().step()`, provider and toolset from a plugin, no hooks',
      load: async () => ({ prepare: (await import('./variants.js')).prepareRunner }),
    },
    {
      name: 'runner+10hooks',
      description: 'the same with 10 hook plugins, each with all six hooks as no-ops',
      load: async () => ({ prepare: (await import('./variants.js')).prepareRunnerWithHooks }),
    },
    {
      name: 'runner+10classhooks',
      description: 'the same hooks as `@injectable` classes, bound with `ctx.bindHooks(NoOpHooks)` and created by the container',
      load: async () => ({ prepare: (await import('./variants.js')).prepareRunnerWithClassHooks }),
    },
    {
      name: 'runner@10tenants',
      description: '`kernel.runner({ tenant }).step()` for one of 10 tenants, each with its own toolset and hooks and resolved once',
      load: async () => ({ prepare: (await import('./variants.js')).prepareRunnerAmong10Tenants }),
    },
    {
      name: 'runner@10ktenants',
      description: 'the same for one of 10,000 tenants',
      load: async () => ({ prepare: (await import('./variants.js')).prepareRunnerAmong10kTenants }),
    },
    {
      name: 'runner@10kboundtenants',
      description: 'the same for one of 10,000 tenants that each have bindings of their own (a `module` binding its API key: a child container each)',
      load: async () => ({ prepare: (await import('./variants.js')).prepareRunnerAmong10kBoundTenants }),
    },
  ],
  metrics: [{ key: 'heapPerTenantKb', label: 'heap per tenant (KB)', decimals: 2 }],
  comparisons: [
    ['runner+10classhooks', 'runner+10hooks'],
    ['runner@10ktenants', 'runner@10tenants'],
    ['runner@10kboundtenants', 'runner@10tenants'],
  ],
  targets: [
    { variant: 'runner', baseline: 'step', maxRatio: 1.1 },
    { variant: 'runner+10hooks', baseline: 'step', maxRatio: 1.3 },
    { variant: 'runner+10classhooks', baseline: 'runner+10hooks', maxRatio: 1.05 },
    { variant: 'runner@10ktenants', baseline: 'runner@10tenants', maxRatio: 1.05 },
    { variant: 'runner@10ktenants', metric: 'heapPerTenantKb', max: 4 },
  ],
};
