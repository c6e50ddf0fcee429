// One folding section of the wizard: its title and, folded or not, the
// choices it holds in a line.
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { type Group, groupLine, startsOpen } from "../../lib/wizardGroups";
import type { WizardForm } from "../../lib/sweep";

export function WizardGroup({ id, title, form, children }: { id: Group; title: string; form: WizardForm; children: ComponentChildren }) {
  // Decided once: a person's folding is theirs after that.
  const [open] = useState(() => startsOpen(id, form));
  return (
    <details class="wizard-group" id={`group-${id}`} open={open}>
      <summary>
        <b>{title}</b> <span class="hint group-line">{groupLine(id, form)}</span>
      </summary>
      {children}
    </details>
  );
}
