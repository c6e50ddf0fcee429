// The wizard's foot: the plan (the run count, configurations, the duration
// estimate), verdicts on settings without a field, and Start.
import type { PlanDto } from "../../api";
import { canStart, planText, startLabel, type FieldError } from "../../lib/sweep";
import { ErrorBox } from "../common";
import { SearchProgress } from "../SearchProgress";

const SHOWN = ["model", "framework", "precision", "compile", "devices", "batch_size", "data", "steps", "epochs", "target_accuracy", "target_loss", "repeats", "price", "epoch_size", "profile"];

/** Verdicts on settings the wizard has no field for. */
function OtherMessages({ messages }: { messages: Map<string, string[]> }) {
  const rest = [...messages.entries()].filter(([f]) => !SHOWN.includes(f));
  if (rest.length === 0) return null;
  return (
    <ul class="field-errors">
      {rest.flatMap(([f, list]) => list.map((m) => <li key={f + m}>{m}</li>))}
    </ul>
  );
}

export function PlanSummary({ plan, parseError }: { plan: PlanDto | null; parseError: FieldError | null }) {
  if (parseError) return <p class="plan bad" data-plan="invalid">{parseError.message}</p>;
  if (!plan) return <p class="plan">Checking…</p>;
  return (
    <div class="plan" data-plan={plan.runs}>
      <p>
        <strong>{planText(plan)}</strong>
      </p>
      {plan.configurations.length > 0 && (
        <details>
          <summary>Configurations</summary>
          <ul>
            {plan.configurations.map((c) => (
              <li key={c}>{c}</li>
            ))}
          </ul>
        </details>
      )}
      {plan.runs > 0 && (
        <p class="hint" id="plan-duration" title="Each configuration's latest earlier run here: its time outside the steady windows plus the planned samples at its steady throughput.">
          {plan.duration ? `Estimated duration: ${plan.duration.text}.` : "No duration estimate: none of these configurations has run on this machine yet."}
        </p>
      )}
      {plan.notes.map((n) => (
        <p key={n} class="hint warn plan-note">
          {n}
        </p>
      ))}
    </div>
  );
}

interface FooterProps {
  plan: PlanDto | null;
  parseError: FieldError | null;
  messages: Map<string, string[]>;
  error: unknown;
  onCloseError: () => void;
  /** Whether a start is under way with `--batch-size max` (its probes are shown). */
  searching: boolean;
  busy: boolean;
  onStart: () => void;
}

export function StartFooter({ plan, parseError, messages, error, onCloseError, searching, busy, onStart }: FooterProps) {
  return (
    <footer class="start">
      <PlanSummary plan={plan} parseError={parseError} />
      <OtherMessages messages={messages} />
      <ErrorBox error={error} onClose={onCloseError} />
      {searching && <SearchProgress />}
      <button type="button" class="primary" id="start" title="Ctrl+Enter" disabled={busy || parseError !== null || !canStart(plan)} onClick={onStart}>
        {startLabel(plan)}
      </button>
    </footer>
  );
}
