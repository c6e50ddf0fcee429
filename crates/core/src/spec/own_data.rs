//! Real data for a person's model (a library name or a model file): which
//! data sets fit the input it takes, and the input a data set fixes.
//!
//! - Images (a timm or Keras architecture, a file model fed `CxSxS`): CIFAR-10
//!   (3×32×32, 10 classes) and an image folder (decoded as RGB at the run's
//!   size, as many classes as class folders); a file model also MNIST
//!   (1×28×28), since its input is whatever the person wrote.
//! - Tokens (a Hugging Face model type, a file model fed `tokens:N`): the
//!   text corpus, byte-level (token ids 0–255), which trains a language model
//!   on next tokens; a vocabulary under 256 cannot hold its bytes.
//!
//! The checks a data set makes of any model's input (a value it fixes, RGB
//! channels, the folder's classes, the bytes' vocabulary) are here once, for
//! the catalogue's models (`fields`) as for a person's (`file_model`).

use super::options::DataSource;
use super::raw::RawSpec;
use crate::error::SpecError;
use crate::models::Library;

/// The byte values the text corpus's tokens take.
const BYTE_TOKENS: i64 = 256;

/// What a library model's data fixes: the image side and the classes (for
/// CIFAR-10), else what the run gave.
pub(super) struct LibraryInput {
    pub image_size: Option<i64>,
    pub num_classes: Option<i64>,
}

/// The data `raw` names for the library model of `library`, checked, and the
/// input it fixes.
pub(super) fn library_data(
    raw: &RawSpec,
    library: Library,
    data: DataSource,
) -> Result<LibraryInput, SpecError> {
    let given = LibraryInput {
        image_size: raw.image_size,
        num_classes: raw.num_classes,
    };
    match (library, data) {
        (_, DataSource::Synthetic) | (Library::Hf, DataSource::Text) => Ok(given),
        (Library::Timm | Library::Keras, _) => match (data, data.image_shape()) {
            (_, Some((3, side, classes))) => {
                fixed("image_size", raw.image_size, side, data)?;
                fixed("num_classes", raw.num_classes, classes, data)?;
                Ok(LibraryInput {
                    image_size: Some(side),
                    num_classes: Some(classes),
                })
            }
            (DataSource::Folder, _) => {
                classes_of_folder(raw.num_classes)?;
                Ok(given)
            }
            _ => Err(SpecError::new(
                "data",
                data.as_str(),
                &format!(
                    "synthetic, cifar10 or folder for the library model {} (it takes 3-channel images)",
                    raw.model
                ),
            )),
        },
        (Library::Hf, _) => Err(SpecError::new(
            "data",
            data.as_str(),
            &format!(
                "synthetic or text for the library model {} (it takes tokens)",
                raw.model
            ),
        )),
    }
}

/// A value the data set fixes: none given, or the same.
pub(super) fn fixed(
    field: &str,
    given: Option<i64>,
    needed: i64,
    data: DataSource,
) -> Result<(), SpecError> {
    match given {
        Some(g) if g != needed => Err(SpecError::new(
            field,
            g,
            &format!("{needed} (what data set {} has) or no value", data.as_str()),
        )),
        _ => Ok(()),
    }
}

/// An image folder's channels: decoded as RGB, so 3 or none given.
pub(super) fn rgb_channels(in_channels: Option<i64>) -> Result<(), SpecError> {
    match in_channels {
        Some(c) if c != 3 => Err(SpecError::new(
            "in_channels",
            c,
            "3 (images are decoded as RGB) or no value",
        )),
        _ => Ok(()),
    }
}

/// An image folder's classes: given (the studio counts the class folders
/// when it plans a sweep), else refused.
pub(super) fn classes_of_folder(num_classes: Option<i64>) -> Result<(), SpecError> {
    if num_classes.is_none() {
        return Err(SpecError::new(
            "num_classes",
            "(missing)",
            "the number of class folders under data_path (the studio counts them when it plans a sweep)",
        ));
    }
    Ok(())
}

/// The text corpus's byte-level tokens need ids up to 255.
pub(super) fn text_vocabulary(vocab_size: Option<i64>) -> Result<(), SpecError> {
    match vocab_size {
        Some(v) if v < BYTE_TOKENS => Err(SpecError::new(
            "vocab_size",
            v,
            "256 or more with data = text (byte-level tokens)",
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use crate::models::ModelConfig;
    use crate::spec::RunSpec;

    fn spec(model: &str, extra: &str) -> Result<RunSpec, crate::error::SpecError> {
        RunSpec::from_json(&format!(
            r#"{{"model":"{model}","batch_size":2,"steps":3{extra}}}"#
        ))
    }

    #[test]
    fn cifar10_fixes_a_library_models_input_and_a_folder_needs_its_classes() {
        let s = spec("timm:test_vit", r#","data":"cifar10","data_path":"/c""#).unwrap();
        let ModelConfig::Library(c) = &s.model_config else {
            panic!("{:?}", s.model_config)
        };
        assert_eq!((c.image_size, c.num_classes), (Some(32), Some(10)));
        let s = spec(
            "keras:MobileNetV3Small",
            r#","data":"folder","data_path":"/d","num_classes":4"#,
        )
        .unwrap();
        let ModelConfig::Library(c) = &s.model_config else {
            panic!()
        };
        assert_eq!((c.image_size, c.num_classes), (None, Some(4)));
        assert!(spec("hf:gpt2", r#","data":"text""#).is_ok());
    }

    #[test]
    fn data_a_library_model_cannot_take_names_the_field() {
        for (model, extra, field) in [
            ("timm:test_vit", r#","data":"mnist""#, "data"),
            ("keras:ResNet50", r#","data":"text""#, "data"),
            ("hf:gpt2", r#","data":"cifar10","data_path":"/c""#, "data"),
            (
                "timm:test_vit",
                r#","data":"folder","data_path":"/d""#,
                "num_classes",
            ),
            (
                "timm:test_vit",
                r#","data":"cifar10","data_path":"/c","num_classes":100"#,
                "num_classes",
            ),
        ] {
            let e = spec(model, extra).unwrap_err();
            assert_eq!(e.field, field, "{model} {extra}: {e}");
        }
    }
}
