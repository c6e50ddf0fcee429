// The price table cost per epoch is computed from: add (the price per hour
// and the device count are enough), edit, delete (asks first; the backend
// refuses a price that stored runs are costed by).
import { useEffect, useState } from "preact/hooks";
import { api, call, type PriceEntry } from "../api";
import { emptyPriceForm, priceForm, priceRow, type PriceForm } from "../lib/prices";
import { Confirm, ErrorBox } from "./common";

export function Prices({ onChanged }: { onChanged: () => void }) {
  const [prices, setPrices] = useState<PriceEntry[]>([]);
  const [edit, setEdit] = useState<PriceForm | null>(null);
  const [deleting, setDeleting] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    call(api.prices()).then(setPrices).catch(setError);
  }, []);

  const parsed = edit ? priceRow(edit) : null;
  const problem = parsed && "field" in parsed && !("offering" in parsed) ? parsed : null;

  async function change(work: () => Promise<PriceEntry[]>) {
    try {
      setPrices(await work());
      setEdit(null);
      setError(null);
      onChanged();
    } catch (e) {
      setError(e);
    }
  }

  const field = (k: keyof PriceForm, label: string, placeholder = "") => (
    <label>
      {label}
      <input name={k} value={edit?.[k] ?? ""} placeholder={placeholder} onInput={(e) => setEdit((p) => (p ? { ...p, [k]: e.currentTarget.value } : p))} />
    </label>
  );

  return (
    <section>
      <h3>Price table</h3>
      <p class="hint">Cost per epoch = epoch time × the offering's price per device-hour × the devices a run uses.</p>
      <ErrorBox error={error} onClose={() => setError(null)} />
      <button type="button" id="add-price" onClick={() => setEdit(emptyPriceForm())}>
        Add a price
      </button>
      {edit && (
        <form
          class="price-form"
          onSubmit={(e) => {
            e.preventDefault();
            if (parsed && !problem) change(() => call(api.savePrice(parsed as Parameters<typeof api.savePrice>[0])));
          }}
        >
          {field("offering", "Offering", "Lab cluster, 4× L40S")}
          {field("device", "Device", "L40S")}
          {field("devices", "Devices")}
          {field("usdPerHour", "USD per hour (whole offering)")}
          {field("usdPerDeviceHour", "USD per device-hour", "per hour ÷ devices")}
          {field("asOf", "As of (YYYY-MM-DD or YYYY-MM)")}
          {field("source", "Source", "invoice, price page …")}
          <p class="hint" id="price-derived">
            {problem ? problem.message : parsed && "usd_per_device_hour" in parsed ? `= $${parsed.usd_per_device_hour.toFixed(4)} per device-hour` : ""}
          </p>
          <button type="submit" class="primary" disabled={problem !== null}>
            Save price
          </button>
          <button type="button" onClick={() => setEdit(null)}>
            Cancel
          </button>
        </form>
      )}
      {deleting !== null && (
        <Confirm
          text={`Delete the price “${deleting}”? Runs already costed by it keep it: the studio refuses while any stored run uses it.`}
          yes="Delete price"
          onYes={() => {
            const offering = deleting;
            setDeleting(null);
            change(() => call(api.deletePrice(offering)));
          }}
          onNo={() => setDeleting(null)}
        />
      )}
      <table class="prices">
        <thead>
          <tr>
            <th>Offering</th>
            <th>Device</th>
            <th>USD/h</th>
            <th>USD/device-h</th>
            <th>As of</th>
            <th>Source</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {prices.map((p) => (
            <tr key={p.row.offering} data-offering={p.row.offering}>
              <td>
                {p.row.offering}
                {p.by_user && <span class="hint"> (yours)</span>}
              </td>
              <td>
                {p.row.devices} × {p.row.device}
              </td>
              <td class="num">{p.row.usd_per_hour?.toFixed(2) ?? "—"}</td>
              <td class="num">{p.row.usd_per_device_hour?.toFixed(2) ?? "—"}</td>
              <td>{p.row.as_of}</td>
              <td class="source">{p.row.source}</td>
              <td>
                <button type="button" class="small" onClick={() => setEdit(priceForm(p.row))}>
                  Edit
                </button>
                <button type="button" class="small danger" data-delete={p.row.offering} onClick={() => setDeleting(p.row.offering)}>
                  Delete…
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
