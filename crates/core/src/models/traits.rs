//! What the workers do differently by model, said once here and sent in the
//! plan (`WorkerPlan::traits`) rather than re-derived from the family's name
//! in every worker: what the model takes, what it is trained on, and the
//! shape of its self-attention with its causal mask and its dropout.
//!
//! A library or file model has no traits here: only the installed library
//! (or the person's file) says whether `hf:bert` classifies or a module takes
//! tokens, so its plan carries `null` and the worker's model builder sets
//! them, once, before anything reads them.

use serde::Serialize;

use super::ModelConfig;

/// What one sample of the model's input is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Input {
    /// An image: channels × height × width (NCHW in PyTorch, NHWC in Keras
    /// and Flax).
    Image,
    /// A sequence of token ids.
    Tokens,
}

/// What the model is trained on (its loss and its accuracy).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Objective {
    /// One class per sample: softmax cross-entropy over the classes.
    Classes,
    /// One logit per sample under a sigmoid: binary cross-entropy.
    Binary,
    /// Each position predicts the next token (a causal language model): a
    /// sample is `seq_len + 1` tokens, inputs and, one on, targets.
    NextToken,
}

/// The model's self-attention, as its kernels see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Attention {
    /// Positions attended over (a ViT's patches plus its class token).
    pub tokens: i64,
    pub heads: i64,
    /// Key/value heads (fewer than `heads`: grouped-query attention).
    pub kv_heads: i64,
    pub head_dim: i64,
    /// Each position sees only those before it.
    pub causal: bool,
    /// Attention probabilities are dropped while training (0.1).
    pub dropout: bool,
}

/// Every trait a worker acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ModelTraits {
    pub input: Input,
    pub objective: Objective,
    /// `null` for a model without self-attention.
    pub attention: Option<Attention>,
}

impl ModelConfig {
    /// The model's traits; `None` for a model the worker builds from a
    /// library or a file, or a training script (the worker finds them).
    pub fn traits(&self) -> Option<ModelTraits> {
        let classes = |n: i64| {
            if n == 1 {
                Objective::Binary
            } else {
                Objective::Classes
            }
        };
        Some(match self {
            ModelConfig::Vit(v) => ModelTraits {
                input: Input::Image,
                objective: Objective::Classes,
                attention: Some(Attention {
                    tokens: (v.image_size / v.patch_size).pow(2) + 1,
                    heads: v.num_heads,
                    kv_heads: v.num_heads,
                    head_dim: v.embed_dim / v.num_heads,
                    causal: false,
                    dropout: false,
                }),
            },
            ModelConfig::Resnet(_) => ModelTraits {
                input: Input::Image,
                objective: Objective::Classes,
                attention: None,
            },
            ModelConfig::Bert(b) => ModelTraits {
                input: Input::Tokens,
                objective: Objective::Classes,
                attention: Some(bidirectional(b.seq_len, b.heads, b.hidden)),
            },
            // Only the encoder classifier has a one-logit (binary) head.
            ModelConfig::Encoder(e) => ModelTraits {
                input: Input::Tokens,
                objective: classes(e.num_classes),
                attention: Some(bidirectional(e.seq_len, e.heads, e.hidden)),
            },
            ModelConfig::Decoder(d) => ModelTraits {
                input: Input::Tokens,
                objective: Objective::NextToken,
                attention: Some(Attention {
                    tokens: d.seq_len,
                    heads: d.heads,
                    kv_heads: d.kv_heads,
                    head_dim: d.hidden / d.heads,
                    causal: true,
                    dropout: d.dropout,
                }),
            },
            ModelConfig::Library(_) | ModelConfig::File(_) | ModelConfig::Script(_) => return None,
        })
    }
}

/// BERT's and the encoder classifier's attention: every position sees every
/// other; probabilities dropped at 0.1 while training, as Hugging Face's BERT
/// and `nn.TransformerEncoderLayer` do.
fn bidirectional(seq_len: i64, heads: i64, hidden: i64) -> Attention {
    Attention {
        tokens: seq_len,
        heads,
        kv_heads: heads,
        head_dim: hidden / heads,
        causal: false,
        dropout: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::lookup;

    fn traits(model: &str) -> Option<ModelTraits> {
        lookup(model)
            .expect("a catalogue model")
            .default_config()
            .traits()
    }

    #[test]
    fn each_family_says_its_input_objective_and_attention() {
        let vit = traits("vit_base_patch16_224").expect("traits");
        assert_eq!(
            (vit.input, vit.objective),
            (Input::Image, Objective::Classes)
        );
        // 224 / 16 = 14 patches a side, plus the class token.
        let a = vit.attention.expect("attention");
        assert_eq!(
            (a.tokens, a.heads, a.head_dim, a.causal, a.dropout),
            (197, 12, 64, false, false)
        );
        let resnet = traits("resnet50").expect("traits");
        assert_eq!((resnet.input, resnet.attention), (Input::Image, None));
        let gpt2 = traits("gpt2_small").expect("traits");
        assert_eq!(gpt2.objective, Objective::NextToken);
        let a = gpt2.attention.expect("attention");
        assert!(a.causal && a.dropout, "{a:?}");
        let llama = traits("llama_tiny")
            .expect("traits")
            .attention
            .expect("attention");
        assert!(
            llama.causal && !llama.dropout && llama.kv_heads < llama.heads,
            "{llama:?}"
        );
        let bert = traits("bert_base_uncased").expect("traits");
        assert_eq!(
            (bert.input, bert.objective),
            (Input::Tokens, Objective::Classes)
        );
        assert!(bert.attention.is_some_and(|a| !a.causal && a.dropout));
        // The encoder classifier's one logit is a binary head.
        let fraud = traits("fraud_transformer_tiny").expect("traits");
        assert_eq!(fraud.objective, Objective::Binary);
    }
}
