import { defineConfig } from "vitest/config";

// Preact's JSX through esbuild (no plugin needed); the Tauri window loads the
// built `dist/` through its custom protocol.
export default defineConfig({
  esbuild: { jsx: "automatic", jsxImportSource: "preact" },
  clearScreen: false,
  server: { port: 5173, strictPort: true },
  build: { target: "safari15", outDir: "dist", emptyOutDir: true, chunkSizeWarningLimit: 1024 },
  // Thirty seconds a test (vitest's default is 5): the suite runs beside
  // builds on a busy two-core machine.
  test: { environment: "jsdom", include: ["test/**/*.test.ts", "test/**/*.test.tsx"], testTimeout: 30000 },
});
