use super::*;
use crate::models::ModelConfig;

fn spec(extra: &str) -> Result<RunSpec, SpecError> {
    RunSpec::from_json(&format!(
        r#"{{"model":"resnet_mini","batch_size":8,"steps":10{extra}}}"#
    ))
}

#[test]
fn minimal_spec_is_valid() {
    let s = spec("").unwrap();
    assert_eq!(s.length, Length::Steps(10));
    assert_eq!(s.precision, Precision::Fp32);
    assert_eq!(s.device, Device::Cpu);
}

#[test]
fn errors_name_the_field() {
    let cases = [
        (r#"{"model":"nope","batch_size":8,"steps":1}"#, "model"),
        (
            r#"{"model":"resnet_mini","batch_size":0,"steps":1}"#,
            "batch_size",
        ),
        (
            r#"{"model":"resnet_mini","batch_size":8,"steps":-5}"#,
            "steps",
        ),
        (r#"{"model":"resnet_mini","batch_size":8}"#, "steps"),
        (
            r#"{"model":"resnet_mini","batch_size":8,"steps":1,"epochs":1}"#,
            "steps",
        ),
        (
            r#"{"model":"resnet_mini","batch_size":8,"steps":1,"precision":"fp8"}"#,
            "precision",
        ),
        (
            r#"{"model":"resnet_mini","batch_size":8,"steps":1,"device":"tpu"}"#,
            "device",
        ),
        (
            r#"{"model":"resnet_mini","batch_size":"x","steps":1}"#,
            "batch_size",
        ),
        (
            r#"{"model":"resnet_mini","batch_size":8,"steps":1,"colour":1}"#,
            "colour",
        ),
        (r#"{"model":"resnet_mini","batch_size":8,"steps":1"#, "spec"),
        (r#"{"batch_size":8,"steps":1}"#, "spec"),
        (
            r#"{"model":"resnet_mini","batch_size":8,"steps":1,"data":"cifar10"}"#,
            "data_path",
        ),
        (
            r#"{"model":"bert_tiny","batch_size":8,"steps":1,"data":"mnist"}"#,
            "data",
        ),
        (
            r#"{"model":"resnet_mini","batch_size":8,"steps":1,"data":"mnist","num_classes":5}"#,
            "num_classes",
        ),
        (
            r#"{"model":"resnet_mini","batch_size":8,"steps":1,"data":"mnist","target_accuracy":1.5}"#,
            "target_accuracy",
        ),
        (
            r#"{"model":"resnet_mini","batch_size":8,"steps":1,"target_accuracy":0.5}"#,
            "target_accuracy",
        ),
    ];
    for (json, field) in cases {
        let err = RunSpec::from_json(json).unwrap_err();
        assert_eq!(err.field, field, "{json}: {err}");
    }
}

#[test]
fn message_says_value_and_what_is_allowed() {
    let err = spec(r#","window_steps":0"#).unwrap_err();
    assert_eq!(
        err.to_string(),
        "window_steps = 0 is not allowed: expected a whole number ≥ 1"
    );
}

#[test]
fn data_set_fixes_the_input_shape() {
    let s = spec(r#","data":"mnist""#).unwrap();
    match s.model_config {
        ModelConfig::Resnet(r) => {
            assert_eq!((r.in_channels, r.image_size, r.num_classes), (1, 28, 10))
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_image_folder_takes_its_classes_from_the_folder_and_rgb_at_the_model_size() {
    let s = spec(r#","data":"folder","data_path":"/d","num_classes":7"#).unwrap();
    assert_eq!(s.loader_workers, Some(DEFAULT_LOADER_WORKERS));
    assert!(s.data.streamed());
    match &s.model_config {
        ModelConfig::Resnet(r) => {
            assert_eq!((r.in_channels, r.image_size, r.num_classes), (3, 32, 7))
        }
        other => panic!("{other:?}"),
    }
    let zero =
        spec(r#","data":"folder","data_path":"/d","num_classes":7,"loader_workers":0"#).unwrap();
    assert_eq!(zero.loader_workers, Some(0));
    // Loader workers are part of the configuration: 0 and 2 are two of them.
    assert_ne!(
        ConfigKeys::of(Framework::Pytorch, None, &s).config,
        ConfigKeys::of(Framework::Pytorch, None, &zero).config
    );
    // A spec without a folder keeps the key it had before the field existed.
    assert!(!serde_json::to_string(&spec("").unwrap())
        .unwrap()
        .contains("loader_workers"));
    for (extra, field, says) in [
        (
            r#","data":"folder","num_classes":7"#,
            "data_path",
            "(missing)",
        ),
        (
            r#","data":"folder","data_path":"/d""#,
            "num_classes",
            "class folders",
        ),
        (
            r#","data":"folder","data_path":"/d","num_classes":7,"loader_workers":-1"#,
            "loader_workers",
            "from 0 to 64",
        ),
        (
            r#","data":"folder","data_path":"/d","num_classes":7,"loader_workers":65"#,
            "loader_workers",
            "from 0 to 64",
        ),
        (
            r#","data":"mnist","loader_workers":2"#,
            "loader_workers",
            "data = mnist",
        ),
        (
            r#","data":"folder","data_path":"/d","num_classes":7,"in_channels":1"#,
            "in_channels",
            "RGB",
        ),
    ] {
        let e = spec(extra).unwrap_err();
        assert_eq!(e.field, field, "{extra}: {e}");
        assert!(e.to_string().contains(says), "{extra}: {e}");
    }
    let text_model = RunSpec::from_json(
        r#"{"model":"gpt2_tiny","batch_size":2,"steps":1,"data":"folder","data_path":"/d","num_classes":2}"#,
    )
    .unwrap_err();
    assert_eq!(text_model.field, "data");
    let cpu = Machine {
        gpus: 0,
        cpu_cores: 2,
    };
    let all = [Framework::Tch, Framework::Pytorch];
    assert_eq!(
        check_runnable(&s, Framework::Tch, &all, cpu)
            .unwrap_err()
            .field,
        "data"
    );
    assert!(check_runnable(&s, Framework::Pytorch, &all, cpu).is_ok());
}

#[test]
fn nodes_multiply_the_world_and_scale_like_devices() {
    let one = spec("").unwrap();
    let two = spec(r#","nodes":2,"devices":2"#).unwrap();
    assert_eq!((one.nodes, one.world_size()), (1, 1));
    assert_eq!((two.nodes, two.world_size()), (2, 4));
    // One node keeps the key it had before the field existed; nodes, like
    // devices, leave the scaling key alone.
    assert!(!serde_json::to_string(&one).unwrap().contains("nodes"));
    let k1 = ConfigKeys::of(Framework::Pytorch, None, &one);
    let k2 = ConfigKeys::of(Framework::Pytorch, None, &two);
    assert_ne!(k1.config, k2.config);
    assert_eq!(k1.scaling, k2.scaling);
    for bad in ["0", "-1", "5000"] {
        let e = spec(&format!(r#","nodes":{bad}"#)).unwrap_err();
        assert_eq!(e.field, "nodes", "{e}");
    }
    let cpu = Machine {
        gpus: 0,
        cpu_cores: 2,
    };
    let all = Framework::ALL;
    let n = spec(r#","nodes":2"#).unwrap();
    assert_eq!(
        check_runnable(&n, Framework::Tch, &all, cpu)
            .unwrap_err()
            .field,
        "nodes"
    );
    for f in Framework::PYTHON {
        assert!(check_runnable(&n, f, &all, cpu).is_ok(), "{f}");
    }
}

#[test]
fn repeats_are_interleaved() {
    assert_eq!(interleaved_plan(2, 2), vec![(0, 0), (1, 0), (0, 1), (1, 1)]);
    assert!(interleaved_plan(3, 0).is_empty());
}

#[test]
fn runnable_checks_name_the_field() {
    let cpu = Machine {
        gpus: 0,
        cpu_cores: 2,
    };
    let s = spec("").unwrap();
    assert!(check_runnable(&s, Framework::Tch, &[Framework::Tch], cpu).is_ok());
    assert_eq!(Framework::parse("mxnet").unwrap_err().field, "framework");
    assert_eq!(
        check_runnable(&s, Framework::Jax, &[Framework::Tch], cpu)
            .unwrap_err()
            .field,
        "framework"
    );
    let gpu = spec(r#","device":"cuda:0""#).unwrap();
    assert_eq!(
        check_runnable(&gpu, Framework::Tch, &[Framework::Tch], cpu)
            .unwrap_err()
            .field,
        "device"
    );
    let many = spec(r#","devices":3"#).unwrap();
    assert_eq!(
        check_runnable(&many, Framework::Tch, &[Framework::Tch], cpu)
            .unwrap_err()
            .field,
        "devices"
    );
    let tf32 = spec(r#","precision":"tf32""#).unwrap();
    assert_eq!(
        check_runnable(&tf32, Framework::Tch, &[Framework::Tch], cpu)
            .unwrap_err()
            .field,
        "precision"
    );
    let two = spec(r#","device":"cuda:0","devices":2"#).unwrap();
    assert_eq!(
        check_runnable(
            &two,
            Framework::Tch,
            &[Framework::Tch],
            Machine {
                gpus: 1,
                cpu_cores: 2
            }
        )
        .unwrap_err()
        .field,
        "devices"
    );
}

#[test]
fn schedule_warms_up_then_decays() {
    assert_eq!(learning_rate(1.0, 1, 4, 100), 0.25);
    assert_eq!(learning_rate(1.0, 4, 4, 100), 1.0);
    assert!((learning_rate(1.0, 52, 4, 100) - 0.5).abs() < 1e-12);
    assert!(learning_rate(1.0, 100, 4, 100).abs() < 1e-12);
}

#[test]
fn cudnn_benchmark_is_for_pytorch_and_tch_on_a_gpu() {
    let on_cpu = spec(r#","cudnn_benchmark":false"#).unwrap_err();
    assert_eq!(on_cpu.field, "cudnn_benchmark");
    assert!(on_cpu.to_string().contains("CPU"), "{on_cpu}");
    let gpu = Machine {
        gpus: 1,
        cpu_cores: 2,
    };
    let off = spec(r#","device":"cuda:0","cudnn_benchmark":false"#).unwrap();
    assert_eq!(off.cudnn_benchmark, Some(false));
    for ok in [Framework::Pytorch, Framework::Tch] {
        assert!(check_runnable(&off, ok, &[ok], gpu).is_ok(), "{ok}");
    }
    for refused in [Framework::Jax, Framework::Tensorflow] {
        let e = check_runnable(&off, refused, &[refused], gpu).unwrap_err();
        assert_eq!(e.field, "cudnn_benchmark", "{refused}");
    }
    // Part of the configuration when given, absent from the key when not.
    let default = spec(r#","device":"cuda:0""#).unwrap();
    let key = |s: &RunSpec| ConfigKeys::of(Framework::Pytorch, None, s).config;
    assert!(!key(&default).contains("cudnn_benchmark"));
    assert_ne!(key(&default), key(&off));
}

fn library(model: &str, extra: &str) -> Result<RunSpec, SpecError> {
    RunSpec::from_json(&format!(
        r#"{{"model":"{model}","batch_size":2,"steps":3{extra}}}"#
    ))
}

#[test]
fn library_models_are_typed_references_checked_for_syntax() {
    let s = library("timm:convnext_atto", r#","image_size":64"#).unwrap();
    let ModelConfig::Library(l) = &s.model_config else {
        panic!("{:?}", s.model_config);
    };
    assert_eq!(l.model.name, "convnext_atto");
    assert_eq!(l.image_size, Some(64));
    assert!(s.model_config.counted_by_worker());
    let e = library("timm:conv next", "").unwrap_err();
    assert_eq!(e.field, "model");
    let e = library("hf:llama?hidden_size", "").unwrap_err();
    assert_eq!(e.field, "model");
    // Only the options the library takes, and synthetic data.
    assert_eq!(
        library("timm:resnet18", r#","seq_len":16"#)
            .unwrap_err()
            .field,
        "seq_len"
    );
    assert_eq!(
        library("hf:bert", r#","image_size":32"#).unwrap_err().field,
        "image_size"
    );
    assert_eq!(
        library("hf:bert", r#","vocab_size":99"#).unwrap_err().field,
        "vocab_size"
    );
    assert_eq!(
        library("timm:resnet18", r#","data":"mnist""#)
            .unwrap_err()
            .field,
        "data"
    );
    assert_eq!(
        library("hf:gpt2", r#","num_classes":0"#).unwrap_err().field,
        "num_classes"
    );
}

#[test]
fn only_pytorch_in_python_builds_library_models() {
    let cpu = Machine {
        gpus: 0,
        cpu_cores: 2,
    };
    let all = [
        Framework::Pytorch,
        Framework::Tch,
        Framework::Jax,
        Framework::Tensorflow,
    ];
    let s = library("hf:bert", "").unwrap();
    assert!(check_runnable(&s, Framework::Pytorch, &all, cpu).is_ok());
    let compiled = library("timm:resnet18", r#","compile":"on""#).unwrap();
    assert!(check_runnable(&compiled, Framework::Pytorch, &all, cpu).is_ok());
    let fsdp = library("hf:bert", r#","devices":2,"parallel":"fsdp""#).unwrap();
    let e = check_runnable(
        &fsdp,
        Framework::Pytorch,
        &all,
        Machine {
            gpus: 0,
            cpu_cores: 4,
        },
    );
    assert_eq!(e.unwrap_err().field, "parallel");
    for other in [Framework::Tch, Framework::Jax, Framework::Tensorflow] {
        let e = check_runnable(&s, other, &all, cpu).unwrap_err();
        assert_eq!(e.field, "framework");
        assert!(e.to_string().contains("expected pytorch"), "{e}");
    }
}
