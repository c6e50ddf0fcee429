use super::*;

#[test]
fn analytical_counts_match_the_reference_implementations() {
    for entry in CATALOG {
        if let Some(reference) = entry.reference_params {
            let cfg = entry.default_config();
            let counted = if entry.reference_includes_head {
                cfg.param_count()
            } else {
                cfg.backbone_param_count()
            };
            assert_eq!(counted, reference, "{}", entry.name);
        }
    }
}

#[test]
fn counts_follow_the_class_count() {
    let e = lookup("resnet50").unwrap();
    let opts = ModelOptions {
        num_classes: Some(10),
        ..Default::default()
    };
    let cfg = e.config(&opts).unwrap();
    assert_eq!(cfg.param_count(), 25_557_032 - 2048 * 990 - 990);
    let b = lookup("bert_base_uncased").unwrap().default_config();
    assert_eq!(b.param_count(), 109_482_240 + 768 * 2 + 2);
}

#[test]
fn flops_match_published_gmacs() {
    // ViT-B/16 17.58 GMACs, ResNet-50 4.11 GMACs (published; they also count a
    // few small non-matmul ops, hence the 1 % tolerance).
    let vit = lookup("vit_base_patch16_224").unwrap().default_config();
    let rel = (vit.forward_macs() as f64 / 17.58e9 - 1.0).abs();
    assert!(rel < 0.01, "vit macs {}", vit.forward_macs());
    let rn = lookup("resnet50").unwrap().default_config();
    let rel = (rn.forward_macs() as f64 / 4.11e9 - 1.0).abs();
    assert!(rel < 0.01, "resnet macs {}", rn.forward_macs());
}

#[test]
fn bad_options_name_the_field() {
    let e = lookup("vit_base_patch16_224").unwrap();
    let err = e
        .config(&ModelOptions {
            image_size: Some(28),
            ..Default::default()
        })
        .unwrap_err();
    assert_eq!(err.field, "image_size");
    let err = e
        .config(&ModelOptions {
            seq_len: Some(28),
            ..Default::default()
        })
        .unwrap_err();
    assert_eq!(err.field, "seq_len");
    let b = lookup("bert_tiny").unwrap();
    let err = b
        .config(&ModelOptions {
            seq_len: Some(513),
            ..Default::default()
        })
        .unwrap_err();
    assert_eq!(err.field, "seq_len");
    let err = b
        .config(&ModelOptions {
            num_classes: Some(0),
            ..Default::default()
        })
        .unwrap_err();
    assert_eq!(err.field, "num_classes");
}

/// Decoder parameter counts against the Hugging Face reference
/// configurations (GPT2LMHeadModel, LlamaForCausalLM; tied heads once), and
/// by hand for GPT-2 small: wte 50257·768 + wpe 1024·768 + 12 layers ×
/// (12·768² + 13·768) + ln_f 2·768 = 124,439,808.
#[test]
fn decoder_counts_match_hugging_face() {
    let g = lookup("gpt2_small").unwrap().default_config();
    let by_hand = 50257 * 768 + 1024 * 768 + 12 * (12 * 768 * 768 + 13 * 768) + 2 * 768;
    assert_eq!(g.param_count(), by_hand);
    assert_eq!(g.param_count(), 124_439_808);
    assert_eq!(g.head_param_count(), 0, "tied");
    let l = lookup("llama3_8b").unwrap().default_config();
    assert_eq!(l.param_count(), 8_030_261_248);
    assert_eq!(l.head_param_count(), 128_256 * 4096);
    assert_eq!(g.tokens_per_sample(), Some(1024));
    assert_eq!(
        lookup("resnet50")
            .unwrap()
            .default_config()
            .tokens_per_sample(),
        None
    );
}

/// Training FLOPs per token = 6 N + 12 L T d (N: matmul parameters with
/// the LM head, no embedding tables), by hand for GPT-2 small at T = 1024.
#[test]
fn decoder_flops_count_attention_over_the_sequence() {
    let g = lookup("gpt2_small").unwrap().default_config();
    let (l, t, d, v) = (12.0, 1024.0, 768.0, 50257.0);
    let n = l * 12.0 * d * d + d * v;
    let per_token = 6.0 * n + 12.0 * l * t * d;
    let counted = g.flops_per_sample() / t;
    assert!(
        (counted / per_token - 1.0).abs() < 1e-12,
        "{counted} vs {per_token}"
    );
    // Grouped-query attention shrinks the K and V projections only.
    let tiny = lookup("llama_tiny").unwrap().default_config();
    let ModelConfig::Decoder(c) = &tiny else {
        panic!("a decoder")
    };
    assert_eq!(c.head_dim(), 32);
    let per_layer = 128 * 128 * 2 + 2 * 128 * 64 + 3 * 128 * 352 + 2 * 128;
    assert_eq!(
        tiny.param_count(),
        (256 * 128 + 2 * per_layer + 128 + 128 * 256) as u64
    );
}

#[test]
fn decoder_options_name_the_field() {
    let g = lookup("gpt2_tiny").unwrap();
    let err = g
        .config(&ModelOptions {
            seq_len: Some(129),
            ..Default::default()
        })
        .unwrap_err();
    assert_eq!(err.field, "seq_len");
    assert!(err.to_string().contains("1 to 128"), "{err}");
    let err = g
        .config(&ModelOptions {
            num_classes: Some(10),
            ..Default::default()
        })
        .unwrap_err();
    assert_eq!(err.field, "num_classes");
    let ok = g
        .config(&ModelOptions {
            seq_len: Some(64),
            vocab_size: Some(512),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(ok.tokens_per_sample(), Some(64));
}

#[test]
fn a_renamed_model_is_still_found_by_its_former_name() {
    let entry = lookup("fraud_transformer_seed").expect("the former name");
    assert_eq!(entry.name, "fraud_transformer_354m");
    assert!(
        !model_names().contains(&"fraud_transformer_seed"),
        "listed once, by its name"
    );
}
