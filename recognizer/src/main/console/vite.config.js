import { defineConfig } from 'vite';

// Served by the recognizer: index.html at /console, the bundle under /console/assets.
export default defineConfig({
  base: '/console/',
  build: {
    assetsDir: 'assets',
    emptyOutDir: true,
    chunkSizeWarningLimit: 600,
  },
});
