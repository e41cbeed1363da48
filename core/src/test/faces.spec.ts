/**
 * The faces of `@kosong/core`, one per audience (issue 22, part 5): the root for an application
 * author, `provider-kit`, `toolset-kit` and `context-kit` for the authors of a provider, a toolset and
 * a context store, `kernel` for plugin authors (the kernel in full, inversify's decorators included),
 * `runtime` for the step runtime alone, `testing` and `json-schema`. Each is loaded by its package
 * name, through `exports` (as a package that depends on core loads it); the root's size is pinned.
 */
import { expect } from 'chai';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

import { importsOf } from './module-imports.js';

const CORE_DIR = fileURLToPath(new URL('../../', import.meta.url));

/** Every subpath of core's `exports`, and the names (values) a module of it must have. */
const FACES: Record<string, readonly string[]> = {
  '.': ['step', 'generate', 'StepResult', 'Agent', 'LinearContext', 'Kernel', 'definePlugin', 'toolOk', 'textPart', 'ChatProviderError'],
  './runtime': ['step', 'generate', 'StepResult', 'DEFAULT_HOOK_TIMEOUT_MS', 'asNamedHooks', 'writeHookErrorToStderr', 'stderrHookErrorSink'],
  './provider-kit': ['BaseChatProvider', 'readEventStream', 'SseJsonDecoder', 'IdleTimer', 'mergePart', 'scrubSecrets', 'resolveGenerationOptions', 'transportFailureKind', 'markError', 'checkKnownOptions'],
  './toolset-kit': ['parseToolArguments', 'toolNotFound', 'toolParseError', 'describeError', 'replayPolicyOf', 'isToolResult', 'markError', 'checkKnownOptions', 'toolOk'],
  './context-kit': ['OpenStepState', 'MemoryCallLedger', 'stepLedgerOf', 'SessionLock', 'callRecordToJSON', 'pendingStepFromJSON', 'CALL_STARTED_ROLE', 'PENDING_STEP_ROLE'],
  './kernel': ['Kernel', 'definePlugin', 'inject', 'injectable', 'postConstruct', 'preDestroy', 'checkKnownOptions', 'markError', 'stderrHookErrorSink'],
  './testing': ['ReplyPacer', 'recordRequest', 'otherOriginServer'],
  './json-schema': ['zodToJsonSchema', 'derefJsonSchema', 'checkParsedJson', 'formatIssues'],
};

/** What an application author does not call: the kits' own names, none of them in the root. */
const NOT_IN_ROOT = [
  'IdleTimer',
  'mergePart',
  'PendingPart',
  'markError',
  'errorMarker',
  'hasErrorMarker',
  'checkKnownOptions',
  'scrubSecrets',
  'redactSecrets',
  'REDACTED_SECRET',
  'resolveGenerationOptions',
  'validateGenerationOptions',
  'transportFailureKind',
  'retryAfterSeconds',
  'sameOriginRedirects',
  'dropRest',
  'feedEveryLineEnd',
  'OutputFormat',
  'ProviderGenerateOptions',
  'BaseChatProvider',
  'parseToolArguments',
  'toolNotFound',
  'describeError',
  'OpenStepState',
  'SessionLock',
  'callRecordToJSON',
  'pendingStepToJSON',
  'DEFAULT_HOOK_TIMEOUT_MS',
  'asNamedHooks',
  'inject',
  'injectable',
];

const MAX_ROOT_NAMES = 150;

interface Manifest {
  readonly name: string;
  readonly exports: Record<string, { readonly types: string; readonly import: string }>;
}

const manifest = JSON.parse(readFileSync(`${CORE_DIR}package.json`, 'utf8')) as Manifest;

/** The names (types and values) the declarations of an entry export, by the TypeScript checker. */
function declaredNames(declarations: string): string[] {
  const program = ts.createProgram([declarations], { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, skipLibCheck: true, noEmit: true });
  const checker = program.getTypeChecker();
  const module = checker.getSymbolAtLocation(program.getSourceFile(declarations)!)!;
  return checker.getExportsOfModule(module).map((symbol) => symbol.name);
}

describe('the faces of @kosong/core', () => {
  let rootNames: string[];

  before(function () {
    this.timeout(30_000);
    rootNames = declaredNames(`${CORE_DIR}${manifest.exports['.']!.types}`);
  });

  it('every subpath of exports is one of the faces, its files built', () => {
    expect(Object.keys(manifest.exports).sort()).to.deep.equal(Object.keys(FACES).sort());
    for (const [subpath, entry] of Object.entries(manifest.exports)) {
      expect(existsSync(`${CORE_DIR}${entry.types}`), `${subpath}: ${entry.types}`).to.equal(true);
      expect(existsSync(`${CORE_DIR}${entry.import}`), `${subpath}: ${entry.import}`).to.equal(true);
    }
  });

  it(`the root lists at most ${MAX_ROOT_NAMES} names, types and values`, () => {
    expect(rootNames.length, rootNames.sort().join(' ')).to.be.at.most(MAX_ROOT_NAMES);
  });

  it('the root has none of the kits\' own names (what a provider, a toolset, a context store or the runtime is written with)', () => {
    const root = new Set(rootNames);
    expect(NOT_IN_ROOT.filter((name) => root.has(name))).to.deep.equal([]);
  });

  for (const [subpath, names] of Object.entries(FACES)) {
    const specifier = subpath === '.' ? manifest.name : `${manifest.name}${subpath.slice(1)}`;
    it(`${specifier} loads by its package name, with ${names.slice(0, 3).join(', ')}, …`, async () => {
      const face = (await import(specifier)) as Record<string, unknown>;
      for (const name of names) expect(face, `${specifier}: ${name}`).to.have.property(name);
    });
  }

  it('the toolset and context kits import no package (inversify, zod, reflect-metadata): Node\'s modules and core\'s only', () => {
    for (const kit of ['toolset-kit', 'context-kit']) {
      const { files, bare } = importsOf(fileURLToPath(new URL(`../${kit}/index.js`, import.meta.url)));
      expect([...bare].filter((specifier) => !specifier.startsWith('node:')), kit).to.deep.equal([]);
      expect([...files].filter((file) => file.includes('/kernel/')), `${kit}: the kernel`).to.deep.equal([]);
    }
  });

  it('a name two faces share is the very same binding in both', async () => {
    const modules = await Promise.all(Object.keys(FACES).map(async (subpath) => (await import(subpath === '.' ? manifest.name : `${manifest.name}${subpath.slice(1)}`)) as Record<string, unknown>));
    const seen = new Map<string, unknown>();
    for (const module of modules) {
      for (const [name, value] of Object.entries(module)) {
        if (seen.has(name)) expect(value, name).to.equal(seen.get(name));
        else seen.set(name, value);
      }
    }
  });
});
