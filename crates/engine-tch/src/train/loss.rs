//! Inputs, targets, loss and predictions of each model family.

use super::*;

/// Whether the model's head is one logit under a sigmoid (binary
/// cross-entropy, the fraud model's), not softmax classes.
fn binary_head(cfg: &ModelConfig) -> bool {
    matches!(cfg, ModelConfig::Encoder(e) if e.num_classes == 1)
}

/// Cross-entropy over the last axis (any leading axes: a decoder's
/// positions), or binary cross-entropy on one logit.
pub(super) fn classification_loss(
    cfg: &ModelConfig,
    logits: &Tensor,
    y: &Tensor,
    reduction: Reduction,
) -> Result<Tensor, WorkerError> {
    if binary_head(cfg) {
        return Ok(logits
            .f_squeeze_dim(-1)?
            .f_binary_cross_entropy_with_logits(
                &y.f_to_kind(Kind::Float)?,
                None::<Tensor>,
                None::<Tensor>,
                reduction,
            )?);
    }
    let v = *logits.size().last().unwrap_or(&1);
    Ok(logits.f_reshape([-1, v])?.f_cross_entropy_loss(
        &y.f_reshape([-1])?,
        None::<Tensor>,
        reduction,
        -100,
        0.0,
    )?)
}

/// The model's inputs and targets from a batch: a decoder's sequence of
/// `seq_len + 1` tokens gives its first `seq_len` as inputs and, one on, the
/// next tokens as targets; other models take `x` and `y` as they are.
pub(super) fn inputs_and_targets(
    cfg: &ModelConfig,
    x: &Tensor,
    y: &Tensor,
) -> Result<(Tensor, Tensor), WorkerError> {
    Ok(match cfg {
        ModelConfig::Decoder(c) => (x.f_narrow(1, 0, c.seq_len)?, x.f_narrow(1, 1, c.seq_len)?),
        // A file model of tokens without classes: a language model, as a decoder.
        ModelConfig::File(f) if f.num_classes.is_none() && !f.is_image() => {
            let t = f.seq_len.unwrap_or(0);
            (x.f_narrow(1, 0, t)?, x.f_narrow(1, 1, t)?)
        }
        _ => (x.shallow_clone(), y.shallow_clone()),
    })
}

/// The predicted classes (one logit: positive above 0).
pub(super) fn predicted(cfg: &ModelConfig, logits: &Tensor) -> Result<Tensor, WorkerError> {
    if binary_head(cfg) {
        return Ok(logits
            .f_squeeze_dim(-1)?
            .f_gt(0.0)?
            .f_to_kind(Kind::Int64)?);
    }
    Ok(logits.f_argmax(-1, false)?)
}
