//! Where `webfetch` may go: URL checks (http/https, a host, no credentials) and the
//! classification of IP addresses that a page must not be able to steer the agent into
//! (loopback, private networks, link-local, cloud metadata services, ...).
//!
//! The check runs on the addresses a host resolves to, and the connection is then pinned to the
//! checked address, so a DNS answer that changes between check and connect (rebinding) cannot
//! bypass it.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

use reqwest::Url;

use tandem_tool_api::ToolError;

/// Why an address is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Blocked {
    /// 127.0.0.0/8, ::1, `localhost`.
    Loopback,
    /// 10/8, 172.16/12, 192.168/16.
    Private,
    /// 169.254/16, fe80::/10.
    LinkLocal,
    /// fc00::/7.
    UniqueLocal,
    /// 100.64/10 (carrier-grade NAT, shared address space).
    SharedCgnat,
    /// 224/4, ff00::/8.
    Multicast,
    /// 0.0.0.0/8, ::.
    Unspecified,
    /// Cloud instance metadata services (169.254.169.254, fd00:ec2::254, 100.100.100.200, ...).
    Metadata,
    /// 240/4, 255.255.255.255, 192.0.0/24, 198.18/15, documentation ranges, fec0::/10.
    Reserved,
}

impl Blocked {
    /// How the error message names it.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Self::Loopback => "a loopback address",
            Self::Private => "a private-network address",
            Self::LinkLocal => "a link-local address",
            Self::UniqueLocal => "a unique-local (private IPv6) address",
            Self::SharedCgnat => "a carrier-grade NAT (shared) address",
            Self::Multicast => "a multicast address",
            Self::Unspecified => "an unspecified address",
            Self::Metadata => "a cloud metadata service address",
            Self::Reserved => "a reserved address",
        }
    }
}

