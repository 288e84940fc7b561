import react from "@vitejs/plugin-react";
import { defineConfig } from "vitest/config";
import { icons } from "./build/icons.ts";

// The API is served from the same origin (scripts/web_serve.py locally, Firebase Hosting
// rewrites in production), so the dev server needs no proxy table of its own.
export default defineConfig({
  plugins: [react(), icons()],
  build: { outDir: "dist", emptyOutDir: true, sourcemap: true },
  test: { environment: "node", include: ["src/**/*.test.ts", "build/**/*.test.ts"] },
});
