// The price form: the device-hour price derived unless given.
import { describe, expect, it } from "vitest";
import { emptyPriceForm, priceForm, priceRow } from "../src/lib/prices";

const form = { ...emptyPriceForm(), offering: "Lab, 4× L40S", device: "L40S", devices: "4", usdPerHour: "6", asOf: "2026-11", source: "invoice" };

describe("price form", () => {
  it("derives the device-hour price from the price per hour and the devices", () => {
    expect(priceRow(form)).toMatchObject({ devices: 4, usd_per_hour: 6, usd_per_device_hour: 1.5 });
    expect(priceRow({ ...form, usdPerDeviceHour: "1.4" })).toMatchObject({ usd_per_device_hour: 1.4 });
  });

  it("names the field that cannot be read", () => {
    expect(priceRow({ ...form, devices: "0" })).toMatchObject({ field: "devices" });
    expect(priceRow({ ...form, devices: "2.5" })).toMatchObject({ field: "devices" });
    expect(priceRow({ ...form, usdPerHour: "" })).toMatchObject({ field: "usd_per_hour" });
    expect(priceRow({ ...form, usdPerDeviceHour: "free" })).toMatchObject({ field: "usd_per_device_hour" });
  });

  it("opens a stored row with its device-hour price left derived when it is", () => {
    const row = { offering: "x", device: "H100", devices: 8, usd_per_hour: 98.32, usd_per_device_hour: 12.5, as_of: "2023-07", source: "s" };
    expect(priceForm(row).usdPerDeviceHour).toBe("12.5");
    expect(priceForm({ ...row, usd_per_device_hour: 98.32 / 8 }).usdPerDeviceHour).toBe("");
  });
});