/// Why `ip` must not be fetched, or `None` when it is a public unicast address.
pub(crate) fn classify(ip: IpAddr) -> Option<Blocked> {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn classify_v4(ip: Ipv4Addr) -> Option<Blocked> {
    let [a, b, c, d] = ip.octets();
    Some(match (a, b, c, d) {
        // AWS/GCP/Azure/OpenStack; ECS task metadata; Alibaba Cloud.
        (169, 254, 169, 254) | (169, 254, 170, 2) | (100, 100, 100, 200) => Blocked::Metadata,
        (0, ..) => Blocked::Unspecified,
        (127, ..) => Blocked::Loopback,
        (10, ..) | (192, 168, ..) => Blocked::Private,
        (172, 16..=31, ..) => Blocked::Private,
        (169, 254, ..) => Blocked::LinkLocal,
        (100, 64..=127, ..) => Blocked::SharedCgnat,
        (224..=239, ..) => Blocked::Multicast,
        (240..=255, ..) => Blocked::Reserved,
        (192, 0, 0, _) | (192, 0, 2, _) | (198, 51, 100, _) | (203, 0, 113, _) => Blocked::Reserved,
        (198, 18..=19, ..) => Blocked::Reserved,
        _ => return None,
    })
}

fn classify_v6(ip: Ipv6Addr) -> Option<Blocked> {
    let segments = ip.segments();
    // IPv4 inside IPv6: mapped (::ffff:a.b.c.d), compatible (::a.b.c.d), NAT64 (64:ff9b::/96)
    // and 6to4 (2002:aabb:ccdd::/48) all reach the IPv4 address: judge that.
    let embedded = |hi: u16, lo: u16| Ipv4Addr::new((hi >> 8) as u8, hi as u8, (lo >> 8) as u8, lo as u8);
    if let Some(v4) = ip.to_ipv4_mapped() {
        return classify_v4(v4);
    }
    match segments {
        [0, 0, 0, 0, 0, 0, 0, 0] => return Some(Blocked::Unspecified),
        [0, 0, 0, 0, 0, 0, 0, 1] => return Some(Blocked::Loopback),
        [0, 0, 0, 0, 0, 0, hi, lo] => return classify_v4(embedded(hi, lo)),
        [0x64, 0xff9b, 0, 0, 0, 0, hi, lo] => return classify_v4(embedded(hi, lo)),
        [0x2002, hi, lo, ..] => return classify_v4(embedded(hi, lo)),
        [0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x0254] => return Some(Blocked::Metadata),
        _ => {}
    }
    let first = segments[0];
    Some(match first {
        _ if first & 0xffc0 == 0xfe80 => Blocked::LinkLocal,
        _ if first & 0xffc0 == 0xfec0 => Blocked::Reserved,
        _ if first & 0xfe00 == 0xfc00 => Blocked::UniqueLocal,
        _ if first & 0xff00 == 0xff00 => Blocked::Multicast,
        0x2001 if segments[1] == 0x0db8 => Blocked::Reserved,
        _ => return None,
    })
}

/// Checks the URL's form: http or https, a host, no `user:password@`.
pub(crate) fn check_url(raw: &str) -> Result<Url, ToolError> {
    let url = Url::parse(raw.trim()).map_err(|err| {
        ToolError::new(format!("`{raw}` is not a valid URL ({err}); give a full URL such as https://example.com/page"))
    })?;
    match url.scheme() {
        "http" | "https" => {}
        other => {
            return Err(ToolError::new(format!(
                "`{raw}` uses the `{other}` scheme; webfetch fetches http and https URLs only (use `read` for local files)"
            )));
        }
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(ToolError::new(format!("`{raw}` has no host; give a full URL such as https://example.com/page")));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(ToolError::new(format!(
            "`{raw}` carries a user name or password; webfetch does not send credentials, remove them from the URL"
        )));
    }
    Ok(url)
}

/// Which addresses `webfetch` may reach beyond public ones.
#[derive(Clone, Debug, Default)]
pub(crate) struct Access {
    /// Every address (the person allowed private networks).
    pub allow_private: bool,
    /// These exact socket addresses even though they are private (the tests' local server).
    pub exceptions: Vec<SocketAddr>,
}

/// Longest wait for a DNS answer.
const DNS_TIMEOUT: Duration = Duration::from_secs(10);

/// The address to connect to for `url`: its host resolved, and every address it resolves to
/// checked against `access`. IP-literal hosts are checked as they are.
pub(crate) async fn resolve(url: &Url, access: &Access) -> Result<SocketAddr, ToolError> {
    let allow_private = access.allow_private;
    let port = url.port_or_known_default().unwrap_or(80);
    let host = match url.host() {
        Some(url::Host::Ipv4(ip)) => return checked(url, &[SocketAddr::new(IpAddr::V4(ip), port)], access),
        Some(url::Host::Ipv6(ip)) => return checked(url, &[SocketAddr::new(IpAddr::V6(ip), port)], access),
        Some(url::Host::Domain(host)) => host.trim_end_matches('.').to_ascii_lowercase(),
        None => return Err(ToolError::new(format!("`{url}` has no host"))),
    };
    // `localhost` never leaves the machine, whatever the resolver says.
    if !allow_private && (host == "localhost" || host.ends_with(".localhost")) {
        return Err(refused(url, &host, IpAddr::V4(Ipv4Addr::LOCALHOST), Blocked::Loopback));
    }
    let lookup = tokio::time::timeout(DNS_TIMEOUT, tokio::net::lookup_host((host.as_str(), port))).await;
    let addrs: Vec<SocketAddr> = match lookup {
        Err(_) => {
            return Err(ToolError::new(format!(
                "looking up `{host}` timed out after {} s; check the host name, or try again later",
                DNS_TIMEOUT.as_secs()
            ))
            .with("dns", true));
        }
        Ok(Err(err)) => {
            return Err(ToolError::new(format!(
                "could not resolve `{host}` ({err}); check the URL's spelling, or search for the right address with `websearch`"
            ))
            .with("dns", true));
        }
        Ok(Ok(addrs)) => addrs.collect(),
    };
    if addrs.is_empty() {
        return Err(
            ToolError::new(format!("`{host}` resolves to no address; check the URL's spelling")).with("dns", true)
        );
    }
    checked(url, &addrs, access)
}

/// The first of `addrs`, when none of them is refused (one bad address is enough to refuse:
/// the resolver's order is not ours to rely on).
fn checked(url: &Url, addrs: &[SocketAddr], access: &Access) -> Result<SocketAddr, ToolError> {
    if !access.allow_private {
        for addr in addrs.iter().filter(|a| !access.exceptions.contains(a)) {
            if let Some(why) = classify(addr.ip()) {
                return Err(refused(url, url.host_str().unwrap_or_default(), addr.ip(), why));
            }
        }
    }
    addrs.first().copied().ok_or_else(|| ToolError::new(format!("`{url}` resolves to no address")))
}

fn refused(url: &Url, host: &str, ip: IpAddr, why: Blocked) -> ToolError {
    let host_part = if host.trim_matches(['[', ']']) == ip.to_string() {
        format!("`{ip}` is {}", why.describe())
    } else {
        format!("`{host}` resolves to {ip}, {}", why.describe())
    };
    ToolError::new(format!(
        "refused to fetch {url}: {host_part}. webfetch does not reach loopback, private, link-local or metadata \
         addresses, so that a page cannot steer it into the local network. If this is meant (a local dev server), \
         the person can allow it with TANDEM_WEBFETCH_ALLOW_PRIVATE=1 or `[web] allow_private = true` in \
         .tandem/config.toml; do not retry otherwise"
    ))
    .with("refusedAddress", ip.to_string())
    .with("reason", why.describe())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_classified() {
        use Blocked::*;
        let cases: &[(&str, Option<Blocked>)] = &[
            ("8.8.8.8", None),
            ("93.184.215.14", None),
            ("172.15.255.255", None),
            ("172.32.0.1", None),
            ("100.63.255.255", None),
            ("100.128.0.1", None),
            ("169.253.1.1", None),
            ("127.0.0.1", Some(Loopback)),
            ("127.255.255.254", Some(Loopback)),
            ("10.1.2.3", Some(Private)),
            ("172.16.0.1", Some(Private)),
            ("172.31.255.255", Some(Private)),
            ("192.168.1.1", Some(Private)),
            ("169.254.1.1", Some(LinkLocal)),
            ("169.254.169.254", Some(Metadata)),
            ("169.254.170.2", Some(Metadata)),
            ("100.100.100.200", Some(Metadata)),
            ("100.64.0.1", Some(SharedCgnat)),
            ("100.127.255.255", Some(SharedCgnat)),
            ("224.0.0.1", Some(Multicast)),
            ("239.255.255.250", Some(Multicast)),
            ("0.0.0.0", Some(Unspecified)),
            ("0.1.2.3", Some(Unspecified)),
            ("255.255.255.255", Some(Reserved)),
            ("240.0.0.1", Some(Reserved)),
            ("192.0.2.10", Some(Reserved)),
            ("198.18.0.1", Some(Reserved)),
            ("2606:4700::1111", None),
            ("2001:4860:4860::8888", None),
            ("::1", Some(Loopback)),
            ("::", Some(Unspecified)),
            ("fe80::1", Some(LinkLocal)),
            ("febf::1", Some(LinkLocal)),
            ("fec0::1", Some(Reserved)),
            ("fc00::1", Some(UniqueLocal)),
            ("fd12:3456::1", Some(UniqueLocal)),
            ("fd00:ec2::254", Some(Metadata)),
            ("ff02::1", Some(Multicast)),
            ("2001:db8::1", Some(Reserved)),
            ("::ffff:127.0.0.1", Some(Loopback)),
            ("::ffff:10.0.0.1", Some(Private)),
            ("::ffff:169.254.169.254", Some(Metadata)),
            ("::ffff:8.8.8.8", None),
            ("::127.0.0.1", Some(Loopback)),
            ("64:ff9b::192.168.0.1", Some(Private)),
            ("64:ff9b::8.8.8.8", None),
            ("2002:7f00:1::", Some(Loopback)),
            ("2002:0808:0808::", None),
        ];
        let wrong: Vec<String> = cases
            .iter()
            .filter_map(|(ip, want)| {
                let got = classify(ip.parse().unwrap_or_else(|e| panic!("{ip}: {e}")));
                (got != *want).then(|| format!("{ip}: got {got:?}, want {want:?}"))
            })
            .collect();
        assert!(wrong.is_empty(), "{wrong:#?}");
    }

    #[test]
    fn urls_are_checked() {
        let error = |raw: &str| check_url(raw).err().map(|e| e.message).unwrap_or_default();
        assert!(check_url("https://example.com/a?b=c#d").is_ok());
        assert!(check_url("  http://example.com:8080  ").is_ok());
        assert!(error("file:///etc/passwd").contains("uses the `file` scheme"));
        assert!(error("ftp://example.com/x").contains("http and https URLs only"));
        assert!(error("example.com/page").contains("not a valid URL"));
        assert!(error("https://user:secret@example.com/").contains("user name or password"));
        assert!(error("http:///nohost").is_empty() || error("http:///nohost").contains("host"));
    }

    #[tokio::test]
    async fn literal_and_localhost_hosts_are_refused_without_dns() {
        let refused = |raw: &'static str| async move {
            let url = check_url(raw).unwrap_or_else(|e| panic!("{}", e.message));
            resolve(&url, &Access::default()).await.err().map(|e| e.message).unwrap_or_default()
        };
        let message = refused("http://127.0.0.1:8080/").await;
        assert!(message.contains("`127.0.0.1` is a loopback address"), "{message}");
        assert!(message.contains("TANDEM_WEBFETCH_ALLOW_PRIVATE=1"), "{message}");
        assert!(refused("http://[::ffff:a9fe:a9fe]/latest/").await.contains("cloud metadata"));
        assert!(refused("http://LOCALHOST./").await.contains("`localhost` resolves to 127.0.0.1, a loopback address"));
        assert!(refused("http://api.localhost/").await.contains("loopback"));
        assert!(refused("http://[fd00:ec2::254]/").await.contains("metadata"));
        assert!(refused("http://0.0.0.0:3000/").await.contains("unspecified"));
        // Allowed explicitly: the literal is used as it is.
        let url = check_url("http://127.0.0.1:9/").unwrap_or_else(|e| panic!("{}", e.message));
        let open = Access { allow_private: true, exceptions: Vec::new() };
        assert_eq!(resolve(&url, &open).await.ok(), Some(SocketAddr::from(([127, 0, 0, 1], 9))));
    }
}
