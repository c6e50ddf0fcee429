// WebKitGTK reports the POSIX locale "C" as navigator.language when LANG is
// unset or C; Intl rejects that tag, and uPlot formats numbers with it when it
// loads. Fall back to en-US for such a tag. Imported before anything else.
try {
  new Intl.NumberFormat(navigator.language);
} catch {
  Object.defineProperty(navigator, "language", { value: "en-US", configurable: true });
}
export {};
