/** Shows an error in an alert region (announced by screen readers). */
export function showError(box: HTMLElement, err: unknown): void {
  box.textContent = err instanceof Error ? err.message : String(err);
  box.className = 'alert error';
  box.setAttribute('role', 'alert');
  box.hidden = false;
}
