/**
 * @pair/testkit: what tests share. FakeProvider and its seeded fault wrapper, seeded randomness,
 * counting ids. Never imported by product code.
 */

export * from "./seeded-random.js";
export * from "./fake-provider.js";
export * from "./faulty-provider.js";
export * from "./test-ca.js";
export * from "./provider-contract.js";
