//! The run spec's fields checked by group (devices, length, data, model,
//! optimizer, targets), each naming the field at fault, the value and what
//! is allowed; [`super::validate::RunSpec::from_raw`] calls them in this
//! order, so the first fault of a spec is the one reported.

use super::options::{DataSource, Length, Parallel, DEFAULT_LOADER_WORKERS, MAX_LOADER_WORKERS};
use super::own_data;
use super::raw::RawSpec;
use crate::error::SpecError;
use crate::models::{
    CatalogEntry, Family, Library, LibraryConfig, LibraryRef, ModelConfig, ModelOptions,
};

/// Devices per node, nodes, and how they share the work.
pub(super) fn devices(raw: &RawSpec) -> Result<(u32, u32, Parallel), SpecError> {
    let devices = u32::try_from(at_least_one("devices", raw.devices)?)
        .map_err(|_| SpecError::new("devices", raw.devices, "a whole number ≥ 1"))?;
    let nodes = match raw.nodes {
        None => 1,
        Some(n) => u32::try_from(at_least_one("nodes", n)?)
            .ok()
            .filter(|&n| n <= 4096)
            .ok_or_else(|| SpecError::new("nodes", n, "a whole number from 1 to 4096"))?,
    };
    let parallel = Parallel::parse(&raw.parallel)?;
    if parallel == Parallel::Fsdp && devices < 2 {
        return Err(SpecError::new(
            "parallel",
            "fsdp",
            &format!("ddp with devices = {devices} (fsdp shards over 2 or more devices)"),
        ));
    }
    Ok((devices, nodes, parallel))
}

/// Steps or epochs: one of them.
pub(super) fn length(raw: &RawSpec) -> Result<Length, SpecError> {
    let length = match (raw.steps, raw.epochs) {
        (Some(s), None) => Length::Steps(at_least_one("steps", s)?),
        (None, Some(e)) => Length::Epochs(at_least_one("epochs", e)?),
        (Some(s), Some(e)) => {
            return Err(SpecError::new(
                "steps",
                format!("{s} (with epochs = {e})"),
                "either steps or epochs, not both",
            ))
        }
        (None, None) => {
            return Err(SpecError::new(
                "steps",
                "(missing)",
                "either steps or epochs",
            ))
        }
    };
    Ok(length)
}

/// The data source, its folder and the loader workers of an image folder.
pub(super) fn data(raw: &RawSpec) -> Result<(DataSource, Option<u32>), SpecError> {
    let data = DataSource::parse(&raw.data)?;
    if data == DataSource::Cifar10 && raw.data_path.is_none() {
        return Err(SpecError::new(
            "data_path",
            "(missing)",
            "the directory holding CIFAR-10's binary batches (data_batch_1.bin … test_batch.bin)",
        ));
    }
    if data == DataSource::Folder && raw.data_path.is_none() {
        return Err(SpecError::new(
            "data_path",
            "(missing)",
            "the directory holding the images: train/<class>/*.jpg|png (and val/<class>/), or <class>/*.jpg|png",
        ));
    }
    let loader_workers = match (data, raw.loader_workers) {
        (DataSource::Folder, None) => Some(DEFAULT_LOADER_WORKERS),
        (DataSource::Folder, Some(n)) => Some(
            u32::try_from(n)
                .ok()
                .filter(|&n| n <= MAX_LOADER_WORKERS)
                .ok_or_else(|| {
                    SpecError::new(
                        "loader_workers",
                        n,
                        &format!("a whole number from 0 to {MAX_LOADER_WORKERS}"),
                    )
                })?,
        ),
        (_, None) => None,
        (other, Some(n)) => {
            return Err(SpecError::new(
                "loader_workers",
                n,
                &format!(
                    "no value with data = {other} (only an image folder is decoded while training runs)"
                ),
            ))
        }
    };
    Ok((data, loader_workers))
}

/// The model's configuration with what the data set fixes (image shape,
/// classes, byte-level vocabulary).
pub(super) fn model(
    raw: &RawSpec,
    entry: &CatalogEntry,
    data: DataSource,
) -> Result<ModelConfig, SpecError> {
    let mut opts = ModelOptions {
        num_classes: raw.num_classes,
        image_size: raw.image_size,
        in_channels: raw.in_channels,
        seq_len: raw.seq_len,
        vocab_size: raw.vocab_size,
    };
    if let Some((channels, size, classes)) = data.image_shape() {
        if !entry.family.is_image() {
            return Err(SpecError::new(
                "data",
                data.as_str(),
                &format!(
                    "synthetic for the text model {} (image data sets need an image model)",
                    raw.model
                ),
            ));
        }
        own_data::fixed("in_channels", raw.in_channels, channels, data)?;
        own_data::fixed("image_size", raw.image_size, size, data)?;
        own_data::fixed("num_classes", raw.num_classes, classes, data)?;
        opts.in_channels = Some(channels);
        opts.image_size = Some(size);
        opts.num_classes = Some(classes);
    }
    if data == DataSource::Folder {
        if !entry.family.is_image() {
            return Err(SpecError::new(
                "data",
                data.as_str(),
                &format!(
                    "synthetic for the text model {} (an image folder needs an image model)",
                    raw.model
                ),
            ));
        }
        own_data::rgb_channels(raw.in_channels)?;
        opts.in_channels = Some(3);
        own_data::classes_of_folder(raw.num_classes)?;
    }
    if data == DataSource::Text && entry.family != Family::Decoder {
        return Err(SpecError::new(
            "data",
            "text",
            &format!(
                "synthetic{} for {} (the text corpus trains decoder language models)",
                if entry.family.is_image() {
                    ", mnist or cifar10"
                } else {
                    ""
                },
                raw.model
            ),
        ));
    }
    let model_config = entry.config(&opts)?;
    if data == DataSource::Text {
        if let ModelConfig::Decoder(c) = &model_config {
            own_data::text_vocabulary(Some(c.vocab_size))?;
        }
    }
    Ok(model_config)
}

