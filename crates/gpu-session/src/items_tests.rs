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
                What::Tune(_) => continue,
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

#[test]
fn the_searches_come_last_after_every_single_configuration_of_their_model() {
    for rehearse in [false, true] {
        let items = plan(rehearse);
        let ids: Vec<&str> = items.iter().map(|i| i.id.as_str()).collect();
        assert_eq!(&ids[ids.len() - 2..], &["vit-tune", "gpt2-tune"]);
        let space = |id: &str| match &items.iter().find(|i| i.id == id).unwrap().what {
            What::Tune(space) => space.clone(),
            _ => panic!("{id} is not a search"),
        };
        let vit = space("vit-tune");
        assert_eq!(vit.frameworks, [Kind::Pytorch, Kind::Tch, Kind::Jax]);
        assert_eq!(vit.compile, ["off"]);
        // Each search's model is one the plan runs as a single configuration
        // at the same precision and size before it: the best it is held
        // against can come from this very session.
        for id in ["vit-tune", "gpt2-tune"] {
            let sp = space(id);
            let before = items.iter().any(|i| match &i.what {
                What::Studio {
                    model,
                    precision,
                    image_size,
                    seq_len,
                    folder,
                    ..
                } => {
                    *model == sp.model
                        && *precision == sp.precision
                        && *image_size == sp.image_size
                        && *seq_len == sp.seq_len
                        && !folder
                }
                _ => false,
            });
            assert!(before, "{id}: nothing to hold its winner against");
        }
        let allowance = |id: &str| items.iter().find(|i| i.id == id).unwrap().allowance_s;
        // A GPU's searches get long enough to confirm their winner; the
        // rehearsal keeps its half of the shorter allowances.
        let (vit, gpt2) = if rehearse {
            (120.0, 100.0)
        } else {
            (360.0, 300.0)
        };
        assert_eq!(allowance("vit-tune"), vit);
        assert_eq!(allowance("gpt2-tune"), gpt2);
    }
    let gpu = plan(false);
    let Some(What::Tune(vit)) = gpu.iter().find(|i| i.id == "vit-tune").map(|i| &i.what) else {
        panic!("no vit-tune");
    };
    assert_eq!(
        (
            vit.model.as_str(),
            vit.precision.as_str(),
            vit.batch_size.as_slice()
        ),
        ("vit_base_patch16_224", "amp-bf16", &[256, 1024][..])
    );
}
