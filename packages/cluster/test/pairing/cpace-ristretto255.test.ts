// CPACE-RISTR255-SHA512 against draft-irtf-cfrg-cpace-21: Appendix A (string functions) and B.3
// (ristretto255 with SHA-512), including the invalid points scalar_mult_vfy must refuse.
import { describe, expect, it } from "vitest";
import { bytesToHex, bytesToNumberLE, hexToBytes } from "@noble/curves/utils.js";
import { sha512 } from "@noble/hashes/sha2.js";
import {
  calculateGenerator,
  generatorString,
  intermediateSessionKey,
  sampleScalar,
  scalarMult,
  scalarMultVfy,
  transcriptIr,
} from "../../src/pairing/cpace-ristretto255.js";
import { lvCat, prependLen, utf8 } from "../../src/pairing/length-value.js";
import { ristretto255 } from "@noble/curves/ed25519.js";

const hex = (text: string): Uint8Array => hexToBytes(text.replace(/\s+/g, ""));
const range = (n: number): Uint8Array => Uint8Array.from({ length: n }, (_, i) => i);

describe("string functions (draft A.1, A.3)", () => {
  it("prepend_len encodes lengths as LEB128", () => {
    expect(bytesToHex(prependLen(new Uint8Array()))).toBe("00");
    expect(bytesToHex(prependLen(utf8("1234")))).toBe("0431323334");
    expect(bytesToHex(prependLen(range(127)).subarray(0, 2))).toBe("7f00");
    expect(prependLen(range(127))).toHaveLength(128);
    expect(bytesToHex(prependLen(range(128)).subarray(0, 3))).toBe("800100");
    expect(prependLen(range(128))).toHaveLength(130);
    expect(bytesToHex(prependLen(new Uint8Array(300)).subarray(0, 2))).toBe("ac02");
  });

  it("lv_cat and transcript_ir match the vectors", () => {
    expect(bytesToHex(lvCat(utf8("1234"), utf8("5"), utf8(""), utf8("678")))).toBe(
      "043132333401350003363738",
    );
    expect(bytesToHex(transcriptIr(utf8("123"), utf8("PartyA"), utf8("234"), utf8("PartyB")))).toBe(
      "03313233065061727479410332333406506172747942",
    );
    expect(bytesToHex(transcriptIr(utf8("3456"), utf8("PartyA"), utf8("2345"), utf8("PartyB")))).toBe(
      "043334353606506172747941043233343506506172747942",
    );
  });
});

describe("CPACE-RISTR255-SHA512 (draft B.3)", () => {
  const prs = utf8("Password");
  const ci = hex("0b415f696e69746961746f720b425f726573706f6e646572");
  const sid = hex("7e4b4791d6a8ef019b936c79fb7f2c57");
  const ya = bytesToNumberLE(hex("da3d23700a9e5699258aef94dc060dfda5ebb61f02a5ea77fad53f4ff0976d08"));
  const yb = bytesToNumberLE(hex("d2316b454718c35362d83d69df6320f38578ed5984651435e2949762d900b80d"));
  const Ya = hex("d6bac480f2c386c394efc7c47adb9925dcd2630b64f240c50f8d0eec482b9157");
  const Yb = hex("3ea7e0b19560d7c0b0f5734f63b955286dfa8232b5ebe63324e2d9e7433f7258");
  const K = hex("80b69a8a76457ab6a4d7f887a4bf6b55a2f80ac19c333f917a05fc9887c8b40f");

  it("builds the generator string, its hash and the generator", () => {
    const generator = generatorString(prs, ci, sid);
    expect(generator).toHaveLength(170);
    expect(bytesToHex(generator)).toBe(
      "11435061636552697374726574746f3235350850617373776f726464" +
        "00".repeat(100) +
        "180b415f696e69746961746f720b425f726573706f6e646572107e4b4791d6a8ef019b936c79fb7f2c57",
    );
    expect(bytesToHex(sha512(generator))).toBe(
      "da6d3ddc8802fca9058755ffd3ebde08a9c2c74945901a258482a288b6663af0" +
        "6bf645c93cd1c51512307199c80e84908916d983b34af77205f90851a657ee27",
    );
    expect(bytesToHex(calculateGenerator(prs, ci, sid).toBytes())).toBe(
      "222b6b195fe84b1652badb6f6a3ae3d24341e7306967f0b8115b40d5698c7e56",
    );
  });

  it("computes both shares, the shared point and the initiator-responder ISK", () => {
    const g = calculateGenerator(prs, ci, sid);
    expect(scalarMult(ya, g)).toEqual(Ya);
    expect(scalarMult(yb, g)).toEqual(Yb);
    expect(scalarMultVfy(ya, Yb)).toEqual(K);
    expect(scalarMultVfy(yb, Ya)).toEqual(K);
    const transcript = transcriptIr(Ya, utf8("ADa"), Yb, utf8("ADb"));
    expect(transcript).toHaveLength(74);
    expect(bytesToHex(intermediateSessionKey(sid, K, transcript))).toBe(
      "b69effbf61b51d56401c0f65601abe428de8206feaaf0e32198896dcae7b35cd" +
        "2b38950a39dfd5d4a79164614c2984f7daa460b588c1e80c3fa2068af7900447",
    );
  });

  it("scalar_mult_vfy multiplies a valid point (B.3.10)", () => {
    const s = bytesToNumberLE(hex("7cd0e075fa7955ba52c02759a6c90dbbfc10e6d40aea8d283e407d88cf538a05"));
    const X = hex("2c3c6b8c4f3800e7aef6864025b4ed79bd599117e427c41bd47d93d654b4a51c");
    expect(bytesToHex(scalarMultVfy(s, X) ?? new Uint8Array())).toBe(
      "7c13645fe790a468f62c39beb7388e541d8405d1ade69d1778c5fe3e7f6b600e",
    );
  });

  it("scalar_mult_vfy refuses an invalid encoding and the neutral element (B.3.11)", () => {
    const s = bytesToNumberLE(hex("7cd0e075fa7955ba52c02759a6c90dbbfc10e6d40aea8d283e407d88cf538a05"));
    expect(scalarMultVfy(s, hex("2b3c6b8c4f3800e7aef6864025b4ed79bd599117e427c41bd47d93d654b4a51c"))).toBe(
      undefined,
    );
    expect(scalarMultVfy(s, new Uint8Array(32))).toBe(undefined);
    expect(scalarMultVfy(s, new Uint8Array(31))).toBe(undefined);
    expect(scalarMultVfy(s, new Uint8Array(32).fill(0xff))).toBe(undefined);
  });
});

describe("scalar sampling", () => {
  it("keeps 252 bits, so every scalar is below the group order", () => {
    const scalar = sampleScalar((n) => new Uint8Array(n).fill(0xff));
    expect(scalar).toBe(2n ** 252n - 1n);
    expect(scalar < ristretto255.Point.Fn.ORDER).toBe(true);
  });

  it("throws on a broken random source instead of using a degenerate scalar", () => {
    expect(() => sampleScalar((n) => new Uint8Array(n))).toThrow(/all-zero/);
    expect(() => sampleScalar(() => new Uint8Array(3))).toThrow(/exactly 32 bytes/);
  });
});
