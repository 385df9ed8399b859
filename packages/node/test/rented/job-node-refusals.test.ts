// A Jobs node that can never start a job says why, everywhere a user looks, and creates nothing:
// a Job secret whose credential reference holds nothing leaves the node unmanaged (the request gets
// a clean error naming the secret, never its value); a flavor Hugging Face does not list makes the
// node `never` with the reason (request refused, `pair rented list`'s row says why).
import { describe, expect, it } from "vitest";
import { uniqueName } from "../credentials/secret-service.js";
import { chat, jobWorld, type JobWorld, NODE, NS, rentedRow } from "./job-harness.js";
import { keyringWorlds } from "../support/keyring-worlds.js";

const worlds = keyringWorlds<JobWorld>();

async function world(options: Parameters<typeof jobWorld>[1]): Promise<JobWorld> {
  const w = worlds.add(await jobWorld(worlds.ca, options));
  await w.start();
  return w;
}

describe("a Jobs node that cannot start a job", () => {
  it("a Job secret whose reference holds nothing: unmanaged, the request is refused naming the secret, nothing is created", async () => {
    const missing = `os-credential-store:pair/${uniqueName("absent-secret")}`;
    const w = await world({ secretRef: missing });
    expect(w.node.jobs.has(NODE)).toBe(false);
    const answer = await chat(w);
    expect(answer.status).toBe(409);
    expect(answer.text).not.toContain(w.token);
    const row = await rentedRow(w);
    expect(answer.text).toContain("rented_node_ineligible");
    expect(answer.text).toContain("the Job secret HF_TOKEN is not in the OS credential store");
    expect(row["state"]).toBe("credential_unavailable");
    expect(row["reason"]).toContain(
      "the Job secret HF_TOKEN is not in the OS credential store: pair credential set",
    );
    expect(w.log.join("\n")).toContain("HF_TOKEN");
    expect(w.log.join("\n")).not.toContain(w.token);
    expect(w.hf.jobs.list(NS)).toEqual([]);
  });

  it("a flavor Hugging Face does not list: `never` with the reason, the request is refused, nothing is created", async () => {
    const w = await world({ flavor: "h999x8" });
    const answer = await chat(w);
    expect(answer.status).toBe(409);
    const row = await rentedRow(w);
    expect(row["policy"]).toBe("never");
    expect(row["reason"]).toMatch(
      /flavor h999x8 is not listed by Hugging Face Jobs \(listed: .*l4x1.*\): fix job\.flavor/,
    );
    expect(answer.text).toContain("rented_node_ineligible");
    expect(answer.text).toContain("flavor h999x8 is not listed");
    expect(w.hf.jobs.list(NS)).toEqual([]);
  });
});
