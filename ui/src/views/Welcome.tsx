// The first screen on an empty database: what the studio measures, the quick
// benchmark in one click, and once it has finished the suggested second run,
// whose end opens the comparison of the two. The runs are the backend's
// (`first_run`: the same quick benchmark as `trainbench run`).
import { useEffect, useState } from "preact/hooks";
import { api, call, type AppInfo, type NextRun, type SweepRequest } from "../api";
import { count } from "../lib/format";
import { ErrorBox } from "./common";
import { LiveView } from "./Queue";

/** Where the newcomer's path stands; kept by the app while other views are open. */
export interface WelcomeState {
  first: { runId: number; request: SweepRequest; status: string | null } | null;
  second: { runId: number; title: string; status: string | null } | null;
}

export const startWelcome = (): WelcomeState => ({ first: null, second: null });

interface Props {
  info: AppInfo;
  state: WelcomeState;
  onState: (s: WelcomeState) => void;
  onOpenRun: (id: number) => void;
  onCompare: (ids: number[]) => void;
  onWizard: () => void;
}

function Measures() {
  return (
    <ul class="measures">
      <li>
        <strong>Throughput</strong> — samples trained per second once the warm-up is over, with a range saying how sure the figure is.
      </li>
      <li>
        <strong>Memory</strong> — the most the framework held for tensors, and what the whole process used.
      </li>
      <li>
        <strong>Time to accuracy</strong> — how long training took until the held-out accuracy reached a target.
      </li>
      <li>
        <strong>Cost and energy</strong> — per epoch at a cloud price you choose, and joules per sample where the GPU reports its power.
      </li>
      <li>
        <strong>MFU</strong> (model FLOPs utilisation) — the share of the GPU's peak arithmetic the training used.
      </li>
    </ul>
  );
}

interface FirstProps {
  quick: SweepRequest | null;
  model: AppInfo["models"][number] | undefined;
  framework: AppInfo["frameworks"][number] | undefined;
  first: WelcomeState["first"];
  busy: boolean;
  onRun: () => void;
  onOpenRun: (id: number) => void;
  onFinished: (status: string) => void;
  onTryAgain: () => void;
}

/** Step 1: the quick benchmark, then its live view, and Try again if it did not complete. */
function FirstStep({ quick, model, framework, first, busy, onRun, onOpenRun, onFinished, onTryAgain }: FirstProps) {
  return (
    <section class="step-card" data-step="1">
      <h3>1. The quick benchmark</h3>
      <p>
        A small convolutional network ({quick?.model[0] ?? "resnet_mini"}
        {model ? `, ${count(model.param_count)} parameters` : ""}) learns to read handwritten digits from the MNIST sample until 95 % of the digits it has not
        trained on are read right — about a minute on a CPU
        {framework ? `, in ${framework.title}` : ""}.
      </p>
      {first === null ? (
        <button type="button" class="primary" id="quick-start" disabled={!quick || busy} onClick={onRun}>
          Run the quick benchmark
        </button>
      ) : (
        <LiveView runId={first.runId} onOpenRun={onOpenRun} onFinished={onFinished} />
      )}
      {first?.status && first.status !== "completed" && (
        <p>
          The run ended {first.status}; its log above says why.{" "}
          <button type="button" class="link" onClick={onTryAgain}>
            Try again
          </button>
        </p>
      )}
    </section>
  );
}

interface SecondProps {
  next: NextRun | null | undefined;
  second: WelcomeState["second"];
  busy: boolean;
  onRun: () => void;
  onOpenRun: (id: number) => void;
  onFinished: (status: string) => void;
  onWizard: () => void;
}

/** Step 2: the suggested second run (or why there is none), then its live view. */
function SecondStep({ next, second, busy, onRun, onOpenRun, onFinished, onWizard }: SecondProps) {
  return (
    <section class="step-card" data-step="2">
      <h3>2. A second run to compare with</h3>
      {next === undefined && <p>Finding a second run…</p>}
      {next === null && (
        <p>
          No second run applies here (one framework, already in bf16). Set one up in{" "}
          <button type="button" class="link" onClick={onWizard}>
            New benchmark
          </button>
          .
        </p>
      )}
      {next && (
        <>
          <p id="next-why">{next.why}</p>
          {second === null ? (
            <button type="button" class="primary" id="next-run" disabled={busy} onClick={onRun}>
              {next.title}
            </button>
          ) : (
            <LiveView runId={second.runId} onOpenRun={onOpenRun} onFinished={onFinished} />
          )}
        </>
      )}
    </section>
  );
}

export function Welcome({ info, state, onState, onOpenRun, onCompare, onWizard }: Props) {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [quick, setQuick] = useState<SweepRequest | null>(null);
  const [next, setNext] = useState<NextRun | null | undefined>(undefined);

  useEffect(() => {
    api.quickBenchmark().then(setQuick).catch(setError);
  }, []);
  const firstDone = state.first?.status === "completed";
  useEffect(() => {
    if (firstDone && state.first) api.suggestNextRun(state.first.request).then(setNext).catch(setError);
  }, [firstDone]);

  const model = info.models.find((m) => m.name === quick?.model[0]);
  const framework = info.frameworks.find((f) => f.key === quick?.framework[0]);

  async function start(request: SweepRequest): Promise<number | null> {
    setBusy(true);
    setError(null);
    try {
      const started = await call(api.startSweep(request, false));
      return started.run_ids[0] ?? null;
    } catch (e) {
      setError(e);
      return null;
    } finally {
      setBusy(false);
    }
  }

  async function runQuick() {
    if (!quick) return;
    const id = await start(quick);
    if (id !== null) onState({ first: { runId: id, request: quick, status: null }, second: null });
  }

  async function runNext() {
    if (!next || !state.first) return;
    const id = await start(next.request);
    if (id !== null) onState({ ...state, second: { runId: id, title: next.title, status: null } });
  }

  const { first, second } = state;
  return (
    <div class="view welcome">
      <h2>Welcome to TrainBench Studio</h2>
      <p>
        The studio trains models in the frameworks you choose — on this machine, a remote host or a Slurm cluster — and measures each run the same way, so the
        figures can be compared. For every run it stores:
      </p>
      <Measures />
      <ErrorBox error={error} onClose={() => setError(null)} />
      <FirstStep
        quick={quick}
        model={model}
        framework={framework}
        first={first}
        busy={busy}
        onRun={runQuick}
        onOpenRun={onOpenRun}
        onFinished={(status) => first?.status === null && onState({ ...state, first: { ...first, status } })}
        onTryAgain={() => onState(startWelcome())}
      />
      {firstDone && (
        <SecondStep
          next={next}
          second={second}
          busy={busy}
          onRun={runNext}
          onOpenRun={onOpenRun}
          onFinished={(status) => {
            // Once: coming back to this view finds the run finished again.
            if (second === null || second.status !== null) return;
            onState({ ...state, second: { ...second, status } });
            if (status === "completed") onCompare([first?.runId ?? 0, second.runId]);
          }}
          onWizard={onWizard}
        />
      )}
      <p class="hint">
        Or set up your own benchmark — any model, framework, precision and batch size — in{" "}
        <button type="button" class="link" onClick={onWizard}>
          New benchmark
        </button>
        .
      </p>
    </div>
  );
}
