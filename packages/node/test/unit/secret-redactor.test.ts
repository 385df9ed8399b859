// The redactor knows each secret in the forms an upstream could echo it in, and its stream scrub
// catches a secret however the body is cut into chunks.
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { REDACTED_MARK, SecretRedactor } from "../../src/credentials/index.js";
import { formsOf } from "../../src/credentials/secret-redactor.js";
import { fakeHfToken } from "../support/fake-token.js";

const TOKEN = fakeHfToken();

function redactor(): SecretRedactor {
  const r = new SecretRedactor();
  r.add(TOKEN);
  return r;
}

describe("SecretRedactor", () => {
  it("scrubs the raw value, Bearer, base64, base64url and base64 of user:token at every alignment", () => {
    const r = redactor();
    const b64 = (s: string) => Buffer.from(s).toString("base64");
    const texts = [
      `Authorization: Bearer ${TOKEN}`,
      `token=${b64(TOKEN)}`,
      `url=${b64(TOKEN).replace(/\+/g, "-").replace(/\//g, "_")}`,
      ...["u:", "us:", "use:"].map((user) => `Basic ${b64(`${user}${TOKEN}`)}`),
    ];
    for (const text of texts) {
      const out = r.redact(text);
      expect(out).toContain(REDACTED_MARK);
      expect(out).not.toContain(TOKEN);
      expect(out).not.toContain(b64(TOKEN).replace(/=+$/, ""));
      for (const user of ["u:", "us:", "use:"]) expect(out).not.toContain(b64(`${user}${TOKEN}`));
    }
  });

  it("leaves text without a secret (and short values) alone; bytes stay the same object", () => {
    const r = redactor();
    r.add("short");
    const bytes = Buffer.from("a short reply, é ✓");
    expect(r.redact("a short reply")).toBe("a short reply");
    expect(r.redactBytes(bytes)).toBe(bytes);
    expect(new SecretRedactor().active).toBe(false);
  });

  it("catches a secret split across chunks at every cut, and keeps multi-byte characters whole", () => {
    const r = redactor();
    const body = Buffer.from(`data: {"error":"é ${TOKEN} ✓"}\n\ndata: [DONE]\n\n`);
    for (let cut = 1; cut < body.length; cut++) {
      const s = r.stream();
      const out = Buffer.concat([s.push(body.subarray(0, cut)), s.push(body.subarray(cut)), s.end()]);
      expect(out.toString("utf8"), `cut at ${cut}`).toBe(
        `data: {"error":"é ${REDACTED_MARK} ✓"}\n\ndata: [DONE]\n\n`,
      );
    }
  });

  it("holds back nothing when a chunk cannot begin a secret", () => {
    const s = redactor().stream();
    const chunk = Buffer.from(randomBytes(64).toString("hex").replace(/h/g, "") + "\n\n");
    expect(s.push(chunk)).toEqual(chunk);
    expect(s.end().length).toBe(0);
  });

  it("holds back exactly the longest tail that begins a form, as a check of every form and length does", () => {
    const r = redactor();
    const other = `other-${TOKEN.slice(3)}`;
    r.add(other);
    const forms = [...formsOf(TOKEN), ...formsOf(other)].map((f) => Buffer.from(f));
    const naive = (bytes: Buffer): number => {
      let keep = 0;
      for (const form of forms)
        for (let k = 1; k < form.length && k <= bytes.length; k++)
          if (bytes.subarray(bytes.length - k).equals(form.subarray(0, k))) keep = Math.max(keep, k);
      return keep;
    };
    for (let i = 0; i < 2_000; i++) {
      const form = forms[i % forms.length]!;
      const prefix = form.subarray(0, 1 + (i % (form.length - 1)));
      const bytes = Buffer.concat([randomBytes(i % 7), Buffer.from('"}]}\n\n'), prefix]);
      expect(r.pendingTail(bytes), `case ${i}`).toBe(naive(bytes));
      const plain = Buffer.from(randomBytes(24).toString("base64"));
      expect(r.pendingTail(plain), `plain ${i}`).toBe(naive(plain));
    }
  });
});
