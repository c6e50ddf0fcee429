// The wizard's state: the form, the backend's plan for it (asked 150 ms
// after the last change), the remote hosts, installs, and Start (the button
// or Ctrl+Enter).
import { useEffect, useMemo, useState } from "preact/hooks";
import { api, call, type PlanDto, type RemoteHost, type SweepRequest } from "../../api";
import { useKeydown } from "../../lib/keys";
import { budgetNotices } from "../../lib/releases";
import { canStart, defaultForm, messagesByField, toRequest, type FieldError, type WizardForm } from "../../lib/sweep";
import { useInstalls } from "./installs";

export interface WizardProps {
  /** The runs queued, and sentences for the queue to show (releases removed
   * over the disk budget by Start's installs, or kept over it in use). */
  onStarted: (runIds: number[], notices: string[]) => void;
  onInfoChanged: () => void;
}

export function useWizard({ onStarted, onInfoChanged }: WizardProps) {
  const [form, setForm] = useState<WizardForm>(defaultForm);
  const [plan, setPlan] = useState<PlanDto | null>(null);
  const [hosts, setHosts] = useState<RemoteHost[]>([]);
  useEffect(() => {
    call(api.listHosts()).then(setHosts).catch(() => setHosts([]));
  }, []);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const installs = useInstalls(setError, onInfoChanged);
  const set = (patch: Partial<WizardForm>) => setForm((f) => ({ ...f, ...patch }));

  const parsed = useMemo(() => toRequest(form), [form]);
  const parseError = "field" in parsed && "message" in parsed && !("model" in parsed) ? (parsed as FieldError) : null;

  useEffect(() => {
    if (parseError) {
      setPlan(null);
      return;
    }
    let stale = false;
    const t = setTimeout(() => {
      call(api.plan(parsed as Parameters<typeof api.plan>[0]))
        .then((p) => {
          if (stale) return;
          setPlan(p);
          setError(null);
        })
        .catch((e) => !stale && setError(e));
    }, 150);
    return () => {
      stale = true;
      clearTimeout(t);
    };
  }, [JSON.stringify(parsed)]);

  const messages = useMemo(() => messagesByField(plan?.rejected ?? []), [plan]);

  async function start() {
    if (parseError) return;
    setBusy(true);
    setError(null);
    try {
      const request = parsed as SweepRequest;
      // Releases ticked and not installed: made first, shown as an install;
      // the ones removed over the disk budget, and the ones kept over it
      // because something uses them, are said in the queue.
      let budget: string[] = [];
      if ((plan?.to_install ?? []).length > 0) {
        const made = await installs.installReleases(request.framework);
        if (made === null) return;
        budget = budgetNotices(made);
      }
      const started = await call(api.startSweep(request as Parameters<typeof api.startSweep>[0], true));
      onStarted(started.run_ids, budget);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  }

  // Ctrl+Enter (⌘+Enter) starts, as the Start button would.
  useKeydown((e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey) && !busy && parseError === null && canStart(plan)) {
      e.preventDefault();
      start();
    }
  });

  return { form, set, plan, hosts, error, setError, busy, parsed, parseError, messages, start, ...installs };
}
