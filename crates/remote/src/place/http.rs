//! The few HTTP/1.1 requests a Ray cluster's job API takes (JSON, and a
//! package's bytes), over a plain TCP connection: one request per
//! connection, `Connection: close`, the body read to its length.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

/// What came back: the status code and the body.
#[derive(Debug)]
pub(crate) struct Reply {
    pub status: u16,
    pub body: Vec<u8>,
}

impl Reply {
    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// The longest reply read (a job's whole log comes back in one).
const REPLY_CAP: usize = 1 << 30;

/// One request to `host:port`: `method path` with `body` (JSON when
/// `json`); the reply, or why there was none.
pub(crate) fn request(
    host: &str,
    port: u16,
    method: &str,
    path: &str,
    body: Option<(&[u8], &str)>,
    timeout: Duration,
) -> Result<Reply, String> {
    let addr = (host, port)
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve {host}: {e}"))?
        .next()
        .ok_or_else(|| format!("{host} has no address"))?;
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(10))
        .map_err(|e| format!("cannot connect to {host}:{port}: {e}"))?;
    let io = |e: std::io::Error| format!("{method} {path} on {host}:{port}: {e}");
    s.set_read_timeout(Some(timeout)).map_err(io)?;
    s.set_write_timeout(Some(timeout)).map_err(io)?;
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\nAccept: application/json\r\n"
    );
    let bytes = body.map_or(&[][..], |(b, _)| b);
    if let Some((b, kind)) = body {
        head.push_str(&format!(
            "Content-Type: {kind}\r\nContent-Length: {}\r\n",
            b.len()
        ));
    } else if method != "GET" {
        head.push_str("Content-Length: 0\r\n");
    }
    head.push_str("\r\n");
    s.write_all(head.as_bytes()).map_err(io)?;
    s.write_all(bytes).map_err(io)?;
    let mut raw = Vec::new();
    s.take(REPLY_CAP as u64).read_to_end(&mut raw).map_err(io)?;
    parse_reply(&raw).map_err(|why| format!("{method} {path} on {host}:{port}: {why}"))
}

/// A reply's status and body: by `Content-Length`, chunks, or to the end.
fn parse_reply(raw: &[u8]) -> Result<Reply, String> {
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or("the reply has no end of headers")?;
    let head = String::from_utf8_lossy(&raw[..end]);
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|c| c.parse::<u16>().ok())
        .ok_or("the reply has no status line")?;
    let mut length = None;
    let mut chunked = false;
    for l in lines {
        let Some((k, v)) = l.split_once(':') else {
            continue;
        };
        let (k, v) = (k.trim().to_ascii_lowercase(), v.trim());
        if k == "content-length" {
            length = v.parse::<usize>().ok();
        } else if k == "transfer-encoding" && v.eq_ignore_ascii_case("chunked") {
            chunked = true;
        }
    }
    let rest = &raw[end + 4..];
    let body = if chunked {
        unchunk(rest)?
    } else {
        match length {
            Some(n) if n > rest.len() => {
                return Err(format!(
                    "the reply was cut short ({} of {n} bytes)",
                    rest.len()
                ))
            }
            Some(n) => rest[..n].to_vec(),
            None => rest.to_vec(),
        }
    };
    Ok(Reply { status, body })
}

fn unchunk(mut rest: &[u8]) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    loop {
        let eol = rest
            .windows(2)
            .position(|w| w == b"\r\n")
            .ok_or("a chunk has no size line")?;
        let size_text = String::from_utf8_lossy(&rest[..eol]);
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
            .map_err(|_| format!("a chunk's size {size_text:?} is not hexadecimal"))?;
        rest = &rest[eol + 2..];
        if size == 0 {
            return Ok(body);
        }
        if rest.len() < size + 2 {
            return Err("a chunk was cut short".into());
        }
        body.extend_from_slice(&rest[..size]);
        rest = &rest[size + 2..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_are_read_by_length_by_chunks_and_to_the_end() {
        let r = parse_reply(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello-extra").unwrap();
        assert_eq!((r.status, r.text().as_str()), (200, "hello"));
        let c = parse_reply(
            b"HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n",
        )
        .unwrap();
        assert_eq!((c.status, c.text().as_str()), (404, "abcde"));
        let e = parse_reply(b"HTTP/1.0 200 OK\r\n\r\nall of it").unwrap();
        assert_eq!(e.text(), "all of it");
        assert!(
            parse_reply(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nshort")
                .unwrap_err()
                .contains("cut short")
        );
        assert!(parse_reply(b"garbage").is_err());
    }

    #[test]
    fn a_real_server_answers_a_request_with_a_body() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = std::thread::Builder::new()
            .name("http-test-server".into())
            .spawn(move || {
                let (mut s, _) = listener.accept().unwrap();
                let mut got = Vec::new();
                let mut buf = [0u8; 4096];
                while !String::from_utf8_lossy(&got).contains("{\"a\":1}") {
                    let n = s.read(&mut buf).unwrap();
                    got.extend_from_slice(&buf[..n]);
                }
                s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                    .unwrap();
                String::from_utf8_lossy(&got).into_owned()
            })
            .unwrap();
        let r = request(
            "127.0.0.1",
            port,
            "POST",
            "/api/jobs/",
            Some((b"{\"a\":1}", "application/json")),
            Duration::from_secs(10),
        )
        .unwrap();
        assert_eq!((r.status, r.text().as_str()), (200, "ok"));
        let sent = server.join().unwrap();
        assert!(sent.starts_with("POST /api/jobs/ HTTP/1.1\r\n"), "{sent}");
        assert!(sent.contains("Content-Length: 7\r\n"), "{sent}");
    }
}
