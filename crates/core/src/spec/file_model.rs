//! The configuration of a model from a person's file (`PATH.py:FUNCTION`):
//! its input (images or token sequences) from the run's fields, its classes,
//! and the SHA-256 of the file the studio read.

use super::options::DataSource;
use super::own_data;
use super::raw::RawSpec;
use crate::error::SpecError;
use crate::models::file::check_sha256;
use crate::models::{FileConfig, FileRef, ModelConfig};

fn at_least_one(field: &str, value: Option<i64>) -> Result<Option<i64>, SpecError> {
    match value {
        Some(v) if v < 1 => Err(SpecError::new(field, v, "a whole number ≥ 1")),
        v => Ok(v),
    }
}

/// No value for `field` of a model taking the other kind of input.
fn refuse(field: &str, value: Option<i64>, why: &str) -> Result<(), SpecError> {
    match value {
        Some(v) => Err(SpecError::new(field, v, &format!("no value ({why})"))),
        None => Ok(()),
    }
}

/// An image folder or the text corpus: the input it needs of the file model.
fn on_real_data(c: &mut FileConfig, data: DataSource) -> Result<(), SpecError> {
    match data {
        DataSource::Folder => {
            own_data::rgb_channels(c.in_channels)?;
            refuse("seq_len", c.seq_len, "an image folder holds images")?;
            if c.image_size.is_none() {
                return Err(SpecError::new(
                    "image_size",
                    "(missing)",
                    "the side the folder's images are decoded at (input_shape 3xSxS)",
                ));
            }
            own_data::classes_of_folder(c.num_classes)?;
            c.in_channels = Some(3);
        }
        DataSource::Text => {
            refuse("image_size", c.image_size, "the text corpus holds tokens")?;
            refuse("in_channels", c.in_channels, "the text corpus holds tokens")?;
            refuse(
                "num_classes",
                c.num_classes,
                "the text corpus trains a language model on next tokens",
            )?;
            if c.seq_len.is_none() {
                return Err(SpecError::new(
                    "input_shape",
                    "(missing)",
                    "tokens:N with data = text (sequences of N byte-level tokens)",
                ));
            }
            own_data::text_vocabulary(c.vocab_size)?;
        }
        _ => {}
    }
    Ok(())
}

