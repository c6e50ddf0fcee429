//! `trainbench models` (the catalogue), `trainbench describe` (one model
//! at the input asked for) and `trainbench glossary` (the studio's words).

use std::process::ExitCode;

use serde_json::{json, Value};
use trainbench_app::describe::DescribedModel;
use trainbench_app::glossary::{self, GLOSSARY};
use trainbench_app::models::catalogue;
use trainbench_core::models::{lookup, model_names, ModelConfig, ModelOptions};

use crate::error::{bad, CliError};

/// `1.2e9` as `1.2 G`, `86.6e6` as `86.6 M` (`B` for a billion parameters
/// with `billion`, as model cards write it).
fn si(x: f64, billion: &str) -> String {
    let (div, unit) = [(1e12, "T"), (1e9, billion), (1e6, "M"), (1e3, "k")]
        .into_iter()
        .find(|(d, _)| x >= *d)
        .unwrap_or((1.0, ""));
    format!("{:.1} {unit}", x / div)
}

/// `models --json`'s document (and `models --search TEXT --json`'s with `search`).
pub fn models_json(search: Option<&str>) -> Value {
    match search {
        None => json!({ "models": catalogue() }),
        Some(text) => json!(trainbench_app::models::search(text)),
    }
}

/// Every model a run can train: name, family, parameters, training FLOPs per
/// sample, whether it trains on a CPU, and its default input.
pub fn models(json_out: bool) -> Result<ExitCode, CliError> {
    let all = catalogue();
    if json_out {
        println!("{}", models_json(None));
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{:<26} {:<8} {:>11} {:>15}  {:<12} default input",
        "model (--model)", "family", "parameters", "FLOPs/sample", "on a CPU"
    );
    for m in &all {
        println!(
            "{:<26} {:<8} {:>11} {:>15}  {:<12} {}",
            m.name,
            m.family,
            si(m.param_count as f64, "B"),
            si(m.flops_per_sample, "G"),
            if m.cpu_friendly {
                "seconds"
            } else {
                "needs a GPU"
            },
            m.input
        );
    }
    println!(
        "FLOPs/sample: training work per sample (forward + backward: 6 × the forward pass's multiply-adds), at the default input.\n\
         `trainbench describe --model M` gives one model at another input size."
    );
    Ok(ExitCode::SUCCESS)
}

/// `trainbench models`: the catalogue, the names matching a search, or with
/// a filter every match with its family and size.
pub fn command(
    search: Option<String>,
    filters: crate::model_filters::ModelFilters,
    json_out: bool,
) -> Result<ExitCode, CliError> {
    match search {
        _ if filters.any() => find(search.unwrap_or_default(), filters, json_out),
        None => models(json_out),
        Some(text) => self::search(&text, json_out),
    }
}

/// `trainbench models --search TEXT`: catalogue models and library names
/// containing TEXT.
pub fn search(text: &str, json_out: bool) -> Result<ExitCode, CliError> {
    if json_out {
        println!("{}", models_json(Some(text)));
        return Ok(ExitCode::SUCCESS);
    }
    let found = trainbench_app::models::search(text);
    for m in &found.builtin {
        println!("{:<40} built in: {}", m.name, m.summary);
    }
    for name in &found.timm {
        println!("{name:<40} timm (built without weights; FLOPs counted when it runs)");
    }
    for name in &found.hf {
        println!("{name:<40} Hugging Face config (overrides: ?key=value&…)");
    }
    for name in &found.keras {
        println!("{name:<40} keras.applications (TensorFlow; built without weights)");
    }
    if let Some(note) = &found.libraries_note {
        println!("{note}");
    }
    Ok(ExitCode::SUCCESS)
}

/// `trainbench models [--search TEXT] --family F --size S --cpu --count`:
/// every match with its family, size and whether a CPU trains it, the
/// catalogue's first.
pub fn find(
    text: String,
    filters: crate::model_filters::ModelFilters,
    json_out: bool,
) -> Result<ExitCode, CliError> {
    use trainbench_app::model_search::{self, ModelQuery, SizeClass};
    let query = ModelQuery {
        text,
        family: filters.family,
        size: filters.size.as_deref().map(SizeClass::parse).transpose()?,
        cpu_only: filters.cpu,
        count: filters.count,
    };
    let found = model_search::find(&query)?;
    if json_out {
        println!("{}", json!(found));
        return Ok(ExitCode::SUCCESS);
    }
    println!("{:<44} {:<20} {:>12}  CPU", "model", "family", "parameters");
    for m in &found.models {
        let params = m.params.map_or_else(|| "not counted".into(), count_words);
        let cpu = match m.cpu {
            Some(true) => "trains on a CPU",
            Some(false) => "needs a GPU",
            None => "",
        };
        println!("{:<44} {:<20} {params:>12}  {cpu}", m.name, m.family);
    }
    let families: Vec<String> = found
        .families
        .iter()
        .take(12)
        .map(|f| format!("{} ({})", f.family, f.count))
        .collect();
    println!("families: {}", families.join(", "));
    if found.not_counted > 0 {
        println!(
            "{} library models have no size counted yet{}: `--count` counts them (once each).",
            found.not_counted,
            if query.size.is_some() || query.cpu_only {
                " and are left out"
            } else {
                ""
            }
        );
    }
    for note in &found.notes {
        println!("{note}");
    }
    Ok(ExitCode::SUCCESS)
}