/// A library model's configuration: the data that fits its input
/// (`own_data`), and only the input options its library takes (the rest are
/// `hf:` overrides or the library's defaults).
pub(super) fn library_model(
    raw: &RawSpec,
    model: LibraryRef,
    data: DataSource,
) -> Result<ModelConfig, SpecError> {
    let input = own_data::library_data(raw, model.library, data)?;
    let not_for = |field: &str, value: i64, instead: &str| {
        SpecError::new(
            field,
            value,
            &format!(
                "no value for {} model {} ({instead})",
                model.library, raw.model
            ),
        )
    };
    if let Some(c) = raw.in_channels {
        return Err(not_for(
            "in_channels",
            c,
            "it takes 3-channel images or tokens",
        ));
    }
    if let Some(v) = raw.vocab_size {
        return Err(not_for("vocab_size", v, "give hf:TYPE?vocab_size=N"));
    }
    match model.library {
        Library::Timm | Library::Keras => {
            if let Some(s) = raw.seq_len {
                return Err(not_for("seq_len", s, "it takes images"));
            }
        }
        Library::Hf => {
            if let Some(s) = raw.image_size {
                return Err(not_for("image_size", s, "hf models take tokens"));
            }
        }
    }
    for (field, value) in [
        ("image_size", raw.image_size),
        ("num_classes", raw.num_classes),
        ("seq_len", raw.seq_len),
    ] {
        if let Some(v) = value.filter(|&v| v < 1) {
            return Err(SpecError::new(field, v, "a whole number ≥ 1"));
        }
    }
    let seq_len = match model.library {
        Library::Timm | Library::Keras => None,
        Library::Hf => Some(
            raw.seq_len
                .unwrap_or(crate::models::library::DEFAULT_HF_SEQ_LEN),
        ),
    };
    Ok(ModelConfig::Library(LibraryConfig {
        model,
        image_size: input.image_size,
        num_classes: input.num_classes,
        seq_len,
    }))
}

/// Learning rate, weight decay and warm-up steps.
pub(super) fn optimizer(raw: &RawSpec) -> Result<Option<u64>, SpecError> {
    if !(raw.lr.is_finite() && raw.lr > 0.0) {
        return Err(SpecError::new("lr", raw.lr, "a finite number > 0"));
    }
    if !(raw.weight_decay.is_finite() && raw.weight_decay >= 0.0) {
        return Err(SpecError::new(
            "weight_decay",
            raw.weight_decay,
            "a finite number ≥ 0",
        ));
    }
    let warmup_steps = match raw.warmup_steps {
        None => None,
        Some(w) => Some(
            u64::try_from(w)
                .map_err(|_| SpecError::new("warmup_steps", w, "a whole number ≥ 0"))?,
        ),
    };
    Ok(warmup_steps)
}

/// A target accuracy or loss, and stopping at it.
pub(super) fn targets(raw: &RawSpec, data: DataSource) -> Result<(), SpecError> {
    if let Some(t) = raw.target_accuracy {
        if !(t > 0.0 && t <= 1.0) {
            return Err(SpecError::new("target_accuracy", t, "a number in (0, 1]"));
        }
        if data == DataSource::Synthetic {
            return Err(SpecError::new(
                "target_accuracy",
                t,
                "no value with synthetic data (accuracy on random labels means nothing); use mnist, cifar10, text or folder",
            ));
        }
    }
    if let Some(t) = raw.target_loss {
        if !(t.is_finite() && t > 0.0) {
            return Err(SpecError::new("target_loss", t, "a finite number > 0"));
        }
        if data == DataSource::Synthetic {
            return Err(SpecError::new(
                "target_loss",
                t,
                "no value with synthetic data (there is no held-out split); use mnist, cifar10, text or folder",
            ));
        }
        if let Some(a) = raw.target_accuracy {
            return Err(SpecError::new(
                "target_loss",
                format!("{t} (with target_accuracy = {a})"),
                "one target: target_accuracy or target_loss",
            ));
        }
    }
    if raw.stop_at_target && raw.target_accuracy.is_none() && raw.target_loss.is_none() {
        return Err(SpecError::new(
            "stop_at_target",
            true,
            "false unless target_accuracy or target_loss is set",
        ));
    }
    Ok(())
}

/// A whole number of at least 1.
pub(super) fn at_least_one(field: &str, v: i64) -> Result<u64, SpecError> {
    u64::try_from(v)
        .ok()
        .filter(|&x| x >= 1)
        .ok_or_else(|| SpecError::new(field, v, "a whole number ≥ 1"))
}
