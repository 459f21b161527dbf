/**
 * The one way views and actions ask for the page to be rebuilt. page.ts, which imports every view,
 * registers the renderer when it starts; the views call render() here rather than import page.ts
 * back, which would be an import cycle.
 */
let renderer: () => void = () => undefined;

/** Rebuilds the header and the current view (renderPage in page.ts). */
export function render(): void {
  renderer();
}

export function setRenderer(next: () => void): void {
  renderer = next;
}
