//! Image folders through each framework's own loader.

use super::*;

/// An image folder `name` in the test's home (`common::image_folder`).
fn image_folder(home: &Home, name: &str, args: &[&str]) -> std::path::PathBuf {
    ready("pytorch");
    common::image_folder(&home.dir().join(name), args)
}

/// `data = folder`: JPEG and PNG files decoded and augmented on the host
/// while training runs, by each framework's own loader (DataLoader worker
/// processes, tf.data, JAX's NumPy pipeline), evaluated on the val/ split.
#[test]
fn an_image_folder_trains_through_each_framework_loader() {
    for framework in FRAMEWORKS {
        ready(framework);
    }
    let home = Home::new("folder");
    let dir = image_folder(&home, "digits", &["--per-class", "50"]);
    let data = format!("folder:{}", dir.display());
    let (out, v) = home.run(&[
        "run",
        "--framework",
        "pytorch,tensorflow,jax",
        "--data",
        &data,
        "--model",
        "resnet_mini",
        "--batch-size",
        "16",
        "--epochs",
        "6",
        // Each stops at its first evaluation past 0.3 (one per epoch), the
        // second or third here (0.43, 0.41, 0.35): 24 s instead of 35 s.
        "--target-accuracy",
        "0.31",
        "--lr",
        "3e-3",
        "--loader-workers",
        "2",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", explain(&home, &out, &v));
    let loaders = [
        "torch.utils.data.DataLoader, 2 worker processes",
        "tf.data (map with 2 parallel calls, 2 batches prefetched)",
        "NumPy pipeline (2 decoding threads",
    ];
    for (run, loader) in v["runs"].as_array().unwrap().iter().zip(loaders) {
        assert_eq!(run["status"], "completed", "{run}");
        assert_eq!(run["data"], "folder", "{run}");
        let (out, shown) = home.run(&["show", &run["id"].to_string(), "--json"]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        let info = &shown["hello"]["data"];
        assert!(
            info["loader"].as_str().unwrap().starts_with(loader),
            "{info}"
        );
        // 10 digits × 40 training and 10 held-out images (val/).
        assert_eq!(info["classes"], 10, "{info}");
        assert_eq!(info["train_samples"], 400, "{info}");
        assert_eq!(info["eval_samples"], 100, "{info}");
        assert_eq!(info["layout"], "train/ and val/", "{info}");
        // At most 6 epochs of 25 steps on real digits: well above chance (10 %).
        let accuracy = run["best_accuracy"].as_f64().unwrap();
        assert!(accuracy > 0.3, "{}: accuracy {accuracy}", run["framework"]);
        // The breakdown's data part is the wait for the loader's next batch.
        let parts = run["breakdown"]["parts"].as_array().unwrap();
        assert_eq!(parts[0]["part"], "data", "{run}");
        assert!(parts[0]["mean_s"].as_f64().unwrap() > 0.0, "{run}");
        let (out, _) = home.run(&["show", &run["id"].to_string()]);
        assert!(text(&out).contains("data loader:       "), "{}", text(&out));
    }
}

/// The inline run's loader as recorded, and its data part. (The same
/// loader with 2 worker processes is recorded in
/// `an_image_folder_trains_through_each_framework_loader`; whether the
/// workers shorten the wait depends on free cores: on a busy 2-core machine
/// they compete with the training thread, so no two data parts are
/// compared.)
fn loader_as_recorded(home: &Home, run: &Value) {
    let (out, shown) = home.run(&["show", &run["id"].to_string(), "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let said = shown["hello"]["data"]["loader"]
        .as_str()
        .unwrap_or_default();
    assert!(
        said.starts_with("torch.utils.data.DataLoader, in the training process (num_workers = 0)"),
        "{said}"
    );
    assert!(
        run["breakdown"]["parts"][0]["mean_s"].as_f64().unwrap() > 0.0,
        "{run}"
    );
}

/// Decoding on the training thread (`--loader-workers 0`) of large JPEGs
/// makes a small model input-bound, and the badge says so; bad folders are
/// refused naming the field, before a run or as a stored failure.
#[test]
fn an_image_folder_decoded_on_the_training_thread_is_input_bound_and_bad_folders_are_named() {
    for framework in FRAMEWORKS {
        ready(framework);
    }
    let home = Home::new("folder-bound");
    // 640 px images: decoding and resizing 16 of them takes longer than a
    // step of resnet_mini on 32 px crops (measured at 480 px: 38 ms of data
    // against 28 ms of compute per step inline, 6 ms with 2 workers).
    let big = image_folder(
        &home,
        "big",
        &["--per-class", "8", "--size", "640", "--flat"],
    );
    let data = format!("folder:{}", big.display());
    let (out, v) = home.run(&[
        "run",
        "--framework",
        "pytorch",
        "--data",
        &data,
        "--model",
        "resnet_mini",
        "--batch-size",
        "16",
        "--steps",
        "24",
        "--window-steps",
        "4",
        "--loader-workers",
        "0",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", explain(&home, &out, &v));
    let inline = &v["runs"][0];
    assert_eq!(inline["status"], "completed", "{inline}");
    assert_eq!(caused(inline), ["input_bound"], "{inline}");
    assert!(
        evidence(inline, "input_bound").starts_with("data "),
        "{inline}"
    );
    loader_as_recorded(&home, inline);

    // A file that is not an image: a stored failure naming it, whichever
    // loader met it (DataLoader's worker process, tf.data, a JAX thread).
    let broken = image_folder(&home, "broken", &["--per-class", "4", "--flat", "--broken"]);
    let (_, v) = home.run(&[
        "run",
        "--framework",
        "pytorch,tensorflow,jax",
        "--data",
        &format!("folder:{}", broken.display()),
        "--model",
        "resnet_mini",
        "--batch-size",
        "41",
        "--steps",
        "3",
        "--json",
    ]);
    for r in v["runs"].as_array().unwrap() {
        assert_eq!(r["status"], "failed", "{r}");
        assert_eq!(r["error_class"], "bad_config", "{r}");
        assert!(
            r["status_reason"]
                .as_str()
                .unwrap()
                .contains("zz-not-an-image.png cannot be decoded"),
            "{r}"
        );
    }
    // Refused before any run: no such folder, a class count that disagrees,
    // loader workers without a folder, and the libtorch worker.
    for (args, field, says) in [
        (
            vec!["--data", "folder:/nonexistent/images"],
            "data",
            "data = folder:/nonexistent/images is not allowed",
        ),
        (
            vec!["--data", data.as_str(), "--num-classes", "7"],
            "num_classes",
            "num_classes = 7 is not allowed",
        ),
        (
            vec!["--data", "mnist", "--loader-workers", "2"],
            "loader_workers",
            "no value with data = mnist",
        ),
        (
            vec!["--data", data.as_str(), "--framework", "tch"],
            "data",
            "the libtorch worker has no image-folder loader",
        ),
    ] {
        let mut all = vec!["run", "--model", "resnet_mini", "--steps", "3", "--json"];
        if !args.contains(&"--framework") {
            all.extend(["--framework", "pytorch"]);
        }
        all.extend(args.iter().copied());
        let (out, _) = home.run(&all);
        assert_eq!(out.status.code(), Some(2), "{all:?}: {}", text(&out));
        assert!(text(&out).contains(says), "{all:?}: {}", text(&out));
        assert!(text(&out).contains(field), "{all:?}: {}", text(&out));
    }
    let (out, v) = home.run(&["runs", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // The inline run and the three broken-folder runs; nothing refused was stored.
    assert_eq!(v["runs"].as_array().unwrap().len(), 4, "{v}");
}

/// `--image-size` in every framework: the ViT's position embeddings follow
/// the number of patches (the same parameter count everywhere), FLOPs per
/// sample follow the size as `describe` computes it, and a size the model
/// cannot take is refused naming `image_size`. Every run of the sweep also
/// takes an operator profile (`--profile`, 3 steps after the breakdown
/// whatever the run's length), checked by `profiles::profile_as_expected`
/// and `profiles::profiles_compared`; one run without it is its twin.
#[test]
fn an_image_size_is_a_run_setting_for_every_image_model_in_every_framework() {
    for framework in FRAMEWORKS {
        ready(framework);
    }
    let home = Home::new("image-size");
    let sweep = |framework: &str, model: &str, profile: bool| {
        let mut args = vec![
            "run",
            "--framework",
            framework,
            "--model",
            model,
            "--image-size",
            "48",
            "--batch-size",
            "4",
            "--steps",
            "4",
            "--window-steps",
            "2",
            "--json",
        ];
        if profile {
            args.push("--profile");
        }
        let (out, v) = home.run(&args);
        assert_eq!(out.status.code(), Some(0), "{}", explain(&home, &out, &v));
        v
    };
    let v = sweep(
        "tch,pytorch,tensorflow,jax",
        "vit_mini_patch4_32,resnet_mini",
        true,
    );
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 8);
    for run in runs {
        let model = run["model"].as_str().unwrap();
        let (_, described) =
            home.run(&["describe", "--model", model, "--image-size", "48", "--json"]);
        assert_eq!(run["status"], "completed", "{run}");
        // 459,562 at 32 px, plus 80 more positions × width 96 at 48 px.
        let params = if model == "resnet_mini" {
            78_042
        } else {
            467_242
        };
        assert_eq!(run["param_count"], params, "{run}");
        assert_eq!(described["param_count"], params, "{described}");
        let (_, shown) = home.run(&["show", &run["id"].to_string(), "--json"]);
        assert_eq!(
            shown["hello"]["flops_per_sample"], described["flops_per_sample"],
            "{model}"
        );
        profiles::profile_as_expected(run, &shown);
    }
    let twin = sweep("pytorch", "resnet_mini", false);
    profiles::profiles_compared(&home, runs, &twin["runs"][0]);
    let (out, _) = home.run(&[
        "run",
        "--framework",
        "pytorch",
        "--model",
        "vit_mini_patch4_32",
        "--image-size",
        "30",
        "--steps",
        "2",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out)
            .contains("image_size = 30 is not allowed: expected a multiple of the patch size 4"),
        "{}",
        text(&out)
    );
}
