/** The instrumentation scope (tracer and meter name) of this plugin: its package name. */
export const INSTRUMENTATION_SCOPE_NAME = '@kosong/plugin-otel';

/** The instrumentation scope version: the package version (a test keeps it in step with package.json). */
export const INSTRUMENTATION_SCOPE_VERSION = '0.1.0';