/// A parameter count in words: `11.7 M`, `371 k`, `6.74 B`.
fn count_words(n: u64) -> String {
    let n = n as f64;
    if n >= 1e9 {
        format!("{:.2} B", n / 1e9)
    } else if n >= 1e6 {
        format!("{:.1} M", n / 1e6)
    } else if n >= 1e3 {
        format!("{:.0} k", n / 1e3)
    } else {
        format!("{n:.0}")
    }
}

/// The framework whose worker builds `model` when `describe` names none:
/// TensorFlow for `keras:`, else PyTorch.
fn default_framework(model: &str) -> &'static str {
    match trainbench_core::models::LibraryRef::parse(model) {
        Ok(Some(l)) => l.library.framework().as_str(),
        _ => "pytorch",
    }
}

/// What `describe` takes for a library or file model only.
pub struct OwnModel {
    pub framework: Option<String>,
    pub input_shape: Option<String>,
}

/// A library or file model, built once by its worker and counted.
fn describe_own(
    model: &str,
    own: OwnModel,
    opts: ModelOptions,
) -> Result<DescribedModel, CliError> {
    let req = trainbench_app::sweep::SweepRequest {
        model: vec![model.to_owned()],
        framework: vec![own
            .framework
            .unwrap_or_else(|| default_framework(model).into())],
        input_shape: own.input_shape,
        num_classes: opts.num_classes,
        image_size: opts.image_size,
        seq_len: opts.seq_len,
        vocab_size: opts.vocab_size,
        ..Default::default()
    };
    if let Some(c) = opts.in_channels {
        return Err(bad(
            "in_channels",
            format!("in_channels = {c} is not allowed: expected no value for {model} (give --input-shape CxSxS)"),
        ));
    }
    Ok(trainbench_app::describe::describe_own_model(&req)?)
}

fn print_own(d: &DescribedModel) {
    let flops = match (d.flops_per_sample, &d.flops_method) {
        (Some(f), Some(how)) => format!("{f:.4e} training FLOPs per sample ({how})"),
        _ => "training FLOPs per sample not counted (MFU not measured)".to_owned(),
    };
    let input = match d.input.as_deref() {
        Some([tokens]) if d.trained_as == "decoder" => {
            format!(", on {} tokens", tokens.saturating_sub(1))
        }
        Some([tokens]) => format!(", on {tokens} tokens"),
        Some(shape) if !shape.is_empty() => {
            let s: Vec<String> = shape.iter().map(ToString::to_string).collect();
            format!(", on {} (channels × height × width)", s.join("×"))
        }
        _ => String::new(),
    };
    println!(
        "{} in {}: {} trainable parameters (counted on the model); {flops}; trained as {}{input}",
        d.model,
        d.framework,
        d.param_count,
        match d.trained_as.as_str() {
            "decoder" => "a language model on next tokens",
            "bert" => "a sequence classifier",
            _ => "an image classifier",
        }
    );
}

