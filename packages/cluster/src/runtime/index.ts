export * from "./runtime.js";
export * from "./virtual-runtime.js";
