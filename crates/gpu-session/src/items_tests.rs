//! The plan's items: ids, order, allowances and steps.
use super::*;

#[test]
fn fast_steps_are_timed_three_times_longer_on_a_gpu_only() {
    let x = |rehearse: bool, id: &str| {
        let items = plan(rehearse);
        let i = items.iter().find(|i| i.id == id).unwrap();
        (i.steps_x, i.allowance_s)
    };
    for id in [
        "vit-eager",
        "vit-timm",
        "vit-tch-fp16",
        "resnet-tch",
        "bert-eager",
        "vit-flax",
    ] {
        assert_eq!(x(false, id).0, 3, "{id}");
    }
    assert_eq!(x(false, "vit-eager"), (3, 36.0));
    for id in [
        "vit-eager-fp32",
        "vit-tch-tf32",
        "gpt2-eager",
        "gpt2-hf",
        "vit-eager-max",
        "vit-timm-max",
        "resnet-folder",
    ] {
        assert_eq!(x(false, id).0, 1, "{id}");
    }
    // The rehearsal keeps its lengths: CI's time.
    assert!(plan(true).iter().all(|i| i.steps_x == 1));
}

#[test]
fn every_peer_and_found_batch_refers_to_an_earlier_studio_item() {
    for rehearse in [false, true] {
        let items = plan(rehearse);
        for (i, item) in items.iter().enumerate() {
            let earlier = |id: &str| {
                items[..i]
                    .iter()
                    .any(|e| e.id == id && matches!(e.what, What::Studio { .. }))
            };
            let (batch, of) = match &item.what {
                What::Studio { batch, against, .. } => (batch, against.as_ref()),
                What::Peer { batch, of, .. } => (batch, Some(of)),
            };
            if let Batch::FoundBy(id) = batch {
                assert!(earlier(id), "{}: batch of {id}", item.id);
            }
            if let Some(of) = of {
                assert!(earlier(of), "{}: peer of {of}", item.id);
            }
        }
        let mut ids: Vec<&str> = items.iter().map(|i| i.id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), items.len(), "ids are unique");
    }
}
