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
