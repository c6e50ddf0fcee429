//! Where a host of the studio's list is: `ssh://…` (a machine the studio
//! logs into, alone or as a Slurm login host) or `ray://HEAD[:PORT]` (a Ray
//! cluster's head, reached through its job-submission API over HTTP, the
//! API KubeRay serves too).

use serde::{Deserialize, Serialize};

use crate::bad;
use crate::error::RemoteResult;
use crate::url::SshUrl;

/// The port of Ray's dashboard, which serves the job-submission API.
pub const RAY_DEFAULT_PORT: u16 = 8265;

/// `ray://HEAD[:PORT]`: a Ray cluster's head and the port of its
/// job-submission API (default 8265).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct RayUrl {
    pub head: String,
    pub api_port: u16,
}

impl RayUrl {
    pub fn parse(text: &str) -> RemoteResult<RayUrl> {
        let refuse = |why: &str| {
            bad(
                "url",
                format!("url = {text} is not allowed: {why}; expected ray://HEAD[:PORT] (the head's job-submission API, port 8265 unless said)"),
            )
        };
        let rest = text
            .strip_prefix("ray://")
            .ok_or_else(|| refuse("it does not start with ray://"))?;
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        if rest.contains(['/', '@', '?', '#']) {
            return Err(refuse("a Ray address has no user, folder or query"));
        }
        let (head, port) = match rest.rsplit_once(':') {
            Some((h, p)) => (
                h,
                p.parse::<u16>()
                    .ok()
                    .filter(|&p| p > 0)
                    .ok_or_else(|| refuse(&format!("port {p} is not a number from 1 to 65535")))?,
            ),
            None => (rest, RAY_DEFAULT_PORT),
        };
        let allowed = |c: char| c.is_ascii_alphanumeric() || "-._".contains(c);
        if head.is_empty() || !head.chars().all(allowed) || head.starts_with('-') {
            return Err(refuse(
                "the head is empty or has characters other than letters, digits, - . _",
            ));
        }
        Ok(RayUrl {
            head: head.to_owned(),
            api_port: port,
        })
    }
}

impl std::fmt::Display for RayUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ray://{}", self.head)?;
        if self.api_port != RAY_DEFAULT_PORT {
            write!(f, ":{}", self.api_port)?;
        }
        Ok(())
    }
}

/// A host's address: what kind of place it is and where.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(untagged)]
pub enum HostUrl {
    Ssh(SshUrl),
    Ray(RayUrl),
}

impl HostUrl {
    /// `ssh://…` or `ray://…`, by its scheme.
    pub fn parse(text: &str) -> RemoteResult<HostUrl> {
        if text.starts_with("ray://") {
            return RayUrl::parse(text).map(HostUrl::Ray);
        }
        if text.starts_with("ssh://") {
            return SshUrl::parse(text).map(HostUrl::Ssh);
        }
        Err(bad(
            "url",
            format!("url = {text} is not allowed: expected ssh://[user@]host[:port][/folder] (a machine reached with ssh, or a Slurm login host) or ray://HEAD[:PORT] (a Ray cluster's head)"),
        ))
    }

    /// The ssh address, for what only a host reached over ssh has.
    pub fn ssh(&self) -> RemoteResult<&SshUrl> {
        match self {
            HostUrl::Ssh(u) => Ok(u),
            HostUrl::Ray(r) => Err(bad(
                "host",
                format!("host {r} is a Ray cluster: the studio reaches it through Ray's job API, not over ssh"),
            )),
        }
    }
}

impl std::fmt::Display for HostUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HostUrl::Ssh(u) => u.fmt(f),
            HostUrl::Ray(r) => r.fmt(f),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ray_addresses_parse_print_back_and_read_back_from_json() {
        let r = HostUrl::parse("ray://head-1.example.org").unwrap();
        assert_eq!(
            r,
            HostUrl::Ray(RayUrl {
                head: "head-1.example.org".into(),
                api_port: 8265
            })
        );
        assert_eq!(r.to_string(), "ray://head-1.example.org");
        let p = HostUrl::parse("ray://127.0.0.1:28265/").unwrap();
        assert_eq!(p.to_string(), "ray://127.0.0.1:28265");
        let s = HostUrl::parse("ssh://ada@box:2222").unwrap();
        for u in [&r, &p, &s] {
            let back: HostUrl = serde_json::from_str(&serde_json::to_string(u).unwrap()).unwrap();
            assert_eq!(&back, u);
        }
        assert!(s.ssh().is_ok());
        assert!(r.ssh().unwrap_err().to_string().contains("Ray cluster"));
        for bad in [
            "ray://",
            "ray://a:0",
            "ray://a:x",
            "ray://u@head",
            "ray://head/path",
            "ray://-x",
            "ray://a;b",
            "http://head:8265",
        ] {
            let e = HostUrl::parse(bad).unwrap_err();
            assert!(
                e.to_string()
                    .contains(&format!("url = {bad} is not allowed")),
                "{e}"
            );
        }
    }
}
