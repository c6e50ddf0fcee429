use super::*;

const HEADER: &str = "id,date,source,hardware,gpu,devices,framework,model,studio_model,precision,batch,unit,value,scope,flops,stated_mfu,derivation,quote\n";

fn one(row: &str) -> Published {
    parse(&format!("{HEADER}{row}\n")).unwrap().remove(0)
}

#[test]
fn the_shipped_table_holds_sourced_rows_each_with_an_implied_mfu() {
    let rows = published();
    assert!(rows.len() >= 10, "{} rows", rows.len());
    let mut ids: Vec<&str> = rows.iter().map(|r| r.id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), rows.len(), "ids are unique");
    for r in &rows {
        assert!(r.source.starts_with("https://"), "{}: {}", r.id, r.source);
        assert!(!r.date.is_empty() && !r.quote.is_empty(), "{}", r.id);
        assert!(r.per_device > 0.0, "{}", r.id);
        let i = implied(r);
        assert_eq!(
            i.len(),
            r.flops.split(';').count(),
            "{}: every formula parses",
            r.id
        );
        assert!(
            i.iter().all(|x| x.mfu.is_some()),
            "{}: a peak for {} {}",
            r.id,
            r.gpu,
            r.precision
        );
    }
}

#[test]
fn a_vit_claim_of_1420_images_per_second_on_8_h100_is_implausibly_low() {
    let r = one("claim,2024,https://example.org/claim,8x H100 SXM,H100 SXM,8,PyTorch,ViT-B/16,vit_base_patch16_224,amp-bf16,,samples/s,1420,total,catalog:vit_base_patch16_224,,,1420 img/s");
    let i = implied(&r);
    let mfu = i[0].mfu.unwrap();
    // 177.5 images/s per GPU × 105.4 GFLOP ÷ 989 TFLOP/s.
    assert!((mfu - 0.0189).abs() < 0.001, "{mfu}");
    let p = plausibility(&i);
    assert_eq!(p.verdict, Verdict::TooLow, "{}", p.reason);
    assert!(
        p.reason.starts_with("1.9 % of the dense peak"),
        "{}",
        p.reason
    );
}

#[test]
fn the_flop_formula_moves_gpt2s_mfu_and_over_the_peak_is_impossible() {
    // 468 K tokens/s per H100 on GPT-2 124M.
    let r = one("llmc,2024,https://example.org/llmc,8x H100,H100 SXM,8,llm.c,GPT-2 124M,gpt2_small,amp-bf16,524288,tokens/s,3744914,total,\"6N:124.475e6;6N+12LTd:124.475e6,12,1024,768\",,,x");
    let i = implied(&r);
    assert_eq!(i[0].formula, "6N");
    assert_eq!(i[1].formula, "6N + 12·L·T·d");
    let (a, b) = (i[0].mfu.unwrap(), i[1].mfu.unwrap());
    assert!(
        (0.34..0.37).contains(&a) && (0.39..0.42).contains(&b),
        "{a} {b}"
    );
    assert_eq!(plausibility(&i).verdict, Verdict::Plausible);
    let fast = one("fast,2024,https://example.org/f,1x H100,H100 SXM,1,x,GPT-2 124M,,amp-bf16,,tokens/s,2000000,per_device,6N:124.475e6,,,x");
    assert_eq!(plausibility(&implied(&fast)).verdict, Verdict::Impossible);
    let unknown = one("u,2024,https://example.org/u,1x TPU,TPU v5e,1,x,GPT-2 124M,,amp-bf16,,tokens/s,1000,per_device,6N:124.475e6,,,x");
    assert_eq!(plausibility(&implied(&unknown)).verdict, Verdict::Unknown);
}

#[test]
fn a_bad_row_is_refused_naming_its_line_and_field() {
    let e = parse(&format!("{HEADER}a,b,c\n")).unwrap_err();
    assert!(e.contains("line 2: 3 fields, expected 18"), "{e}");
    let e = parse(&format!(
        "{HEADER}a,2024,https://x,h,H100 SXM,8,f,m,,fp32,,images,1,total,6N:1,,,q\n"
    ))
    .unwrap_err();
    assert!(e.contains("unit = images"), "{e}");
}

