/** The builders' check of their options: core's (`checkKnownOptions`), one copy for every package. @internal @module */
export { checkKnownOptions, type KnownOptions } from '@kosong/core/kernel';
