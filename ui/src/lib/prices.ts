// The price form: what a person types, turned into a price row. Only the
// offering's price per hour and its device count are needed; the price per
// device-hour is derived (as `trainbench prices add` does) unless given.
import type { PriceRow } from "../bindings";

export interface PriceForm {
  offering: string;
  device: string;
  devices: string;
  usdPerHour: string;
  /** "" = derived: per hour ÷ devices. */
  usdPerDeviceHour: string;
  asOf: string;
  source: string;
}

export const emptyPriceForm = (): PriceForm => ({ offering: "", device: "", devices: "1", usdPerHour: "", usdPerDeviceHour: "", asOf: new Date().toISOString().slice(0, 10), source: "" });

/** A stored row in the form, its device-hour price left derived when it is. */
export function priceForm(r: PriceRow): PriceForm {
  const perHour = r.usd_per_hour ?? null;
  const perDevice = r.usd_per_device_hour ?? null;
  const derived = perHour === null || perDevice === null || Math.abs(perHour / r.devices - perDevice) < 1e-9;
  return { offering: r.offering, device: r.device, devices: String(r.devices), usdPerHour: perHour === null ? "" : String(perHour), usdPerDeviceHour: derived ? "" : String(perDevice), asOf: r.as_of, source: r.source };
}

/** The row, or the first field that cannot be read (the backend checks the rest). */
export function priceRow(f: PriceForm): (PriceRow & { usd_per_hour: number; usd_per_device_hour: number }) | { field: string; message: string } {
  const devices = Number(f.devices.trim());
  if (!/^\d+$/.test(f.devices.trim()) || devices < 1) return { field: "devices", message: `devices = ${f.devices} is not allowed: expected a whole number ≥ 1` };
  const perHour = Number(f.usdPerHour.trim());
  if (f.usdPerHour.trim() === "" || !Number.isFinite(perHour) || perHour <= 0) return { field: "usd_per_hour", message: `usd_per_hour = ${f.usdPerHour} is not allowed: expected the offering's price per hour in USD, > 0` };
  let perDevice = perHour / devices;
  if (f.usdPerDeviceHour.trim() !== "") {
    perDevice = Number(f.usdPerDeviceHour.trim());
    if (!Number.isFinite(perDevice) || perDevice <= 0) return { field: "usd_per_device_hour", message: `usd_per_device_hour = ${f.usdPerDeviceHour} is not allowed: expected a number > 0, or empty for per hour ÷ devices` };
  }
  return { offering: f.offering.trim(), device: f.device.trim(), devices, usd_per_hour: perHour, usd_per_device_hour: perDevice, as_of: f.asOf.trim(), source: f.source.trim() };
}
