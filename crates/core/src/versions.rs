//! Framework versions as an axis: `FRAMEWORK==VERSION` (`jax==0.7.2`), the
//! releases each Python worker is claimed to run on unchanged (others are
//! refused, naming the field), and what an environment for one release
//! installs. Pure: the environments themselves are the runner's.

use std::fmt;

use crate::error::SpecError;
use crate::framework::Framework;

/// A release number `MAJOR.MINOR.PATCH` (no pre-release or local tag).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Release {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
}

impl Release {
    pub const fn new(major: u32, minor: u32, patch: u32) -> Release {
        Release {
            major,
            minor,
            patch,
        }
    }

    /// `0.7.2` → 0.7.2; `2.13` → 2.13.0; anything else (`0.7.2rc1`, `x`) → `None`.
    pub fn parse(s: &str) -> Option<Release> {
        let parts: Vec<&str> = s.split('.').collect();
        if parts.is_empty() || parts.len() > 3 {
            return None;
        }
        let mut n = [0u32; 3];
        for (i, p) in parts.iter().enumerate() {
            if p.is_empty() || !p.chars().all(|c| c.is_ascii_digit()) || p.len() > 6 {
                return None;
            }
            n[i] = p.parse().ok()?;
        }
        Some(Release::new(n[0], n[1], n[2]))
    }
}

/// Written as its text (`"0.7.2"`).
impl serde::Serialize for Release {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Read from its text (`"0.7.2"`).
impl<'de> serde::Deserialize<'de> for Release {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Release, D::Error> {
        let text = String::deserialize(d)?;
        Release::parse(&text)
            .ok_or_else(|| serde::de::Error::custom(format!("not a release: {text}")))
    }
}

impl fmt::Display for Release {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// A framework at one release: `jax==0.7.2`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct Pin {
    pub framework: Framework,
    pub release: Release,
}

impl fmt::Display for Pin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}=={}", self.framework, self.release)
    }
}

/// The releases a worker is claimed to run on unchanged: from `first`
/// through every patch of `last` (major, minor).
#[derive(Debug, Clone, Copy)]
pub struct Supported {
    pub framework: Framework,
    pub first: Release,
    pub last: (u32, u32),
    /// Why the range ends where it does, in words.
    pub why: &'static str,
}

/// Each Python framework's supported range. JAX's is where the worker's
/// Flax, optax and attention calls exist unchanged (0.6 through the
/// studio's 0.10); PyTorch's is the studio's 2.13 and the GPU machines'
/// 2.11; TensorFlow's the studio's own release.
pub const SUPPORTED: [Supported; 3] = [
    Supported {
        framework: Framework::Jax,
        first: Release::new(0, 6, 0),
        last: (0, 10),
        why: "the JAX worker's Flax, optax and attention calls exist unchanged from 0.6 on",
    },
    Supported {
        framework: Framework::Pytorch,
        first: Release::new(2, 11, 0),
        last: (2, 13),
        why: "the PyTorch worker is tested on 2.11 (the GPU machines') and 2.13 (the studio's)",
    },
    Supported {
        framework: Framework::Tensorflow,
        first: Release::new(2, 21, 0),
        last: (2, 21),
        why: "the TensorFlow worker is tested on the studio's 2.21 only",
    },
];

impl Supported {
    pub fn of(framework: Framework) -> Option<&'static Supported> {
        SUPPORTED.iter().find(|s| s.framework == framework)
    }

    pub fn contains(&self, r: Release) -> bool {
        r >= self.first && (r.major, r.minor) <= self.last
    }

    /// `jax 0.6.0 to 0.10.x`.
    pub fn words(&self) -> String {
        format!(
            "{} {} to {}.{}.x",
            self.framework, self.first, self.last.0, self.last.1
        )
    }
}

/// `jax==0.7.2` → `Some(pin)`; a framework without `==` → `None`. A bad
/// release, `tch==…` or a release outside the supported range is an error
/// naming the field `framework`, the value and what is allowed.
pub fn parse_pin(given: &str) -> Result<Option<Pin>, SpecError> {
    let Some((name, version)) = given.split_once("==") else {
        return Ok(None);
    };
    let framework = Framework::parse(name.trim())?;
    let Some(range) = Supported::of(framework) else {
        return Err(SpecError::new(
            "framework",
            given,
            &format!(
                "a release of {} (tch is built against one libtorch: pin pytorch==VERSION instead)",
                Framework::list(&Framework::PYTHON)
            ),
        ));
    };
    let Some(release) = Release::parse(version.trim()) else {
        return Err(SpecError::new(
            "framework",
            given,
            &format!(
                "FRAMEWORK==MAJOR.MINOR.PATCH, a released version ({})",
                range.words()
            ),
        ));
    };
    if !range.contains(release) {
        return Err(SpecError::new(
            "framework",
            given,
            &format!("{}: {}", range.words(), range.why),
        ));
    }
    Ok(Some(Pin { framework, release }))
}

