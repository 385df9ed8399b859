// The guide's shell words: a path the user copies into a shell is quoted only when it needs it.
import { describe, expect, it } from "vitest";
import { shellWord } from "@pair/demo";

describe("shellWord", () => {
  it("quotes shell words only when needed", () => {
    expect(shellWord("/tmp/pair-demo-x/pair.yaml")).toBe("/tmp/pair-demo-x/pair.yaml");
    expect(shellWord("/tmp/my dir/it's.yaml")).toBe(`'/tmp/my dir/it'\\''s.yaml'`);
  });
});