#[test]
fn a_published_104_percent_mfu_is_flagged_and_placed_against_the_right_peak() {
    let r = published()
        .into_iter()
        .find(|r| r.id == "nanogpt-pr464-104pct-mfu")
        .expect("the nanoGPT claim is in the table");
    let i = implied(&r);
    let ours = i[0].mfu.unwrap();
    // 104 % of the A100's 312 TFLOP/s is 33 % of the H100's 989.
    assert!((ours - 1.04 * 312.0 / 989.0).abs() < 0.002, "{ours}");
    let j = judge(&r, &i);
    assert_eq!(j.verdict, Verdict::Impossible);
    assert!(
        j.reason.starts_with("the source states 104 % MFU"),
        "{}",
        j.reason
    );
    assert!(
        j.reason.contains("32.8 % of the dense peak"),
        "{}",
        j.reason
    );
}

#[test]
fn gpt2_124m_on_8_h100_is_38_or_41_percent_by_the_formula() {
    let r = published()
        .into_iter()
        .find(|r| r.id == "llmc-gpt2-124m-8xh100")
        .unwrap();
    let by: Vec<(String, f64)> = implied(&r)
        .into_iter()
        .map(|i| (i.formula, i.mfu.unwrap()))
        .collect();
    let pct = |f: &str| 100.0 * by.iter().find(|(n, _)| n == f).unwrap().1;
    assert!((pct("6N + 6·L·T·d") - 38.3).abs() < 0.3, "{by:?}");
    assert!((pct("6N + 12·L·T·d") - 41.0).abs() < 0.3, "{by:?}");
}

#[test]
fn a_run_is_placed_beside_its_family_closest_first_with_every_difference_said() {
    // A ResNet-50 run at half the DLE A100 AMP figure, on an A100, in amp-fp16.
    let flops = lookup("resnet50")
        .unwrap()
        .default_config()
        .flops_per_sample();
    let mut run = RunFigures {
        model: "resnet50",
        precision: Precision::AmpFp16,
        per_device: 1235.0,
        flops_per_sample: flops,
        gpu: Some("NVIDIA A100-SXM4-80GB"),
        global_batch: 256,
        software: "pytorch 2.13.0",
    };
    let all = against(&run);
    let family = |a: &Against| {
        lookup(&a.reference.studio_model)
            .unwrap()
            .default_config()
            .family()
    };
    assert!(all
        .iter()
        .all(|a| family(a) == crate::models::Family::Resnet));
    let first = &all[0];
    assert_eq!(
        first.reference.id, "dle-resnet50-a100-amp",
        "same model, precision and GPU first"
    );
    assert!((first.fraction - 0.5).abs() < 1e-9, "{}", first.fraction);
    assert!(first.differs.is_empty(), "{:?}", first.differs);
    assert!(
        first
            .text
            .starts_with("50 % of PyTorch (NGC 21.03) ResNet-50 v1.5 on 1x A100"),
        "{}",
        first.text
    );
    // The same model on a CPU in fp32 with another library: each difference said.
    run.gpu = None;
    run.precision = Precision::Fp32;
    run.per_device = 12.35;
    run.software = "jax 0.10.2";
    let a = against(&run)
        .into_iter()
        .find(|a| a.reference.id == "dle-resnet50-a100-amp")
        .unwrap();
    assert_eq!(percent(a.fraction), "0.50 %");
    for said in [
        "hardware (a CPU against 1x A100 80GB",
        "precision (fp32 against amp-fp16)",
        "software (jax 0.10.2 against PyTorch",
    ] {
        assert!(
            a.differs.iter().any(|d| d.starts_with(said)),
            "{said}: {:?}",
            a.differs
        );
    }
}
