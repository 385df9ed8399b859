/**
 * What `pair demo` prints once the tour is over and the two-node sandbox stays up: where A and B
 * run, and the commands a user can try (pair nodes, pair jobs/history, curl to B's port, pair ui,
 * pair rented …); for scripts, one JSON line with the nodes and the tour's steps.
 * Must not know: how the sandbox is built, how the tour ran.
 */

import type { DemoCluster } from "./cluster.js";
import { DEMO_HF_ENDPOINT, DEMO_HF_MODEL, DEMO_RENTED_NODE } from "./cluster-config.js";
import { shellWord } from "./guide.js";
import type { TourStep } from "./tour.js";

/** The `--json` line of the two-node demo: more fields may be added, none renamed. */
export interface DemoClusterJson {
  readonly ok: boolean;
  readonly dir: string;
  readonly nodes: {
    readonly a: { readonly name: string; readonly url: string; readonly config_file: string };
    readonly b: { readonly name: string; readonly url: string; readonly config_file: string };
  };
  readonly rented_node: string;
  readonly steps: readonly TourStep[];
}

export function demoClusterJson(c: DemoCluster, steps: readonly TourStep[]): DemoClusterJson {
  return {
    ok: steps.length > 0 && steps.every((s) => s.ok),
    dir: c.dir,
    nodes: {
      a: { name: c.a.name, url: c.a.node.url, config_file: c.a.configFile },
      b: { name: c.b.name, url: c.b.node.url, config_file: c.b.configFile },
    },
    rented_node: DEMO_RENTED_NODE,
    steps,
  };
}

/** One line per step: ✓/✗ and its title. */
export function tourSummary(steps: readonly TourStep[]): string {
  const failed = steps.filter((s) => !s.ok).length;
  return [
    "",
    failed === 0
      ? `The tour showed all ${steps.length} steps of the seed's validation plan.`
      : `${failed} of ${steps.length} steps did not turn out as the seed says:`,
    ...steps.map((s) => `  ${s.ok ? "✓" : "✗"} ${s.step}. ${s.title}`),
    "",
  ].join("\n");
}

export function demoClusterGuide(c: DemoCluster, clockScale: number, pairCommand = "npx pair"): string {
  const a = `PAIR_CONFIG=${shellWord(c.a.configFile)} ${pairCommand}`;
  const b = `PAIR_CONFIG=${shellWord(c.b.configFile)} ${pairCommand}`;
  const chat = (model: string, stream: boolean) =>
    JSON.stringify({ model, stream, messages: [{ role: "user", content: "Why is the sky blue?" }] });
  const url = c.b.node.url;
  return [
    "The sandbox stays up. What runs (all on loopback):",
    `  A  ${c.a.name} (sponsor)  ${c.a.node.url}  sponsors ${DEMO_RENTED_NODE} = ${DEMO_HF_ENDPOINT.namespace}/${DEMO_HF_ENDPOINT.name} on the emulated Hugging Face`,
    `  B  ${c.b.name} (peer)     ${url}  paired with A by PIN; holds no token`,
    `  Hugging Face emulator (HTTPS, a throwaway CA that A trusts): ${c.hf.endpointsApiUrl}`,
    `  Virtual time now runs ${clockScale}× real time (idle pauses, budgets and cold starts come ${clockScale}× sooner).`,
    "",
    "Try it from another terminal:",
    "",
    `  ${b} nodes             # B's view: A, B and ${DEMO_RENTED_NODE} (state, price, policy, reason)`,
    `  ${a} rented list       # what A sponsors, with spend`,
    "",
    `  # ${DEMO_HF_MODEL} through B: A's local copy serves it, or ${DEMO_RENTED_NODE} when that is busy (policy overflow)`,
    `  curl -sN ${url}/v1/chat/completions -H 'content-type: application/json' \\`,
    `    -d '${chat(DEMO_HF_MODEL, true)}'`,
    "  # A's own Ollama model, through B",
    `  curl -s ${url}/api/chat -d '${chat("llama3.2:1b", false)}'`,
    "",
    `  ${b} jobs              # running now (also: history --since 15m)`,
    `  ${a} history           # the sponsor records every request its rented node served`,
    `  ${a} rented pause ${DEMO_RENTED_NODE}   # or resume; policy ${DEMO_RENTED_NODE} when-no-local-node|overflow|prefer|never`,
    `  ${a} ui                # the dashboard (a one-time login link)`,
    "",
    `Ctrl-C stops both nodes and the emulators and removes ${c.dir}.`,
    "",
  ].join("\n");
}
