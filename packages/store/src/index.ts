/**
 * @pair/store: durable state in SQLite. The hosting contract's store (and the ledger's, in its own
 * module). Each implements a store port defined by its pure package.
 */

export * from "./hosting-store.js";
export * from "./ledger-store.js";
export * from "./private-database.js";
