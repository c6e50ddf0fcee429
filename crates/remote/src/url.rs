//! `ssh://[user@]host[:port][/folder]`: where a remote host is and which
//! folder on it holds the studio's kits and runs.

use serde::{Deserialize, Serialize};

use crate::error::RemoteResult;
use crate::{bad, DEFAULT_ROOT};

/// `ssh://[user@]host[:port][/root]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SshUrl {
    pub user: Option<String>,
    pub host: String,
    pub port: Option<u16>,
    /// The folder on the host that holds kits and runs (absolute, or
    /// relative to the login's home).
    pub root: String,
}

impl SshUrl {
    pub fn parse(text: &str) -> RemoteResult<SshUrl> {
        let refuse = |why: &str| {
            bad(
                "url",
                format!("url = {text} is not allowed: {why}; expected ssh://[user@]host[:port][/folder]"),
            )
        };
        let rest = text
            .strip_prefix("ssh://")
            .ok_or_else(|| refuse("it does not start with ssh://"))?;
        let (authority, root) = match rest.find('/') {
            Some(i) => (&rest[..i], rest[i..].to_owned()),
            None => (rest, String::new()),
        };
        let (user, hostport) = match authority.rsplit_once('@') {
            Some((u, h)) => (Some(u.to_owned()), h),
            None => (None, authority),
        };
        if user.as_deref() == Some("") {
            return Err(refuse("the user before @ is empty"));
        }
        let (host, port) =
            match hostport.rsplit_once(':') {
                Some((h, p)) => (
                    h,
                    Some(p.parse::<u16>().ok().filter(|&p| p > 0).ok_or_else(|| {
                        refuse(&format!("port {p} is not a number from 1 to 65535"))
                    })?),
                ),
                None => (hostport, None),
            };
        let allowed = |c: char| c.is_ascii_alphanumeric() || "-._".contains(c);
        if host.is_empty() || !host.chars().all(allowed) || host.starts_with('-') {
            return Err(refuse(
                "the host is empty or has characters other than letters, digits, - . _",
            ));
        }
        if let Some(u) = &user {
            if !u.chars().all(allowed) || u.starts_with('-') {
                return Err(refuse(
                    "the user has characters other than letters, digits, - . _",
                ));
            }
        }
        // "/" + path: absolute; "/~/x" or a bare path after the host: relative to home.
        let root = match root.as_str() {
            "" | "/" => DEFAULT_ROOT.to_owned(),
            r => r
                .strip_prefix("/~/")
                .map_or_else(|| r.to_owned(), str::to_owned),
        };
        if root
            .chars()
            .any(|c| c.is_control() || "'\"\\$`".contains(c))
        {
            return Err(refuse("the folder has quotes, $, ` or control characters"));
        }
        if root.starts_with('-') || root.contains("/-") {
            return Err(refuse("a folder name starts with -"));
        }
        Ok(SshUrl {
            user,
            host: host.to_owned(),
            port,
            root,
        })
    }

    /// `[user@]host` as ssh takes it.
    pub fn destination(&self) -> String {
        match &self.user {
            Some(u) => format!("{u}@{}", self.host),
            None => self.host.clone(),
        }
    }
}

impl std::fmt::Display for SshUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ssh://{}", self.destination())?;
        if let Some(p) = self.port {
            write!(f, ":{p}")?;
        }
        if self.root != DEFAULT_ROOT {
            if self.root.starts_with('/') {
                write!(f, "{}", self.root)?;
            } else {
                write!(f, "/~/{}", self.root)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ssh_addresses_parse_and_print_back() {
        let u = SshUrl::parse("ssh://ada@gpu1.example.org:2222/scratch/tb").unwrap();
        assert_eq!(u.destination(), "ada@gpu1.example.org");
        assert_eq!((u.port, u.root.as_str()), (Some(2222), "/scratch/tb"));
        assert_eq!(u.to_string(), "ssh://ada@gpu1.example.org:2222/scratch/tb");
        let d = SshUrl::parse("ssh://box").unwrap();
        assert_eq!(
            (d.user.as_deref(), d.port, d.root.as_str()),
            (None, None, DEFAULT_ROOT)
        );
        assert_eq!(d.to_string(), "ssh://box");
        let home = SshUrl::parse("ssh://box/~/bench").unwrap();
        assert_eq!(home.root, "bench");
        assert_eq!(home.to_string(), "ssh://box/~/bench");
        let spaced = SshUrl::parse("ssh://box/data/my runs").unwrap();
        assert_eq!(spaced.root, "/data/my runs");
        for bad in [
            "box",
            "http://box",
            "ssh://",
            "ssh://@box",
            "ssh://box:0",
            "ssh://box:99999",
            "ssh://-oProxyCommand=x",
            "ssh://a;b",
            "ssh://box/it's",
            "ssh://box/~/-rf",
            "ssh://box/srv/-x",
        ] {
            let e = SshUrl::parse(bad).unwrap_err();
            assert!(
                e.to_string()
                    .contains(&format!("url = {bad} is not allowed")),
                "{e}"
            );
        }
    }
}
