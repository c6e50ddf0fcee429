// The studio's window: a sidebar of views and the view itself. Errors are
// shown where they happen; a failing view never blanks the window.
import { useEffect, useState } from "preact/hooks";
import { listen } from "@tauri-apps/api/event";
import { getCurrentWindow } from "@tauri-apps/api/window";
import { api, call, type AppInfo, type SavedSession } from "./api";
import { Boundary, Confirm, ErrorBox } from "./views/common";
import { Compare, type CompareState } from "./views/Compare";
import { DatabaseProblem } from "./views/DatabaseProblem";
import { Glossary } from "./views/Glossary";
import { setGlossary } from "./lib/glossary";
import { focusSearch, useKeydown } from "./lib/keys";
import { Queue } from "./views/Queue";
import { Runs } from "./views/Runs";
import { Sessions } from "./views/Sessions";
import { Settings } from "./views/Settings";
import { startWelcome, Welcome, type WelcomeState } from "./views/Welcome";
import { Wizard } from "./views/Wizard";

type ViewName = "welcome" | "wizard" | "queue" | "runs" | "compare" | "sessions" | "settings" | "glossary";

const NAV: [ViewName, string][] = [
  ["welcome", "Welcome"],
  ["wizard", "New benchmark"],
  ["queue", "Queue"],
  ["runs", "Runs"],
  ["compare", "Compare"],
  ["sessions", "Sessions"],
  ["settings", "Settings"],
  ["glossary", "Glossary"],
];

function applyTheme(theme: string) {
  document.documentElement.dataset.theme = theme;
}

/** The studio's description and settings (loaded again when they change), an
 * error loading them, and the window's close: how many runs it would cancel
 * (asked when the window is closed), and quitting. `setView` opens the first
 * view once the description has come. */
function useStudio(setView: (f: (v: ViewName | null) => ViewName | null) => void) {
  const [info, setInfo] = useState<AppInfo | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [closing, setClosing] = useState<number | null>(null);

  const loadInfo = () =>
    call(api.appInfo())
      .then((i) => {
        setGlossary(i.glossary);
        setInfo(i);
        // An empty database opens on the welcome view, one with runs on them.
        setView((v) => v ?? (i.runs_stored === 0 ? "welcome" : "runs"));
        applyTheme(i.settings.theme ?? "system");
      })
      .catch(setError);

  useEffect(() => {
    loadInfo();
    const un = listen("close-requested", async () => setClosing(await api.unfinishedRuns()));
    return () => {
      un.then((f) => f());
    };
  }, []);

  async function quit() {
    setClosing(null);
    await call(api.quit()).catch(setError);
    await getCurrentWindow().destroy();
  }

  return { info, error, setError, closing, setClosing, loadInfo, quit };
}

/** The sidebar: a button per view, and the machine. */
function Nav({ view, info, onView }: { view: ViewName | null; info: AppInfo | null; onView: (v: ViewName) => void }) {
  return (
    <nav>
      <h1>TrainBench Studio</h1>
      {NAV.map(([v, label]) => (
        <button type="button" key={v} id={`nav-${v}`} class={view === v ? "active" : ""} onClick={() => onView(v)}>
          {label}
        </button>
      ))}
      {info && (
        <p class="machine hint">
          {info.machine.hostname}
          <br />
          {info.machine.gpus.length > 0 ? `${info.machine.gpus.length} GPU(s)` : `CPU only, ${info.machine.cpu_cores} cores`}
          <br />v{info.version}
        </p>
      )}
    </nav>
  );
}

export function App() {
  const [view, setView] = useState<ViewName | null>(null);
  const [welcome, setWelcome] = useState<WelcomeState>(startWelcome);
  const [liveRun, setLiveRun] = useState<number | null>(null);
  const [queueNotices, setQueueNotices] = useState<string[]>([]);
  // What Start said is shown once: leaving the queue clears it.
  useEffect(() => {
    if (view !== "queue") setQueueNotices([]);
  }, [view]);
  const [openRun, setOpenRun] = useState<number | null>(null);
  const [compare, setCompare] = useState<CompareState | null>(null);
  const { info, error, setError, closing, setClosing, loadInfo, quit } = useStudio(setView);

  useKeydown(focusSearch);

  // Each view opens at its top.
  useEffect(() => {
    document.querySelector("main")?.scrollTo(0, 0);
  }, [view]);

  const defaultCharts = info?.charts ?? [];
  const openCompare = (ids: number[]) => {
    setCompare({ runIds: ids, grouping: "runs", baseline: ids[0] ?? null, charts: defaultCharts, hidden: [], session: null });
    setView("compare");
  };
  const openSession = (s: SavedSession) => {
    setCompare({ runIds: s.run_ids, grouping: s.settings.grouping, baseline: s.baseline_run_id, charts: s.settings.charts, hidden: s.settings.hidden_series ?? [], session: s });
    setView("compare");
  };

  return (
    <div class="app" data-ready={info && view ? "yes" : "no"} data-view={view ?? ""}>
      <Nav view={view} info={info} onView={setView} />
      <main>
        <ErrorBox error={error} onClose={() => setError(null)} />
        {closing !== null && (
          <Confirm
            text={`${closing} run(s) are queued or running. Close the studio and cancel them? Cancelled runs are stored as cancelled.`}
            yes="Cancel runs and close"
            onYes={quit}
            onNo={() => setClosing(null)}
          />
        )}
        {info?.database_problem && (
          <DatabaseProblem problem={info.database_problem} database={info.settings.database} onChosen={loadInfo} />
        )}
        {!info && !error && <p>Starting…</p>}
        {info && view && (
          <Boundary name={view} key={view}>
            {view === "welcome" && (
              <Welcome
                info={info}
                state={welcome}
                onState={setWelcome}
                onOpenRun={(id) => {
                  setOpenRun(id);
                  setView("runs");
                }}
                onCompare={openCompare}
                onWizard={() => setView("wizard")}
              />
            )}
            {view === "wizard" && (
              <Wizard
                info={info}
                onInfoChanged={loadInfo}
                onStarted={(ids, notices) => {
                  setLiveRun(ids[0] ?? null);
                  setQueueNotices(notices);
                  setView("queue");
                }}
              />
            )}
            {view === "queue" && (
              <Queue
                notices={queueNotices}
                selected={liveRun}
                onSelect={setLiveRun}
                onOpenRun={(id) => {
                  setOpenRun(id);
                  setView("runs");
                }}
              />
            )}
            {view === "runs" && <Runs openRun={openRun} onOpenRun={setOpenRun} onCompare={openCompare} onStart={setView} />}
            {view === "compare" && (
              <Compare
                state={compare ?? { runIds: [], grouping: "runs", baseline: null, charts: defaultCharts, hidden: [], session: null }}
                allCharts={defaultCharts}
                onChange={setCompare}
              />
            )}
            {view === "sessions" && <Sessions onOpen={openSession} />}
            {view === "settings" && <Settings info={info} onChanged={loadInfo} />}
            {view === "glossary" && <Glossary terms={info.glossary} />}
          </Boundary>
        )}
      </main>
    </div>
  );
}
