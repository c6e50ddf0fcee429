//! The sweep request's reading and planning.

use super::*;

#[test]
fn threads_read_as_one_number_a_list_or_nothing() {
    let base = serde_json::to_value(SweepRequest::default()).unwrap();
    let with = |t: serde_json::Value| {
        let mut v = base.clone();
        v["threads"] = t;
        serde_json::from_value::<SweepRequest>(v).map(|r| r.threads)
    };
    assert_eq!(with(serde_json::json!(2)).unwrap(), vec![2]);
    assert_eq!(with(serde_json::json!([1, 2])).unwrap(), vec![1, 2]);
    assert_eq!(with(serde_json::Value::Null).unwrap(), Vec::<i64>::new());
    assert!(with(serde_json::json!("two")).is_err());
}

#[test]
fn a_cudnn_benchmark_sweep_is_one_configuration_per_value_on_a_gpu() {
    let req = SweepRequest {
        model: vec!["resnet_mini".into()],
        batch_size: vec![8],
        steps: Some(4),
        device: Some("cuda:0".into()),
        cudnn_benchmark: vec![true, false],
        ..SweepRequest::default()
    };
    let gpu = Machine {
        gpus: 1,
        cpu_cores: 2,
    };
    let plan = plan_sweep(&req, gpu, true);
    assert!(plan.rejected.is_empty(), "{:?}", plan.rejected);
    let labels: Vec<&str> = plan.configs.iter().map(|c| c.label.as_str()).collect();
    assert_eq!(labels.len(), 2);
    assert!(labels[0].ends_with("cudnn.benchmark=on"), "{labels:?}");
    assert!(labels[1].ends_with("cudnn.benchmark=off"), "{labels:?}");
    assert_eq!(plan.configs[1].spec.spec.cudnn_benchmark, Some(false));
    let cpu = SweepRequest {
        device: Some("cpu".into()),
        ..req
    };
    let refused = plan_sweep(&cpu, gpu, true);
    assert!(refused.configs.is_empty());
    assert_eq!(refused.rejected[0].field, "cudnn_benchmark");
}

#[test]
fn the_planned_spec_is_typed_and_the_stored_row_takes_its_values_from_it() {
    let req = SweepRequest {
        model: vec!["resnet_mini".into()],
        precision: vec!["fp32".into(), "amp-bf16".into()],
        batch_size: vec![24],
        steps: Some(7),
        ..SweepRequest::default()
    };
    let cpu = Machine {
        gpus: 0,
        cpu_cores: 2,
    };
    let plan = plan_sweep(&req, cpu, false);
    assert!(plan.rejected.is_empty(), "{:?}", plan.rejected);
    assert_eq!(plan.configs.len(), 2);
    let spec = &plan.configs[1].spec.spec;
    assert_eq!(spec.batch_size, 24);
    assert_eq!(spec.precision, trainbench_core::Precision::AmpBf16);
    assert_eq!(spec.length, trainbench_core::spec::Length::Steps(7));

    let store = Store::open_in_memory().expect("an in-memory store");
    let (_, jobs) = queue_sweep(&store, &plan, None, "test").expect("queued");
    for job in &jobs {
        let row = store.run_row(job.run_id).expect("stored");
        let spec = &plan.configs[job.config].spec.spec;
        assert_eq!(row.batch_size, 24, "not a default");
        assert_eq!(row.precision, spec.precision);
        assert_eq!(row.framework, Framework::Tch);
        assert_eq!(row.device, spec.device);
        assert_eq!(
            row.config_key,
            trainbench_core::spec::ConfigKeys::of(Framework::Tch, None, spec).config
        );
        // What the libtorch worker reads validates to the same spec.
        let reread = trainbench_core::RunSpec::from_json(&job.spec.raw.to_json())
            .expect("the stored spec validates");
        assert_eq!(reread.batch_size, 24);
        assert_eq!(reread.precision, spec.precision);
    }
}

#[test]
fn image_size_and_the_first_batch_searched_are_run_settings_checked_by_name() {
    let cpu = Machine {
        gpus: 0,
        cpu_cores: 2,
    };
    let sized = |model: &str, px: i64| SweepRequest {
        model: vec![model.into()],
        image_size: Some(px),
        ..SweepRequest::default()
    };
    let plan = plan_sweep(&sized("resnet50", 160), cpu, false);
    assert!(plan.rejected.is_empty(), "{:?}", plan.rejected);
    let cfg = &plan.configs[0];
    assert!(cfg.label.contains("resnet50 160px"), "{}", cfg.label);
    let at_224 = plan_sweep(&sized("resnet50", 224), cpu, false).configs[0]
        .spec
        .spec
        .model_config
        .flops_per_sample();
    let ratio = at_224 / cfg.spec.spec.model_config.flops_per_sample();
    assert!(
        (ratio - (224.0f64 / 160.0).powi(2)).abs() < 0.05,
        "FLOPs follow the size: {ratio}"
    );
    // A ViT takes multiples of its patch, a ResNet at least 32 px.
    for (model, px, says) in [
        (
            "vit_base_patch16_224",
            200,
            "a multiple of the patch size 16",
        ),
        ("resnet50", 16, "at least 32 px"),
    ] {
        let plan = plan_sweep(&sized(model, px), cpu, false);
        let r = plan.rejected.first().expect("refused");
        assert_eq!(r.field, "image_size", "{model}");
        assert!(r.message.contains(says), "{}", r.message);
    }
    // The search's first batch: only with max, at least 1.
    let search = |from: u32, max: bool| SweepRequest {
        batch_size: if max { Vec::new() } else { vec![8] },
        batch_max: max,
        batch_from: Some(from),
        memory_limit_bytes: Some(1 << 30),
        ..SweepRequest::default()
    };
    let plan = plan_sweep(&search(16, true), cpu, false);
    assert!(plan.rejected.is_empty(), "{:?}", plan.rejected);
    assert_eq!(plan.configs[0].batch_search.map(|b| b.from), Some(16));
    assert_eq!(plan.configs[0].spec.spec.batch_size, 16);
    for (req, says) in [
        (search(0, true), "batch_from = 0 is not allowed"),
        (
            search(16, false),
            "batch_from is only allowed with batch_size = max",
        ),
    ] {
        let plan = plan_sweep(&req, cpu, false);
        let r = plan.rejected.first().expect("refused");
        assert_eq!(r.field, "batch_from");
        assert!(r.message.contains(says), "{}", r.message);
    }
}
