/**
 * The model routes' questions to up peers over their route API (`POST /pair/v1/peer/route/api/…`),
 * answered by each peer for its own engines and the rented nodes it shares (`scope: "node"`), never
 * for its peers: the asking node does the merging. Peers are asked at once and listed by name, so a
 * merge that takes the first answer is the same on every call.
 * Must not know: what the answers mean, the client API.
 */

import type { MemberView } from "../cluster-node/index.js";
import { askJson } from "./ask-json.js";
import type { ClientApiDeps } from "./client-api.js";

export interface PeerAnswer {
  readonly peer: string;
  readonly answer: Record<string, unknown>;
}

/** Up peers, by name; `wanted`: only those it keeps. */
export function upPeers(deps: ClientApiDeps, wanted?: (m: MemberView) => boolean): MemberView[] {
  return (deps.membership?.members() ?? [])
    .filter((m) => m.state === "up" && (wanted === undefined || wanted(m)))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** A peer serves `model` on its own engines or on a rented node it shares. */
export function peerServes(m: MemberView, model: string): boolean {
  return (
    m.models.some((x) => x.model === model) || m.rented.some((r) => r.shared && r.models.includes(model))
  );
}

/** Ask each of `peers` one client route (POST, the peer route API's one method); silent peers left out. */
export async function askPeers(
  deps: ClientApiDeps,
  peers: readonly MemberView[],
  route: string,
  body: unknown = {},
): Promise<PeerAnswer[]> {
  const answers = await Promise.all(
    peers.map(async (m) => {
      const link = deps.peers?.link({ nodeId: m.node_id, name: m.name, maxConcurrent: m.capacity });
      if (link === undefined) return undefined;
      const answer = await askJson({ ...link, path: route, method: "POST", body });
      return answer === undefined ? undefined : { peer: m.name, answer };
    }),
  );
  return answers.filter((a): a is PeerAnswer => a !== undefined);
}
