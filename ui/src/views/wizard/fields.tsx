// What every section of the wizard shares: the form and its setter, the
// backend's verdicts by field, and the list of those verdicts under a field.
import type { WizardForm } from "../../lib/sweep";

/** A section's part of the wizard: the form, a patch to it, the verdicts by field. */
export interface SectionProps {
  form: WizardForm;
  set: (patch: Partial<WizardForm>) => void;
  messages: Map<string, string[]>;
}

export function toggle<T>(list: T[], v: T): T[] {
  return list.includes(v) ? list.filter((x) => x !== v) : [...list, v];
}

export function FieldMessages({ field, messages }: { field: string; messages: Map<string, string[]> }) {
  const list = messages.get(field);
  if (!list || list.length === 0) return null;
  return (
    <ul class="field-errors" data-field={field}>
      {list.map((m) => (
        <li key={m}>{m}</li>
      ))}
    </ul>
  );
}
