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
