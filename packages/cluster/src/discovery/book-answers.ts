/**
 * What discovery hears, into the sighting book: an mDNS report (goodbyes forgotten, answers seen) and
 * what a static address answered (its previous sighting forgotten first).
 * Must not know: when discovery asks, the trust store, sockets.
 */

import { formatHostPort } from "../peers/index.js";
import type { MdnsReport } from "./mdns-records.js";
import type { SightingBook } from "./sighting-book.js";
import type { StaticAnswer } from "./static-probe.js";

/** What an mDNS report says, into the book at `nowMs`: goodbyes forgotten, answers seen. */
export function bookMdnsReport(book: SightingBook, report: MdnsReport, nowMs: number): void {
  for (const gone of report.gone)
    book.forget("mdns", {
      nodeId: gone.nodeId,
      ...(gone.port === undefined ? {} : { address: formatHostPort({ host: gone.host, port: gone.port }) }),
    });
  for (const s of report.seen)
    book.observe(
      {
        nodeId: s.nodeId,
        name: s.name,
        address: formatHostPort({ host: s.host, port: s.port }),
        via: "mdns",
      },
      nowMs,
    );
}

/** What a static address answered, into the book at `nowMs` (its previous sighting forgotten first). */
export function bookStaticAnswer(
  book: SightingBook,
  shown: string,
  answer: StaticAnswer,
  nowMs: number,
): void {
  book.forget("static", { address: shown });
  if (answer.kind === "pinned")
    book.observe(
      { nodeId: answer.peer.node_id, name: answer.peer.name, address: shown, via: "static" },
      nowMs,
    );
  else if (answer.kind === "named")
    book.observe({ nodeId: null, name: answer.name, address: shown, via: "static" }, nowMs);
}
