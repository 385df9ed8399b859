// Vite builds the dashboard into dist/, served by every node under /ui/ (ui-static.ts in @pair/node):
// one script and one stylesheet, hashed names, nothing inline and nothing fetched from elsewhere.
/** @type {import("vite").UserConfig} (a plain object: defineConfig only adds types) */
export default {
  base: "/ui/",
  // Preact's automatic JSX runtime through Vite's own transform (no Babel preset needed).
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    // The polyfill would be one more script for browsers that all support modulepreload already.
    modulePreload: { polyfill: false },
    // Nothing inlined as data: URLs (the CSP is default-src 'self').
    assetsInlineLimit: 0,
    sourcemap: false,
    target: "es2022",
  },
};