/// The environment's folder name under the studio's versions folder:
/// `jax-0.7.2`, `torch-2.11.0`, `tensorflow-2.21.0`.
pub fn env_name(pin: Pin) -> String {
    let stem = match pin.framework {
        Framework::Pytorch => "torch",
        other => other.as_str(),
    };
    format!("{stem}-{}", pin.release)
}

/// Whether a framework version a worker reported (`0.7.2`, `2.13.0+cpu`)
/// is `pin`'s release: a local build tag after `+` is not part of it.
pub fn runs_release(pin: Pin, reported: &str) -> bool {
    let public = reported.split('+').next().unwrap_or(reported);
    Release::parse(public.trim()) == Some(pin.release)
}

/// What an environment for `pin` installs: the framework at that release
/// (the CUDA build on a machine with an NVIDIA GPU) and the packages the
/// worker needs beside it, unpinned so that the installer picks releases
/// compatible with it (an older JAX gets an older Flax).
pub fn requirements(pin: Pin, gpu: bool) -> String {
    let v = pin.release;
    let framework = match (pin.framework, gpu) {
        (Framework::Jax, false) => format!("jax[cpu]=={v}\nflax\noptax"),
        (Framework::Jax, true) => format!("jax[cuda12]=={v}\nflax\noptax"),
        (Framework::Tensorflow, false) => format!("tensorflow-cpu=={v}"),
        (Framework::Tensorflow, true) => format!("tensorflow[and-cuda]=={v}"),
        // No arm for "any other": a new framework must say what it installs.
        (Framework::Pytorch | Framework::Tch, _) => format!("torch=={v}"),
    };
    format!(
        "# {pin}: made on demand by the studio (FRAMEWORK==VERSION).\n{framework}\npillow\nnumpy\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reported_version_runs_a_release_only_when_it_is_that_release() {
        let pin = parse_pin("jax==0.7.2").unwrap().unwrap();
        assert!(runs_release(pin, "0.7.2"));
        assert!(!runs_release(pin, "0.10.2"));
        assert!(!runs_release(pin, "0.7.2rc1"));
        assert!(!runs_release(pin, "?"));
        let torch = parse_pin("pytorch==2.13.0").unwrap().unwrap();
        assert!(runs_release(torch, "2.13.0+cpu"));
        assert!(runs_release(torch, "2.13"));
    }

    #[test]
    fn pins_parse_and_name_their_environment() {
        let p = parse_pin("jax==0.7.2").unwrap().unwrap();
        assert_eq!(
            (p.framework, p.release),
            (Framework::Jax, Release::new(0, 7, 2))
        );
        assert_eq!(p.to_string(), "jax==0.7.2");
        assert_eq!(env_name(p), "jax-0.7.2");
        assert_eq!(parse_pin("jax").unwrap(), None);
        assert_eq!(parse_pin("pytorch@mine").unwrap(), None);
        let t = parse_pin("pytorch==2.11").unwrap().unwrap();
        assert_eq!(env_name(t), "torch-2.11.0");
        assert!(requirements(t, false).contains("\ntorch==2.11.0\n"));
        assert!(requirements(p, false).contains("\njax[cpu]==0.7.2\nflax\noptax\n"));
        assert!(requirements(p, true).contains("jax[cuda12]==0.7.2"));
        assert!(Release::new(0, 10, 2) > Release::new(0, 9, 9));
    }

    #[test]
    fn a_release_outside_the_supported_range_is_refused_naming_the_field() {
        for (given, says) in [
            ("jax==0.4.30", "jax 0.6.0 to 0.10.x"),
            ("jax==0.11.0", "jax 0.6.0 to 0.10.x"),
            ("pytorch==1.13.1", "pytorch 2.11.0 to 2.13.x"),
            ("tensorflow==2.15.0", "tensorflow 2.21.0 to 2.21.x"),
            ("jax==0.7.2rc1", "FRAMEWORK==MAJOR.MINOR.PATCH"),
            ("jax==", "FRAMEWORK==MAJOR.MINOR.PATCH"),
            ("tch==2.13.0", "pin pytorch==VERSION instead"),
        ] {
            let e = parse_pin(given).unwrap_err();
            assert_eq!(e.field, "framework", "{given}");
            assert_eq!(e.value, given);
            assert!(e.to_string().contains(says), "{given}: {e}");
        }
        assert_eq!(parse_pin("mxnet==1.9.1").unwrap_err().field, "framework");
        assert!(
            parse_pin("jax==0.10.7").unwrap().is_some(),
            "every patch of the last minor"
        );
    }
}
