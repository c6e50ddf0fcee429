// New benchmark: choose models, frameworks, precisions, devices … Several
// values make a sweep; the backend's verdict (the same rules as the CLI's)
// shows the run count and flags combinations that cannot run, per field.
// Each section of the form is its own component (wizard/), grouped in
// folding sections whose folded line says what they hold; the plan's summary
// and Start stay in view below (a sticky footer). The state they share is
// useWizard's.
import type { AppInfo, SweepRequest } from "../api";
import { BisectPanel } from "./BisectPanel";
import { TunePanel } from "./TunePanel";
import { FrameworkSection } from "./wizard/FrameworkSection";
import { WizardGroup } from "./wizard/Group";
import { CompileSection, DevicesSection, PrecisionSection } from "./wizard/Hardware";
import { ModelSection } from "./wizard/ModelSection";
import { PriceSection } from "./wizard/PriceSection";
import { StartFooter } from "./wizard/StartFooter";
import { RepeatsSection, TargetAccuracySection, TargetLossSection } from "./wizard/Targets";
import { CudnnSection, EnvSection, ProfileSection, ThreadsSection } from "./wizard/Tuning";
import { useWizard, type WizardProps } from "./wizard/useWizard";
import { BatchSection, DataSection, LengthSection, MemoryLimitSection, RunOnSection } from "./wizard/Workload";

export { FieldMessages } from "./wizard/fields";
export { PlanSummary } from "./wizard/StartFooter";

interface Props extends WizardProps {
  info: AppInfo;
}

export function Wizard({ info, onStarted, onInfoChanged }: Props) {
  const w = useWizard({ onStarted, onInfoChanged });
  const { form, set, messages, parsed, parseError } = w;
  const fields = { form, set, messages };

  return (
    <div class="view wizard">
      <h2>New benchmark</h2>
      <WizardGroup id="model" title="Model" form={form}>
        <ModelSection models={info.models} {...fields} />
      </WizardGroup>

      <WizardGroup id="frameworks" title="Frameworks" form={form}>
        <FrameworkSection frameworks={info.frameworks} {...fields} installing={w.installing} onInstall={w.install} onCancelInstall={w.cancelInstall} />
      </WizardGroup>

      <WizardGroup id="hardware" title="Precision, compile mode and devices" form={form}>
        <div class="row">
          <PrecisionSection precisions={info.precisions} {...fields} />
          <CompileSection modes={info.compile_modes} {...fields} />
          <DevicesSection machine={info.machine} {...fields} />
        </div>
      </WizardGroup>

      <WizardGroup id="workload" title="Batch, data, length and where it runs" form={form}>
        <div class="row">
          <BatchSection {...fields} />
          <MemoryLimitSection {...fields} />
          <RunOnSection hosts={w.hosts} {...fields} />
          <DataSection sources={info.data_sources} {...fields} />
          <LengthSection {...fields} />
        </div>
      </WizardGroup>

      <WizardGroup id="measuring" title="Targets, repeats and tuning" form={form}>
        <div class="row">
          <TargetAccuracySection {...fields} />
          <TargetLossSection {...fields} />
          <RepeatsSection {...fields} />
          <ThreadsSection {...fields} />
          <CudnnSection {...fields} />
          <EnvSection {...fields} />
          <ProfileSection {...fields} />
        </div>
      </WizardGroup>

      <WizardGroup id="price" title="Price" form={form}>
        <div class="row">
          <PriceSection prices={info.prices} {...fields} />
        </div>
      </WizardGroup>

      <StartFooter
        plan={w.plan}
        parseError={parseError}
        messages={messages}
        error={w.error}
        onCloseError={() => w.setError(null)}
        searching={w.busy && "batch_max" in parsed && parsed.batch_max === true}
        busy={w.busy}
        onStart={w.start}
      />
      <TunePanel base={parseError ? null : (parsed as SweepRequest)} />
      <BisectPanel base={parseError ? null : (parsed as SweepRequest)} />
    </div>
  );
}
