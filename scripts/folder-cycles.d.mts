// Types of scripts/folder-cycles.mjs, for the tests that import it.
export type FolderGraph = Map<string, Map<string, string>>;
export declare function folderOf(root: string, file: string): string;
export declare function importsOf(text: string): string[];
export declare function folderGraph(root: string): FolderGraph;
export declare function pathBetween(graph: FolderGraph, to: string, from: string): string[] | undefined;
export declare function cycleGroups(graph: FolderGraph): string[][];
export declare function mutualPairs(graph: FolderGraph): Array<[string, string]>;
