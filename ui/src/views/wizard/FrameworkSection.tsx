// The wizard's frameworks: each with its version, Install where it is
// missing, its version picker, and the log of an install under way.
import type { AppInfo, InstallProgress } from "../../api";
import { installView } from "../../lib/install";
import { Explained } from "../Glossary";
import { ReleasePicker } from "../ReleasePicker";
import { FieldMessages, type SectionProps, toggle } from "./fields";
import type { Installing } from "./installs";

function InstallFigures({ progress }: { progress: InstallProgress }) {
  const v = installView(progress);
  return (
    <div class="install-figures">
      <div>{v.step}</div>
      <div>Packages: {v.packages}</div>
      <div>Downloads: {v.downloads}</div>
      {v.fraction !== null && (
        <div class="progress" role="progressbar" aria-valuemin={0} aria-valuemax={100} aria-valuenow={Math.round(v.fraction * 100)}>
          <div style={{ width: `${(v.fraction * 100).toFixed(1)}%` }} />
        </div>
      )}
    </div>
  );
}

function InstallLog({ installing, onCancel }: { installing: Installing; onCancel: () => void }) {
  return (
    <div class="install-log" data-framework={installing.framework}>
      <p>
        Installing {installing.framework} from PyPI…{" "}
        <button type="button" class="small" onClick={onCancel}>
          Cancel install
        </button>
      </p>
      {installing.progress && <InstallFigures progress={installing.progress} />}
      <pre>{installing.lines.join("\n")}</pre>
    </div>
  );
}

interface Props extends SectionProps {
  frameworks: AppInfo["frameworks"];
  installing: Installing | null;
  onInstall: (framework: string) => void;
  onCancelInstall: () => void;
}

export function FrameworkSection({ frameworks, form, set, messages, installing, onInstall, onCancelInstall }: Props) {
  return (
    <section>
      <ul class="choices" data-field="framework">
        {frameworks.map((f) => (
          <li key={f.key}>
            <label>
              <input
                type="checkbox"
                name="framework"
                value={f.key}
                disabled={!f.installed}
                checked={form.frameworks.includes(f.key)}
                onChange={() => set({ frameworks: toggle(form.frameworks, f.key) })}
              />
              <Explained k={f.framework}>{f.title}</Explained> {f.version ? <span class="hint">{f.version}</span> : null}
            </label>
            {f.problem && <span class="hint warn"> — {f.problem}</span>}
            {!f.installed && f.installable && (
              <button type="button" class="small" disabled={installing !== null} onClick={() => onInstall(f.framework)}>
                Install
              </button>
            )}
            {f.key === f.framework && f.framework !== "tch" && (
              <ReleasePicker
                framework={f.framework}
                chosen={form.frameworks}
                onToggle={(key) => set({ frameworks: toggle(form.frameworks, key) })}
                onInstall={onInstall}
                installing={installing !== null}
              />
            )}
          </li>
        ))}
      </ul>
      {installing && <InstallLog installing={installing} onCancel={onCancelInstall} />}
      <FieldMessages field="framework" messages={messages} />
    </section>
  );
}
