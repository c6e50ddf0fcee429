//! Public reference facts shipped with the studio (`data/*.csv`, copied from
//! the project's shared reference folder): dense GPU peaks for MFU and default
//! cloud prices for cost per epoch. Prices are only defaults: the store keeps
//! an editable table seeded from them.

use serde::{Deserialize, Serialize};

use crate::spec::{Precision, SpecError};

const GPU_PEAKS_CSV: &str = include_str!("../../../data/gpu_peaks.csv");
const CLOUD_PRICES_CSV: &str = include_str!("../../../data/cloud_prices.csv");

/// Splits one CSV record (RFC 4180 quoting, no embedded newlines).
pub fn split_csv_line(line: &str) -> Vec<String> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            ('"', true) => quoted = false,
            ('"', false) if field.is_empty() => quoted = true,
            (',', false) => fields.push(std::mem::take(&mut field)),
            (c, _) => field.push(c),
        }
    }
    fields.push(field);
    fields
}

/// Dense peak throughput of one GPU model, TFLOP/s.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct GpuPeak {
    pub device: String,
    pub fp32_tflops: f64,
    pub tf32_tflops: f64,
    pub bf16_tflops: f64,
    pub fp16_tflops: f64,
    /// Device memory, GB, and its bandwidth, TB/s (for projections).
    pub memory_gb: f64,
    pub memory_bandwidth_tb_s: f64,
    pub source: String,
    /// The board's power limit, W (the datasheet's maximum TDP).
    pub board_power_w: f64,
}

impl GpuPeak {
    pub fn tflops(&self, p: Precision) -> f64 {
        match p {
            Precision::Fp32 => self.fp32_tflops,
            Precision::Tf32 => self.tf32_tflops,
            Precision::AmpBf16 => self.bf16_tflops,
            Precision::AmpFp16 => self.fp16_tflops,
        }
    }
}

pub fn gpu_peaks() -> Vec<GpuPeak> {
    GPU_PEAKS_CSV
        .lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .filter_map(|l| {
            let f = split_csv_line(l);
            let num = |i: usize| f.get(i).and_then(|v| v.trim().parse::<f64>().ok());
            Some(GpuPeak {
                device: f.first()?.clone(),
                fp32_tflops: num(1)?,
                tf32_tflops: num(2)?,
                bf16_tflops: num(3)?,
                fp16_tflops: num(4)?,
                memory_gb: num(5)?,
                memory_bandwidth_tb_s: num(6)?,
                source: f.get(7).cloned().unwrap_or_default(),
                board_power_w: num(8)?,
            })
        })
        .collect()
}

/// Finds the peak row for a device name as NVML reports it (for example
/// "NVIDIA H100 80GB HBM3" → "H100 SXM"), or as the table names it. `None`:
/// unknown device — MFU is then not computed rather than guessed. A variant
/// the table has no row for is unknown too, not its neighbour's row: an RTX
/// 3090 Ti or 4090 D (other peaks), a laptop's chip, an A100 PCIe with
/// 40 GB, an H200 NVL (a lower power limit and peaks), a GH200 or GB200
/// (another memory and power).
pub fn gpu_peak_for(name: &str) -> Option<GpuPeak> {
    let peaks = gpu_peaks();
    if let Some(p) = peaks
        .iter()
        .find(|p| p.device.eq_ignore_ascii_case(name.trim()))
    {
        return Some(p.clone());
    }
    let upper = name.to_uppercase();
    let words: Vec<&str> = upper
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let has = |w: &str| words.contains(&w);
    let pick = |device: &str| peaks.iter().find(|p| p.device == device).cloned();
    if ["GH200", "GB200", "TI", "D", "LAPTOP", "MOBILE", "MAX"]
        .iter()
        .any(|w| has(w))
    {
        return None;
    }
    if has("H200") {
        return if has("NVL") { None } else { pick("H200") };
    }
    if has("B200") {
        return pick("B200");
    }
    if has("H100") {
        return if has("PCIE") {
            pick("H100 PCIe")
        } else if has("NVL") {
            pick("H100 NVL")
        } else {
            pick("H100 SXM")
        };
    }
    if has("A100") {
        return match (has("PCIE"), has("80GB")) {
            (true, true) => pick("A100 PCIe 80GB"),
            (true, false) => None,
            (false, true) => pick("A100 SXM 80GB"),
            (false, false) => pick("A100 SXM 40GB"),
        };
    }
    if has("L40S") {
        return pick("L40S");
    }
    if has("4090") {
        return pick("RTX 4090");
    }
    if has("3090") {
        return pick("RTX 3090");
    }
    None
}

/// A price row for cost per epoch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct PriceRow {
    pub offering: String,
    pub devices: u32,
    pub device: String,
    pub usd_per_hour: f64,
    pub usd_per_device_hour: f64,
    pub as_of: String,
    pub source: String,
}

