// Keyboard shortcuts: Ctrl+Enter starts from the wizard, Esc closes a dialog,
// Delete asks to delete the selected runs, "/" focuses the view's search.
import { useEffect, useRef } from "preact/hooks";

/** Inputs that take no typing: a key pressed on them is a shortcut. */
const NOT_TEXT = ["checkbox", "radio", "button", "submit", "reset", "range", "color", "file"];

/** Whether a key press goes to a field being typed in (then "/" and Delete are text). */
export function typing(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  if (!el?.tagName) return false;
  if (el.tagName === "INPUT") return !NOT_TEXT.includes((el as HTMLInputElement).type);
  return ["TEXTAREA", "SELECT"].includes(el.tagName) || el.isContentEditable === true;
}

/** `handler` on every key press in the window while the component is shown. */
export function useKeydown(handler: (e: KeyboardEvent) => void) {
  const current = useRef(handler);
  current.current = handler;
  useEffect(() => {
    const listener = (e: KeyboardEvent) => current.current(e);
    document.addEventListener("keydown", listener);
    return () => document.removeEventListener("keydown", listener);
  }, []);
}

/** "/" outside a field: focus the view's search box, if it has one. */
export function focusSearch(e: KeyboardEvent) {
  if (e.key !== "/" || e.ctrlKey || e.metaKey || e.altKey || typing(e.target)) return;
  const search = document.querySelector<HTMLInputElement>("main input[type=search]");
  if (!search) return;
  e.preventDefault();
  search.focus();
}
