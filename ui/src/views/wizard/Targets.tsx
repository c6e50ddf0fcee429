// The wizard's third row, first part: what a run aims for and how often
// each configuration runs.
import { Explained } from "../Glossary";
import { FieldMessages, type SectionProps } from "./fields";

export function TargetAccuracySection({ form, set, messages }: SectionProps) {
  return (
    <section>
      <h3>
        <label for="target">Target accuracy</label>
      </h3>
      <input id="target" name="target_accuracy" value={form.targetAccuracy} placeholder="none, or 0.95" onInput={(e) => set({ targetAccuracy: e.currentTarget.value })} />
      <p class="hint">
        Held-out accuracy to reach (<Explained k="time-to-accuracy">time to accuracy</Explained>); the run stops there.
      </p>
      <FieldMessages field="target_accuracy" messages={messages} />
    </section>
  );
}

export function TargetLossSection({ form, set, messages }: SectionProps) {
  return (
    <section>
      <h3>
        <label for="target-loss">Target loss</label>
      </h3>
      <input id="target-loss" name="target_loss" value={form.targetLoss} placeholder="none, or 3.5" onInput={(e) => set({ targetLoss: e.currentTarget.value })} />
      <p class="hint">Or a held-out loss to reach, for text models (time to loss).</p>
      <FieldMessages field="target_loss" messages={messages} />
    </section>
  );
}

export function RepeatsSection({ form, set, messages }: SectionProps) {
  return (
    <section>
      <h3>
        <label for="repeats">Repeats</label>
      </h3>
      <input id="repeats" name="repeats" value={form.repeats} onInput={(e) => set({ repeats: e.currentTarget.value })} />
      <FieldMessages field="repeats" messages={messages} />
    </section>
  );
}
