// Token-shaped test secrets, made at run time: the repository never holds a string that looks like a
// real provider token, and each run uses its own (a leak in one run cannot pass by matching another's).
import { randomBytes } from "node:crypto";

/** `hf_` + 36 random hex characters (the shape of a Hugging Face token). */
export function fakeHfToken(): string {
  return `hf_${randomBytes(18).toString("hex")}`;
}
