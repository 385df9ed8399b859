// A batch store written before lines recorded their serving node opens, gains the column, and its
// old lines keep their state; lines finished after it count by node.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { BatchStore } from "../../src/batch/index.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("a batch store from before served_by", () => {
  it("opens, keeps its lines, and counts the lines finished since by node", () => {
    const dir = mkdtempSync(join(tmpdir(), "pair-batch-upgrade-"));
    dirs.push(dir);
    const old = new Database(join(dir, "batches.db"));
    old.exec(`CREATE TABLE lines (
      batch_id TEXT NOT NULL, idx INTEGER NOT NULL, custom_id TEXT NOT NULL, body TEXT NOT NULL,
      state TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, reruns INTEGER NOT NULL DEFAULT 0,
      not_before INTEGER NOT NULL DEFAULT 0, result TEXT,
      PRIMARY KEY (batch_id, idx))`);
    const insert = old.prepare(
      "INSERT INTO lines (batch_id, idx, custom_id, body, state, result) VALUES (?, ?, ?, ?, ?, ?)",
    );
    insert.run("batch_1", 0, "a", "{}", "completed", "{}");
    insert.run("batch_1", 1, "b", "{}", "running", null);
    insert.run("batch_1", 2, "c", "{}", "running", null);
    old.close();

    const store = new BatchStore(dir);
    try {
      store.finishLine("batch_1", 1, "completed", "{}", "tower");
      store.finishLine("batch_1", 2, "completed", "{}", "tower");
      expect(store.counts("batch_1")).toMatchObject({ total: 3, completed: 3 });
      // The line finished before the upgrade served somewhere unknown: not counted for any node.
      expect(store.servedByNode("batch_1")).toEqual({ tower: 2 });
    } finally {
      store.close();
    }
  });
});
