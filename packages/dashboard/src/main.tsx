/**
 * The dashboard's entry: mounts the app in #app with its stylesheet.
 * Must not know: anything the app does.
 */

import { render } from "preact";
import { App } from "./app.js";
import "./styles.css";

const root = document.getElementById("app");
if (root === null) throw new Error("index.html has no #app element");
render(<App />, root);
