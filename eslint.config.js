// Lint: type-aware rules, import cycles, and the package layering of docs/architecture.md enforced by tools.
import tseslint from "typescript-eslint";
import importX from "eslint-plugin-import-x";
import { dirname, relative, resolve } from "node:path";
import { folderGraph, folderOf, pathBetween } from "./scripts/folder-cycles.mjs";

/**
 * Which @pair packages each package may import (dependency direction: provision ← ledger ← adapters
 * ← sponsor ← node; dialects and cluster sit below sponsor and node and never import them).
 */
const layers = {
  provision: [],
  ledger: ["provision"],
  store: ["provision", "ledger"],
  testkit: ["provision", "ledger", "store", "emulators"],
  emulators: [],
  huggingface: ["provision", "ledger"],
  runpod: ["provision", "ledger"],
  dialects: [],
  cluster: ["provision"],
  sponsor: ["provision", "ledger", "store", "huggingface", "runpod", "dialects", "cluster"],
  node: ["provision", "ledger", "store", "huggingface", "runpod", "dialects", "cluster", "sponsor"],
  // `pair demo` reaches demo by a dynamic import (node/src/cli/demo-command.ts), which this rule
  // does not see; a static import of @pair/demo from node is refused.
  demo: ["huggingface", "emulators", "node"],
  dashboard: [],
};
const all = Object.keys(layers);

/** Packages whose src/ folders must not import each other in a cycle (scripts/folder-cycles.mjs). */
const acyclicFolders = ["node", "demo", "cluster", "dialects", "sponsor"];

/** What a file of `pkg`'s src/ may import: its layers, no deep imports, nothing of another package by path (`outside`). */
function packageImports(pkg, outside) {
  return [
    "error",
    {
      patterns: [
        {
          group: all
            .filter((other) => other !== pkg && !layers[pkg].includes(other))
            .map((other) => `@pair/${other}`),
          message: `packages/${pkg} may import only: ${layers[pkg].map((l) => "@pair/" + l).join(", ") || "nothing of ours"} (docs/architecture.md, dependency direction).`,
        },
        { group: ["@pair/*/*"], message: "No deep imports: use the package's index." },
        { group: [outside], message: "No reaching into another package by path." },
      ],
    },
  ];
}

/** The folder graph of a package's src/, read once per lint run (a second's reuse in an editor). */
const graphs = new Map();
function graphOf(root) {
  const cached = graphs.get(root);
  if (cached !== undefined && Date.now() - cached.at < 1_000) return cached.graph;
  const graph = folderGraph(root);
  graphs.set(root, { graph, at: Date.now() });
  return graph;
}

/**
 * `pair/no-folder-cycle`: an import from folder A of a package's src/ into folder B is refused when B
 * already depends on A, directly or through other folders: the folder list is the architecture, and
 * a cycle makes two folders one.
 */
const noFolderCycle = {
  meta: {
    type: "problem",
    schema: [],
    messages: {
      cycle:
        "{{from}}/ → {{to}}/ closes a folder cycle: {{back}} already ({{example}}). Move the shared part down (docs/architecture.md).",
    },
  },
  create(context) {
    const file = context.filename;
    const root = resolve(file.slice(0, file.indexOf("/src/") + 4));
    const check = (node) => {
      const spec = node.source?.value;
      if (typeof spec !== "string" || !spec.startsWith(".")) return;
      checkIn(node, spec);
    };
    const checkIn = (node, spec) => {
      const from = folderOf(root, file);
      const target = resolve(dirname(file), spec);
      if (relative(root, target).startsWith("..")) return;
      const to = folderOf(root, target);
      if (to === from) return;
      const graph = graphOf(root);
      const back = pathBetween(graph, to, from);
      if (back === undefined) return;
      const example = graph.get(back[0])?.get(back[1]) ?? "";
      context.report({
        node,
        messageId: "cycle",
        data: { from, to, back: back.map((f) => `${f}/`).join(" → "), example },
      });
    };
    return {
      ImportDeclaration: check,
      ExportNamedDeclaration: check,
      ExportAllDeclaration: check,
      ImportExpression: check,
    };
  },
};

const pureCoreSyntax = [
  {
    selector: "MemberExpression[object.name='Date'][property.name='now']",
    message: "Pure core: take an Instant from the caller (Clock).",
  },
  {
    selector: "NewExpression[callee.name='Date'][arguments.length=0]",
    message: "Pure core: take an Instant from the caller (Clock).",
  },
  {
    selector: "MemberExpression[object.name='Math'][property.name='random']",
    message: "Pure core: randomness is an input.",
  },
  { selector: "CallExpression[callee.name='randomUUID']", message: "Pure core: ids are inputs." },
  {
    selector: "CallExpression[callee.name=/^(setTimeout|setInterval|setImmediate|fetch)$/]",
    message: "Pure core: no timers or I/O.",
  },
];

/** The packages whose time goes through the one Runtime seam (@pair/cluster's runtime/). */
const runtimeSeamPackages = ["node", "cluster", "sponsor"];

const timeSeamMessage =
  "Time goes through the Runtime seam (@pair/cluster runtime/): take a Clock or Timers from the composition root.";

export default tseslint.config(
  {
    ignores: [
      "**/node_modules/**",
      "**/dist/**",
      "**/coverage/**",
      "packages/dashboard/**/build/**",
      ".node/**",
    ],
  },
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ["*.js", "*.mjs", "scripts/*.mjs"] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    plugins: { "import-x": importX },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/switch-exhaustiveness-check": [
        "error",
        { considerDefaultExhaustiveForUnions: true },
      ],
      "@typescript-eslint/consistent-type-imports": "error",
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", destructuredArrayIgnorePattern: "^_" },
      ],
      "import-x/no-cycle": "error",
      "import-x/no-self-import": "error",
    },
  },
  ...all.flatMap((pkg) => [
    {
      files: [`packages/${pkg}/src/**/*.ts`],
      rules: { "no-restricted-imports": packageImports(pkg, "../../*") },
    },
    // A file two folders deep reaches src/'s other folders with ../../; out of the package is one more.
    {
      files: [`packages/${pkg}/src/*/*/**/*.ts`],
      rules: { "no-restricted-imports": packageImports(pkg, "../../../*") },
    },
  ]),
  {
    files: [
      "packages/provision/src/**/*.ts",
      "packages/ledger/src/**/*.ts",
      "packages/cluster/src/pairing/**/*.ts",
      "packages/dialects/src/**/*.ts",
    ],
    rules: { "no-restricted-syntax": ["error", ...pureCoreSyntax] },
  },
  {
    files: runtimeSeamPackages.map((pkg) => `packages/${pkg}/src/**/*.ts`),
    ignores: ["packages/cluster/src/runtime/**"],
    rules: {
      "no-restricted-globals": [
        "error",
        { name: "setTimeout", message: timeSeamMessage },
        { name: "setInterval", message: timeSeamMessage },
      ],
      "no-restricted-properties": [
        "error",
        { object: "Date", property: "now", message: timeSeamMessage },
        { object: "performance", property: "now", message: timeSeamMessage },
        { object: "globalThis", property: "setTimeout", message: timeSeamMessage },
        { object: "globalThis", property: "setInterval", message: timeSeamMessage },
      ],
    },
  },
  {
    files: acyclicFolders.map((pkg) => `packages/${pkg}/src/**/*.ts`),
    plugins: { pair: { rules: { "no-folder-cycle": noFolderCycle } } },
    rules: { "pair/no-folder-cycle": "error" },
  },
  {
    files: ["**/*.js", "**/*.mjs"],
    ...tseslint.configs.disableTypeChecked,
  },
);
