// The wizard's price: a cloud offering for the cost per epoch, and the epoch
// size that prices synthetic data.
import type { AppInfo } from "../../api";
import { FieldMessages, type SectionProps } from "./fields";

export function PriceSection({ prices, form, set, messages }: SectionProps & { prices: AppInfo["prices"] }) {
  return (
    <section>
      <h3>
        <label for="price">Price</label>
      </h3>
      <select id="price" name="price" value={form.price} onChange={(e) => set({ price: e.currentTarget.value })}>
        <option value="">none (no cost per epoch)</option>
        {prices.map((p) => (
          <option key={p.offering} value={p.offering}>
            {p.offering} — ${(p.usd_per_hour ?? 0).toFixed(2)}/h ({p.as_of})
          </option>
        ))}
      </select>
      <FieldMessages field="price" messages={messages} />
      {form.price !== "" && form.data === "synthetic" && (
        <label class="epoch-size">
          Epoch size (samples){" "}
          <input
            id="epoch-size"
            name="epoch_size"
            inputmode="numeric"
            placeholder="ImageNet-1k: 1281167"
            value={form.epochSize}
            onInput={(e) => set({ epochSize: e.currentTarget.value })}
          />
          <span class="hint">
            Synthetic data has no size of its own: cost per epoch is projected for this many samples at the measured throughput. Left empty, an image
            model is priced for ImageNet-1k's 1,281,167 training images and a text model gets no cost per epoch. A real data set is priced for its own
            size.
          </span>
        </label>
      )}
      <FieldMessages field="epoch_size" messages={messages} />
    </section>
  );
}
