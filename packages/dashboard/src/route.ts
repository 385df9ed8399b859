/**
 * The dashboard's views, addressed by the URL's fragment so the node serves one page:
 * `#/nodes`, `#/nodes/<name>`, `#/add` (add a rented GPU), `#/jobs`, `#/batches`, `#/history`. Anything else is
 * the node list.
 * Must not know: the DOM, what a view shows.
 */

export type Route =
  | { readonly view: "nodes" }
  | { readonly view: "node"; readonly name: string }
  | { readonly view: "add" }
  | { readonly view: "jobs" }
  | { readonly view: "batches" }
  | { readonly view: "history" };

export function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, "").split("/");
  switch (parts[0]) {
    case "jobs":
      return { view: "jobs" };
    case "add":
      return { view: "add" };
    case "history":
      return { view: "history" };
    case "batches":
      return { view: "batches" };
    case "nodes": {
      const name = parts.slice(1).join("/");
      if (name === "") return { view: "nodes" };
      try {
        return { view: "node", name: decodeURIComponent(name) };
      } catch {
        return { view: "nodes" };
      }
    }
    default:
      return { view: "nodes" };
  }
}

export function routeHref(route: Route): string {
  return route.view === "node" ? `#/nodes/${encodeURIComponent(route.name)}` : `#/${route.view}`;
}
