// What the winner of a search means for a real training: an epoch here
// (measured), and the winner on the GPUs of the peak table — projected,
// never measured, and said so on every row.
import type { Band, Outlook } from "../api";
import { num } from "../lib/format";
import { span } from "../lib/tune";

/** A projected band's ends in words, or null when it has none. */
function range(b: Band | null, say: (v: number) => string): string | null {
  if (!b || b.low === null || b.high === null) return null;
  return `${say(b.low)} – ${say(b.high)}`;
}

export function TuneOutlook({ outlook }: { outlook: Outlook | null }) {
  if (!outlook) return null;
  return (
    <div class="tune-outlook" id="tune-outlook">
      {outlook.epoch_s !== null && (
        <p>
          An epoch here: <strong>{span(outlook.epoch_s)}</strong>
          {outlook.cost_per_epoch_usd !== null ? `, $${outlook.cost_per_epoch_usd.toFixed(4)}` : ""}, from run #{outlook.run_id}'s measured throughput.
        </p>
      )}
      {outlook.epoch_basis && <p class="hint">The epoch: {outlook.epoch_basis}.</p>}
      {outlook.projected.length > 0 && (
        <details>
          <summary>
            On other GPUs — <strong>projected</strong>, not measured
          </summary>
          <table class="plain">
            <thead>
              <tr>
                <th>GPU</th>
                <th>samples/s (projected)</th>
                <th>an epoch (projected)</th>
                <th>cost per epoch (projected)</th>
              </tr>
            </thead>
            <tbody>
              {outlook.projected.map((p) => (
                <tr key={p.to} data-gpu={p.to} title={p.method}>
                  <td>{p.to}</td>
                  <td class="num">
                    {num(p.samples_per_s.low)} – {num(p.samples_per_s.high)}
                  </td>
                  <td class="num">{range(p.epoch_s, span) ?? "—"}</td>
                  <td class="num">{range(p.cost_per_epoch_usd, (c) => `$${c.toFixed(4)}`) ?? p.price}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <p class="hint">Each row's method is in its tooltip; `trainbench project {outlook.run_id} --gpu NAME` says it in full.</p>
        </details>
      )}
    </div>
  );
}
