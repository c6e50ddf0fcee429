//! Public reference facts shipped with the studio (`data/*.csv`, copied from
//! the project's shared reference folder): dense GPU peaks for MFU and default
//! cloud prices for cost per epoch. Prices are only defaults: the store keeps
//! an editable table seeded from them.

use serde::{Deserialize, Serialize};

use crate::spec::Precision;

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
    pub source: String,
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
                source: f.get(7).cloned().unwrap_or_default(),
            })
        })
        .collect()
}

/// Finds the peak row for a device name as NVML reports it (for example
/// "NVIDIA H100 80GB HBM3" → "H100 SXM"). `None`: unknown device — MFU is then
/// not computed rather than guessed.
pub fn gpu_peak_for(name: &str) -> Option<GpuPeak> {
    let n = name.to_uppercase();
    let peaks = gpu_peaks();
    let pick = |device: &str| peaks.iter().find(|p| p.device == device).cloned();
    if n.contains("H200") {
        return pick("H200");
    }
    if n.contains("H100") {
        return if n.contains("PCIE") {
            pick("H100 PCIe")
        } else if n.contains("NVL") {
            pick("H100 NVL")
        } else {
            pick("H100 SXM")
        };
    }
    if n.contains("A100") {
        return if n.contains("PCIE") {
            pick("A100 PCIe 80GB")
        } else if n.contains("80GB") {
            pick("A100 SXM 80GB")
        } else {
            pick("A100 SXM 40GB")
        };
    }
    if n.contains("L40S") {
        return pick("L40S");
    }
    if n.contains("4090") {
        return pick("RTX 4090");
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
        assert_eq!(peaks.len(), 9);
        assert_eq!(
            gpu_peak_for("NVIDIA H100 80GB HBM3").map(|p| p.bf16_tflops),
            Some(989.0)
        );
        assert_eq!(
            gpu_peak_for("NVIDIA A100-SXM4-80GB").map(|p| p.device),
            Some("A100 SXM 80GB".into())
        );
        assert_eq!(gpu_peak_for("Tesla T4"), None);
        let prices = default_prices();
        assert_eq!(prices.len(), 5);
        assert_eq!(prices[0].usd_per_device_hour, 12.29);
        assert!(
            prices[0].source.contains("45%"),
            "quoted comma kept: {}",
            prices[0].source
        );
    }

    #[test]
    fn csv_quotes() {
        assert_eq!(
            split_csv_line(r#"a,"b,c","d""e""#),
            vec!["a", "b,c", r#"d"e"#]
        );
    }
}
