// The wizard's version picker: a framework's releases as PyPI lists them
// (within the range the studio supports), each a box that adds
// `FRAMEWORK==VERSION` to the sweep; a chosen release not installed yet gets
// an Install button (its own environment, made from PyPI with uv).
import { useEffect, useState } from "preact/hooks";
import { api, call, type ReleasesDto } from "../api";
import { pickerLabel, releaseNote } from "../lib/releases";
import { ErrorBox } from "./common";

interface Props {
  framework: string;
  /** The sweep's framework keys. */
  chosen: string[];
  onToggle: (key: string) => void;
  onInstall: (key: string) => void;
  /** An install is under way (the list is read again when it ends). */
  installing: boolean;
}

export function ReleasePicker({ framework, chosen, onToggle, onInstall, installing }: Props) {
  const [open, setOpen] = useState(false);
  const [list, setList] = useState<ReleasesDto | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(false);

  async function load() {
    setLoading(true);
    setError(null);
    try {
      setList(await call(api.frameworkReleases(framework)));
    } catch (e) {
      setError(e);
    } finally {
      setLoading(false);
    }
  }

  // Read again once an install ends: a release may be installed now.
  useEffect(() => {
    if (open && !installing) load();
  }, [open, installing]);

  return (
    <div class="release-picker" data-framework={framework}>
      <button type="button" class="small" aria-expanded={open} onClick={() => setOpen(!open)}>
        {pickerLabel(chosen, framework)}
      </button>
      {open && (
        <div class="releases">
          {loading && list === null && <p class="hint">Asking PyPI which releases of {framework} there are…</p>}
          {list && (
            <>
              <p class="hint">
                Each release you tick trains in an environment of its own, made from PyPI the first time and kept for later runs (Settings lists them with
                their disk). The studio runs {list.supported}.
              </p>
              <ul class="choices releases-list">
                {list.releases.map((r) => (
                  <li key={r.key}>
                    <label>
                      <input type="checkbox" name="release" value={r.key} checked={chosen.includes(r.key)} onChange={() => onToggle(r.key)} />
                      {r.version}
                    </label>{" "}
                    <span class="hint">{releaseNote(r)}</span>
                    {!r.installed && chosen.includes(r.key) && (
                      <button type="button" class="small" disabled={installing} onClick={() => onInstall(r.key)}>
                        Install
                      </button>
                    )}
                  </li>
                ))}
              </ul>
            </>
          )}
          <ErrorBox error={error} />
        </div>
      )}
    </div>
  );
}