/// A file model's configuration, checked: synthetic data of the input shape
/// the run gives, MNIST / CIFAR-10 (which fix it), an image folder (decoded
/// at the run's image size) or the text corpus (`own_data`).
pub(super) fn file_model(
    raw: &RawSpec,
    model: FileRef,
    data: DataSource,
) -> Result<ModelConfig, SpecError> {
    model.require_absolute()?;
    let sha256 = check_sha256(raw.model_sha256.as_deref())?;
    let mut c = FileConfig {
        model,
        sha256,
        in_channels: at_least_one("in_channels", raw.in_channels)?,
        image_size: at_least_one("image_size", raw.image_size)?,
        seq_len: at_least_one("seq_len", raw.seq_len)?,
        vocab_size: at_least_one("vocab_size", raw.vocab_size)?,
        num_classes: at_least_one("num_classes", raw.num_classes)?,
    };
    on_real_data(&mut c, data)?;
    if let Some((channels, side, classes)) = data.image_shape() {
        own_data::fixed("in_channels", c.in_channels, channels, data)?;
        own_data::fixed("image_size", c.image_size, side, data)?;
        own_data::fixed("num_classes", c.num_classes, classes, data)?;
        refuse("seq_len", c.seq_len, "the data set holds images")?;
        (c.in_channels, c.image_size, c.num_classes) = (Some(channels), Some(side), Some(classes));
    }
    let image = c.image_size.is_some() || c.in_channels.is_some();
    match (image, c.seq_len) {
        (true, Some(_)) => Err(SpecError::new(
            "input_shape",
            "images and tokens",
            "one input: CxSxS (images) or tokens:N",
        )),
        (false, None) => Err(SpecError::new(
            "input_shape",
            "(missing)",
            &format!(
                "what {} takes: CxSxS (images, 3x224x224) or tokens:N with vocab_size",
                c.model.short()
            ),
        )),
        (true, None) => {
            if c.image_size.is_none() {
                return Err(SpecError::new(
                    "image_size",
                    "(missing)",
                    "the images' side in pixels (input_shape CxSxS)",
                ));
            }
            c.in_channels = c.in_channels.or(Some(3));
            refuse("vocab_size", c.vocab_size, "the model takes images")?;
            if c.num_classes.is_none() {
                return Err(SpecError::new(
                    "num_classes",
                    "(missing)",
                    &format!(
                        "the classes {} predicts (its output's width)",
                        c.model.short()
                    ),
                ));
            }
            Ok(ModelConfig::File(c))
        }
        (false, Some(_)) => {
            if c.vocab_size.is_none() {
                return Err(SpecError::new(
                    "vocab_size",
                    "(missing)",
                    "the token ids' range (ids 0 … vocab_size − 1) with input_shape tokens:N",
                ));
            }
            Ok(ModelConfig::File(c))
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::models::ModelConfig;
    use crate::spec::RunSpec;

    const SHA: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    fn spec(extra: &str) -> Result<RunSpec, crate::error::SpecError> {
        RunSpec::from_json(&format!(
            r#"{{"model":"/w/m.py:build","model_sha256":"{SHA}","batch_size":2,"steps":3{extra}}}"#
        ))
    }

    #[test]
    fn a_file_model_takes_images_or_tokens_as_the_run_says() {
        let s = spec(r#","image_size":16,"num_classes":4"#).unwrap();
        let ModelConfig::File(c) = &s.model_config else {
            panic!("{:?}", s.model_config)
        };
        assert_eq!(
            (c.in_channels, c.image_size, c.num_classes),
            (Some(3), Some(16), Some(4))
        );
        assert_eq!(c.model.function, "build");
        let s = spec(r#","seq_len":8,"vocab_size":50"#).unwrap();
        assert_eq!(s.model_config.tokens_per_sample(), Some(8));
        let s = spec(r#","data":"text","seq_len":8,"vocab_size":256"#).unwrap();
        assert_eq!(s.model_config.tokens_per_sample(), Some(8));
        let s =
            spec(r#","data":"folder","data_path":"/d","image_size":16,"num_classes":4"#).unwrap();
        let ModelConfig::File(c) = &s.model_config else {
            panic!()
        };
        assert_eq!(c.in_channels, Some(3));
        let s = spec(r#","data":"mnist""#).unwrap();
        let ModelConfig::File(c) = &s.model_config else {
            panic!()
        };
        assert_eq!(
            (c.in_channels, c.image_size, c.num_classes),
            (Some(1), Some(28), Some(10))
        );
    }

    #[test]
    fn a_file_model_without_what_it_needs_names_the_field() {
        for (extra, field) in [
            ("", "input_shape"),
            (r#","image_size":16"#, "num_classes"),
            (r#","seq_len":8"#, "vocab_size"),
            (
                r#","seq_len":8,"image_size":8,"vocab_size":9"#,
                "input_shape",
            ),
            (
                r#","image_size":16,"num_classes":4,"vocab_size":9"#,
                "vocab_size",
            ),
            (r#","data":"mnist","image_size":32"#, "image_size"),
            (
                r#","data":"text","seq_len":8,"vocab_size":255"#,
                "vocab_size",
            ),
            (
                r#","data":"text","seq_len":8,"vocab_size":256,"num_classes":3"#,
                "num_classes",
            ),
            (
                r#","data":"folder","data_path":"/d","seq_len":8,"vocab_size":256"#,
                "seq_len",
            ),
            (
                r#","data":"folder","data_path":"/d","image_size":16"#,
                "num_classes",
            ),
            (
                r#","data":"folder","data_path":"/d","in_channels":1,"image_size":16,"num_classes":4"#,
                "in_channels",
            ),
            (r#","image_size":0,"num_classes":4"#, "image_size"),
        ] {
            assert_eq!(spec(extra).unwrap_err().field, field, "{extra}");
        }
        let no_sha = RunSpec::from_json(
            r#"{"model":"/w/m.py:build","batch_size":2,"steps":3,"image_size":8,"num_classes":2}"#,
        );
        assert_eq!(no_sha.unwrap_err().field, "model_sha256");
        let relative = RunSpec::from_json(&format!(
            r#"{{"model":"m.py:build","model_sha256":"{SHA}","batch_size":2,"steps":3,"image_size":8,"num_classes":2}}"#
        ));
        assert_eq!(relative.unwrap_err().field, "model");
        let sha_elsewhere = RunSpec::from_json(&format!(
            r#"{{"model":"resnet_mini","model_sha256":"{SHA}","batch_size":2,"steps":3}}"#
        ));
        assert_eq!(sha_elsewhere.unwrap_err().field, "model_sha256");
    }
}
