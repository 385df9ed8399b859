// Types of bin/bundle-freshness.js (plain JavaScript: `pair` loads it before any TypeScript loader).
/** `undefined` when the bundle at `bundlePath` is fresh; otherwise why not. */
export declare function whyNotFresh(bundlePath: string): string | undefined;
