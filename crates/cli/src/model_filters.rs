//! `trainbench models`' filters (the search itself is the application
//! layer's `model_search`).

/// `models`' filters: any of them lists every match with its family, size
/// and whether a CPU trains it.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ModelFilters {
    /// Only this family (as listed: the catalogue's `vit`, `resnet` …,
    /// timm's module such as `convnext`, `decoder` or `encoder` for a
    /// transformers model type, keras.applications' module).
    #[arg(long)]
    pub family: Option<String>,
    /// Only this size at the model's defaults: tiny (under 1 M parameters),
    /// small (1–10 M), medium (10–100 M), large (100 M–1 B), huge (1 B and
    /// over).
    #[arg(long)]
    pub size: Option<String>,
    /// Only models a CPU trains (a library model: at most 5 M parameters).
    #[arg(long)]
    pub cpu: bool,
    /// Count the parameters of the library matches not counted yet, first
    /// (on PyTorch's meta device: nothing is allocated; kept for next time).
    #[arg(long)]
    pub count: bool,
}

impl ModelFilters {
    pub fn any(&self) -> bool {
        self.family.is_some() || self.size.is_some() || self.cpu || self.count
    }
}
