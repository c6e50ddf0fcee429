import "./locale-guard";
import { render } from "preact";
import { App } from "./App";
import "./styles.css";

// Time from process start to the first interactive screen, for the cold-start benchmark.
(window as unknown as { __trainbenchMounted: number }).__trainbenchMounted = performance.now();
// Errors no view caught (an event handler's), kept for the end-to-end test's
// failure report.
const seen: string[] = [];
(window as unknown as { __trainbenchErrors: string[] }).__trainbenchErrors = seen;
window.addEventListener("error", (e) => seen.push(String(e.message)));
window.addEventListener("unhandledrejection", (e) => seen.push(String(e.reason)));
const root = document.getElementById("app");
if (root) {
  // The "Starting…" placeholder goes: Preact would render beside it.
  root.textContent = "";
  render(<App />, root);
}
