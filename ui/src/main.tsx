import "./locale-guard";
import { render } from "preact";
import { App } from "./App";
import "./styles.css";

// Time from process start to the first interactive screen, for the cold-start benchmark.
(window as unknown as { __trainbenchMounted: number }).__trainbenchMounted = performance.now();
const root = document.getElementById("app");
if (root) {
  // The "Starting…" placeholder goes: Preact would render beside it.
  root.textContent = "";
  render(<App />, root);
}
