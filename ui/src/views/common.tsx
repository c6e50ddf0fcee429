import { Component, type ComponentChildren } from "preact";
import { errorText } from "../api";
import { useEffect, useRef, useState } from "preact/hooks";
import { useKeydown } from "../lib/keys";

/** An error shown where it happened, with its code. */
export function ErrorBox({ error, onClose }: { error: unknown; onClose?: () => void }) {
  if (error === null || error === undefined) return null;
  const e = errorText(error);
  return (
    <div class="error" role="alert" data-code={e.code}>
      <strong>{e.code}</strong> {e.message}
      {onClose && (
        <button type="button" class="link" onClick={onClose} aria-label="Dismiss">
          ×
        </button>
      )}
    </div>
  );
}

/** Keeps a failing view from blanking the window: shows the error instead. */
export class Boundary extends Component<{ children: ComponentChildren; name: string }, { error: unknown }> {
  state = { error: null as unknown };
  static getDerivedStateFromError(error: unknown) {
    return { error };
  }
  render() {
    if (this.state.error) {
      return (
        <div class="view">
          <ErrorBox error={this.state.error} />
          <p>
            The {this.props.name} view failed to draw.{" "}
            <button type="button" onClick={() => this.setState({ error: null })}>
              Try again
            </button>
          </p>
        </div>
      );
    }
    return this.props.children;
  }
}

/** A confirmation dialog inside the window (native-looking, testable over WebDriver). */
export function Confirm({
  text,
  yes,
  onYes,
  onNo,
}: {
  text: string;
  yes: string;
  onYes: () => void;
  onNo: () => void;
}) {
  // Esc answers no; the safe answer has the focus, so Enter does too.
  useKeydown((e) => {
    if (e.key === "Escape") {
      e.preventDefault();
      onNo();
    }
  });
  const cancel = useRef<HTMLButtonElement>(null);
  useEffect(() => cancel.current?.focus(), []);
  return (
    <div class="modal-backdrop">
      <div class="modal" role="dialog" aria-modal="true">
        <p>{text}</p>
        <div class="buttons">
          <button type="button" onClick={onNo} ref={cancel} data-confirm="no">
            Cancel
          </button>
          <button type="button" class="danger" onClick={onYes} data-confirm="yes">
            {yes}
          </button>
        </div>
      </div>
    </div>
  );
}

/** Cancel for a long task: once pressed it says so and stays disabled. */
export function CancelButton({ id, label = "Cancel", onCancel }: { id: string; label?: string; onCancel: () => Promise<unknown> }) {
  const [cancelling, setCancelling] = useState(false);
  return (
    <button
      type="button"
      class="small danger"
      id={id}
      disabled={cancelling}
      onClick={() => {
        setCancelling(true);
        onCancel().catch(() => {});
      }}
    >
      {cancelling ? "Cancelling…" : label}
    </button>
  );
}