/// Most devices one price row may stand for (a multi-node offering).
pub const MAX_PRICE_DEVICES: u32 = 1024;
/// A device-hour at or above this is a typo, not a price (US dollars).
pub const MAX_USD_PER_DEVICE_HOUR: f64 = 10_000.0;

impl PriceRow {
    /// Whether the offering's device is a CPU (its device names one); any
    /// other offering applied to a CPU run is flagged.
    pub fn is_for_cpu(&self) -> bool {
        self.device.to_lowercase().contains("cpu")
    }

    /// The one rule set for a price a person enters, whether through
    /// `trainbench prices add|edit` or the app's settings: a name, 1 to
    /// [`MAX_PRICE_DEVICES`] devices, a device, prices above 0 and below
    /// [`MAX_USD_PER_DEVICE_HOUR`] per device-hour (the whole offering's
    /// hour below that × devices), a source, and the date the price was true
    /// as `YYYY-MM-DD` or `YYYY-MM` (price lists are often dated by month).
    pub fn validate(&self) -> Result<(), SpecError> {
        let nonempty = |field: &str, v: &str, allowed: &str| {
            if v.trim().is_empty() {
                Err(SpecError::new(field, "(empty)", allowed))
            } else {
                Ok(())
            }
        };
        nonempty("offering", &self.offering, "a name for the offering")?;
        if self.devices == 0 || self.devices > MAX_PRICE_DEVICES {
            return Err(SpecError::new(
                "devices",
                self.devices,
                &format!("a whole number from 1 to {MAX_PRICE_DEVICES}"),
            ));
        }
        nonempty("device", &self.device, "the device the offering rents")?;
        let in_range = |v: f64, max: f64| v.is_finite() && v > 0.0 && v < max;
        let max_hour = MAX_USD_PER_DEVICE_HOUR * f64::from(self.devices);
        if !in_range(self.usd_per_hour, max_hour) {
            return Err(SpecError::new(
                "usd_per_hour",
                self.usd_per_hour,
                &format!(
                    "a price in US dollars above 0 and below {max_hour:.0} (10,000 per device-hour × {} devices)",
                    self.devices
                ),
            ));
        }
        if !in_range(self.usd_per_device_hour, MAX_USD_PER_DEVICE_HOUR) {
            return Err(SpecError::new(
                "usd_per_device_hour",
                self.usd_per_device_hour,
                "a price in US dollars above 0 and below 10,000 per device-hour",
            ));
        }
        nonempty(
            "source",
            &self.source,
            "where the price comes from (a URL or a document)",
        )?;
        if !is_price_date(&self.as_of) {
            return Err(SpecError::new(
                "as_of",
                &self.as_of,
                "a date as YYYY-MM-DD or YYYY-MM",
            ));
        }
        Ok(())
    }
}

/// `YYYY-MM-DD` (a day that exists) or `YYYY-MM`.
fn is_price_date(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    let number = |p: &str, len: usize| {
        (p.len() == len && p.bytes().all(|b| b.is_ascii_digit()))
            .then(|| p.parse::<u32>().ok())
            .flatten()
    };
    let (year, month) = match parts.as_slice() {
        [y, m] | [y, m, _] => match (number(y, 4), number(m, 2)) {
            (Some(y), Some(m)) if (1..=12).contains(&m) => (y, m),
            _ => return false,
        },
        _ => return false,
    };
    match parts.get(2) {
        None => true,
        Some(d) => {
            let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
            let days = match month {
                2 if leap => 29,
                2 => 28,
                4 | 6 | 9 | 11 => 30,
                _ => 31,
            };
            number(d, 2).is_some_and(|d| (1..=days).contains(&d))
        }
    }
}