/// What `describe` found: a library or file model counted by its worker,
/// or a catalogue model's analytical figures (its JSON, and its summary).
pub enum Described {
    Own(DescribedModel),
    Catalogue { json: Value, summary: &'static str },
}

impl Described {
    /// `describe --json`'s document.
    pub fn to_json(&self) -> Value {
        match self {
            Described::Own(d) => json!(d),
            Described::Catalogue { json, .. } => json.clone(),
        }
    }
}

pub fn describe(
    model: &str,
    own: OwnModel,
    opts: ModelOptions,
    json_out: bool,
) -> Result<ExitCode, CliError> {
    let found = described(model, own, &opts)?;
    if json_out {
        println!("{}", found.to_json());
        return Ok(ExitCode::SUCCESS);
    }
    match &found {
        Described::Own(d) => print_own(d),
        Described::Catalogue { json, summary } => {
            println!(
                "{model}: {} parameters, {:.4e} training FLOPs per sample ({summary})",
                json["param_count"],
                json["flops_per_sample"].as_f64().unwrap_or(f64::NAN),
            );
            if let Some(input) = json["input"].as_str() {
                println!("counted for: {input}");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A model's parameters and FLOPs per sample at the input asked for.
pub fn described(model: &str, own: OwnModel, opts: &ModelOptions) -> Result<Described, CliError> {
    let is_own = trainbench_core::models::FileRef::looks_like(model)
        || matches!(
            trainbench_core::models::LibraryRef::parse(model),
            Ok(Some(_))
        );
    if is_own {
        return Ok(Described::Own(describe_own(model, own, *opts)?));
    }
    if model.starts_with(trainbench_core::models::script::PREFIX) {
        return Err(bad(
            "model",
            format!("model = {model} is not allowed: expected a model (a training script builds its own while it runs: `trainbench run --script PATH.py` counts its parameters where it calls trainbench.model)"),
        ));
    }
    if let Some(f) = own.framework.as_deref().or(own.input_shape.as_deref()) {
        return Err(bad(
            if own.framework.is_some() { "framework" } else { "input_shape" },
            format!("{f} is not allowed for the catalogue model {model}: expected no value (its figures are analytical)"),
        ));
    }
    let entry = lookup(model).ok_or_else(|| {
        bad(
            "model",
            format!(
                "model = {model} is not allowed: expected one of {}, or timm:NAME, hf:MODEL_TYPE[?key=value&…], keras:NAME or PATH.py:FUNCTION",
                model_names().join(", ")
            ),
        )
    })?;
    let cfg = entry.config(opts)?;
    let json = json!({
        "model": model,
        "family": entry.family,
        "param_count": cfg.param_count(),
        "param_count_source": "analytical (the worker's describe counts the built tensors and must agree)",
        "head_param_count": cfg.head_param_count(),
        "reference_params": entry.reference_params,
        "forward_macs": cfg.forward_macs(),
        "flops_per_sample": cfg.flops_per_sample(),
        "input": input_text(&cfg, opts),
        "config": cfg,
    });
    Ok(Described::Catalogue {
        json,
        summary: entry.summary,
    })
}

/// The input the counts are for, and whether a flag chose it: "3×64×64
/// images (--image-size 64), 1000 classes".
fn input_text(cfg: &ModelConfig, opts: &ModelOptions) -> Option<String> {
    let given = |v: Option<i64>, flag: &str| match v {
        Some(n) => format!(" (--{flag} {n})"),
        None => " (the model's default)".into(),
    };
    let image = |c: i64, s: i64, n: i64| {
        format!(
            "{c}×{s}×{s} images{}, {n} classes",
            given(opts.image_size, "image-size")
        )
    };
    let tokens = |len: i64, vocab: i64| {
        format!(
            "sequences of {len} tokens{}, vocabulary {vocab}",
            given(opts.seq_len, "seq-len")
        )
    };
    Some(match cfg {
        ModelConfig::Vit(v) => image(v.in_channels, v.image_size, v.num_classes),
        ModelConfig::Resnet(r) => image(r.in_channels, r.image_size, r.num_classes),
        ModelConfig::Bert(b) => format!(
            "{}, {} classes",
            tokens(b.seq_len, b.vocab_size),
            b.num_classes
        ),
        ModelConfig::Encoder(e) => format!(
            "{}, {} classes",
            tokens(e.seq_len, e.vocab_size),
            e.num_classes
        ),
        ModelConfig::Decoder(d) => tokens(d.seq_len, d.vocab_size),
        ModelConfig::Library(_) | ModelConfig::File(_) | ModelConfig::Script(_) => return None,
    })
}

/// Every term of the glossary, or the one asked for (by its key or as shown).
pub fn glossary(term: Option<&str>, json_out: bool) -> Result<ExitCode, CliError> {
    let terms: Vec<&glossary::Term> = match term {
        None => GLOSSARY.iter().collect(),
        Some(t) => vec![glossary::find(t).ok_or_else(|| {
            let keys: Vec<&str> = GLOSSARY.iter().map(|t| t.key).collect();
            bad(
                "term",
                format!(
                    "term = {t} is not in the glossary: expected one of {}",
                    keys.join(", ")
                ),
            )
        })?],
    };
    if json_out {
        println!("{}", json!({ "terms": terms }));
    } else {
        for t in terms {
            println!("{} ({})\n    {}\n", t.term, t.key, t.meaning);
        }
    }
    Ok(ExitCode::SUCCESS)
}
