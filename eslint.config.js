// Lint: type-aware rules, import cycles, and the package layering of design.md enforced by tools.
import tseslint from "typescript-eslint";
import importX from "eslint-plugin-import-x";

/** Which @pair packages each package may import (dependency direction: provision ← ledger ← adapters ← node). */
const layers = {
  provision: [],
  ledger: ["provision"],
  store: ["provision", "ledger"],
  testkit: ["provision", "ledger", "store", "emulators"],
  emulators: [],
  huggingface: ["provision", "ledger"],
  runpod: ["provision", "ledger"],
  node: ["provision", "ledger", "store", "huggingface", "runpod"],
  // `pair demo` reaches demo by a dynamic import (node/src/cli/demo-command.ts), which this rule
  // does not see; a static import of @pair/demo from node is refused.
  demo: ["huggingface", "emulators", "node"],
  dashboard: [],
};
const all = Object.keys(layers);

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
  ...all.map((pkg) => ({
    files: [`packages/${pkg}/src/**/*.ts`],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: all
                .filter((other) => other !== pkg && !layers[pkg].includes(other))
                .map((other) => `@pair/${other}`),
              message: `packages/${pkg} may import only: ${layers[pkg].map((l) => "@pair/" + l).join(", ") || "nothing of ours"} (design.md, dependency direction).`,
            },
            { group: ["@pair/*/*"], message: "No deep imports: use the package's index." },
            { group: ["../../*"], message: "No reaching into another package by path." },
          ],
        },
      ],
    },
  })),
  {
    files: [
      "packages/provision/src/**/*.ts",
      "packages/ledger/src/**/*.ts",
      "packages/node/src/pairing/**/*.ts",
    ],
    rules: { "no-restricted-syntax": ["error", ...pureCoreSyntax] },
  },
  {
    files: ["**/*.js", "**/*.mjs"],
    ...tseslint.configs.disableTypeChecked,
  },
);