/// The default price table (user-editable once in the store).
pub fn default_prices() -> Vec<PriceRow> {
    CLOUD_PRICES_CSV
        .lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .filter_map(|l| {
            let f = split_csv_line(l);
            Some(PriceRow {
                offering: f.first()?.clone(),
                devices: f.get(1)?.trim().parse().ok()?,
                device: f.get(2)?.clone(),
                usd_per_hour: f.get(3)?.trim().parse().ok()?,
                usd_per_device_hour: f.get(4)?.trim().parse().ok()?,
                as_of: f.get(5)?.clone(),
                source: f.get(6)?.clone(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_tables_parse() {
        let peaks = gpu_peaks();
        // Every row parses whole (a row with a missing figure is dropped).
        assert_eq!(
            peaks.len(),
            GPU_PEAKS_CSV
                .lines()
                .skip(1)
                .filter(|l| !l.trim().is_empty())
                .count()
        );
        assert_eq!(peaks.len(), 11);
        assert!(peaks
            .iter()
            .all(|p| p.board_power_w > 0.0 && p.memory_bandwidth_tb_s > 0.0));
        assert_eq!(
            gpu_peak_for("NVIDIA B200").map(|p| p.bf16_tflops),
            Some(2250.0)
        );
        assert_eq!(
            gpu_peak_for("NVIDIA GeForce RTX 3090").map(|p| p.device),
            Some("RTX 3090".into())
        );
        assert_eq!(
            gpu_peak_for("NVIDIA H100 80GB HBM3").map(|p| p.bf16_tflops),
            Some(989.0)
        );
        assert_eq!(
            gpu_peak_for("NVIDIA A100-SXM4-80GB").map(|p| p.device),
            Some("A100 SXM 80GB".into())
        );
        assert_eq!(gpu_peak_for("Tesla T4"), None);
        // NVML's names and the table's own find their rows …
        for (name, row) in [
            ("NVIDIA A100-SXM4-40GB", "A100 SXM 40GB"),
            ("NVIDIA A100 80GB PCIe", "A100 PCIe 80GB"),
            ("NVIDIA H100 PCIe", "H100 PCIe"),
            ("NVIDIA H100 NVL", "H100 NVL"),
            ("NVIDIA H200", "H200"),
            ("NVIDIA GeForce RTX 4090", "RTX 4090"),
            ("NVIDIA L40S", "L40S"),
            ("a100 pcie 80gb", "A100 PCIe 80GB"),
        ] {
            assert_eq!(
                gpu_peak_for(name).map(|p| p.device),
                Some(row.into()),
                "{name}"
            );
        }
        // … and a variant with other peaks, memory or power is unknown, not
        // its neighbour's row.
        for name in [
            "NVIDIA GeForce RTX 3090 Ti",
            "NVIDIA GeForce RTX 4090 D",
            "NVIDIA GeForce RTX 4090 Laptop GPU",
            "NVIDIA A100-PCIE-40GB",
            "NVIDIA H200 NVL",
            "NVIDIA GH200 480GB",
            "NVIDIA GB200",
        ] {
            assert_eq!(gpu_peak_for(name), None, "{name}");
        }
        let prices = default_prices();
        assert_eq!(prices.len(), 4);
        // Every bundled price carries a date and a source, and passes the
        // rules a person's price must.
        for p in &prices {
            assert!(p.as_of.starts_with("20"), "{p:?}");
            assert!(!p.source.trim().is_empty(), "{p:?}");
            p.validate().unwrap_or_else(|e| panic!("{p:?}: {e}"));
        }
        assert_eq!(prices[0].usd_per_device_hour, 12.29);
        assert!(
            prices[0].source.contains("45%"),
            "quoted comma kept: {}",
            prices[0].source
        );
    }

    #[test]
    fn one_price_rule() {
        let ok = PriceRow {
            offering: "My lab 4x L40S".into(),
            devices: 4,
            device: "L40S".into(),
            usd_per_hour: 6.0,
            usd_per_device_hour: 1.5,
            as_of: "2026-11".into(),
            source: "our invoice".into(),
        };
        assert_eq!(ok.validate(), Ok(()));
        let with = |f: &dyn Fn(&mut PriceRow)| {
            let mut r = ok.clone();
            f(&mut r);
            r.validate().map_err(|e| (e.field.clone(), e.to_string()))
        };
        assert_eq!(with(&|r| r.as_of = "2024-02-29".into()), Ok(()));
        for (date, good) in [
            ("2026-11-01", true),
            ("2023-02-29", false),
            ("2026-13", false),
            ("2026-1", false),
            ("last week", false),
            ("undated", false),
            ("2026-11-31", false),
        ] {
            assert_eq!(
                with(&|r| r.as_of = date.into()).is_ok(),
                good,
                "as_of = {date}"
            );
        }
        let (field, message) = with(&|r| r.usd_per_hour = 0.0).unwrap_err();
        assert_eq!(field, "usd_per_hour");
        assert!(
            message.contains("usd_per_hour = 0 is not allowed"),
            "{message}"
        );
        assert!(message.contains("above 0"), "{message}");
        assert_eq!(
            with(&|r| r.usd_per_device_hour = -1.0).unwrap_err().0,
            "usd_per_device_hour"
        );
        assert_eq!(
            with(&|r| r.usd_per_device_hour = f64::NAN).unwrap_err().0,
            "usd_per_device_hour"
        );
        // The whole offering may cost 10,000 × devices an hour, no more.
        assert_eq!(with(&|r| r.usd_per_hour = 39_999.0), Ok(()));
        assert_eq!(
            with(&|r| r.usd_per_hour = 40_000.0).unwrap_err().0,
            "usd_per_hour"
        );
        assert_eq!(with(&|r| r.devices = 0).unwrap_err().0, "devices");
        assert_eq!(with(&|r| r.devices = 1025).unwrap_err().0, "devices");
        assert_eq!(
            with(&|r| r.offering = "  ".into()).unwrap_err().0,
            "offering"
        );
        assert_eq!(with(&|r| r.source = String::new()).unwrap_err().0, "source");
        assert_eq!(with(&|r| r.device = String::new()).unwrap_err().0, "device");
    }

    #[test]
    fn csv_quotes() {
        assert_eq!(
            split_csv_line(r#"a,"b,c","d""e""#),
            vec!["a", "b,c", r#"d"e"#]
        );
    }
}
