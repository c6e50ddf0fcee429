//! What the wizard offers: the machine, the models, the frameworks.

use tauri::State;
use trainbench_app::frameworks::framework_choices;
use trainbench_core::session::ChartKind;
use trainbench_core::spec::{Compile, Precision};

use super::dto::AppInfo;
use crate::error::ApiResult;
use crate::Studio;

#[tauri::command]
#[specta::specta]
pub fn app_info(studio: State<'_, Studio>) -> ApiResult<AppInfo> {
    let models = trainbench_app::models::catalogue();
    let prices = studio.with(|w| w.prices())?;
    let runs_stored = studio.with(|w| w.run_count())?;
    Ok(AppInfo {
        version: trainbench_app::VERSION.into(),
        database: studio.db_path().display().to_string(),
        runs_stored: u32::try_from(runs_stored).unwrap_or(u32::MAX),
        machine: studio.host.describe(),
        models,
        frameworks: framework_choices(),
        precisions: Precision::ALL.iter().map(|p| p.as_str().into()).collect(),
        compile_modes: Compile::ALL.iter().map(|c| c.as_str().into()).collect(),
        data_sources: vec![
            "synthetic".into(),
            "mnist".into(),
            "text".into(),
            "folder".into(),
        ],
        prices: prices.into_iter().map(|p| p.row).collect(),
        charts: ChartKind::ALL.to_vec(),
        settings: studio.settings(),
        database_problem: studio.database_problem(),
        glossary: trainbench_app::glossary::GLOSSARY.to_vec(),
    })
}
