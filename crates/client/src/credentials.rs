//! Credentials written into a base URL (`http://user:password@proxy:8080/v1`) are kept out of
//! everything that is written down or visible to other users: `pod.json`, the pod's argv (which
//! `ps` shows), logs, `config show`. They travel like API keys do, through the environment
//! (`SEEDPOD_BASE_URL_CREDENTIALS`), and are put back into the URL only in the memory of the
//! process that sends requests.

/// The environment variable that carries a base URL's `user:password` to the pod process.
pub const CREDENTIALS_ENV: &str = "SEEDPOD_BASE_URL_CREDENTIALS";

/// `url` without its userinfo, and the userinfo (`user:password`, `user`) if it had one.
pub fn split_userinfo(url: &str) -> (String, Option<String>) {
    let Some(scheme_end) = url.find("://") else {
        return (url.to_string(), None);
    };
    let authority_start = scheme_end + 3;
    let rest = &url[authority_start..];
    let authority_len = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..authority_len];
    match authority.rfind('@') {
        Some(at) => {
            let userinfo = &authority[..at];
            let stripped = format!(
                "{}{}",
                &url[..authority_start],
                &url[authority_start + at + 1..]
            );
            let userinfo = (!userinfo.is_empty()).then(|| userinfo.to_string());
            (stripped, userinfo)
        }
        None => (url.to_string(), None),
    }
}

/// `url` with `userinfo` put back in front of its host; unchanged if it already has userinfo
/// or no scheme.
pub fn with_userinfo(url: &str, userinfo: &str) -> String {
    let (stripped, existing) = split_userinfo(url);
    if existing.is_some() || userinfo.is_empty() {
        return url.to_string();
    }
    match stripped.find("://") {
        Some(scheme_end) => format!(
            "{}{userinfo}@{}",
            &stripped[..scheme_end + 3],
            &stripped[scheme_end + 3..]
        ),
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn userinfo_comes_out_and_goes_back_in() {
        let (url, info) = split_userinfo("http://alice:s3cr%40t@proxy:8080/v1?x=a@b");
        assert_eq!(url, "http://proxy:8080/v1?x=a@b");
        assert_eq!(info.as_deref(), Some("alice:s3cr%40t"));
        assert_eq!(
            with_userinfo(&url, "alice:s3cr%40t"),
            "http://alice:s3cr%40t@proxy:8080/v1?x=a@b"
        );
    }

    #[test]
    fn urls_without_userinfo_are_left_alone() {
        for url in [
            "https://api.openai.com/v1",
            "http://127.0.0.1:8080",
            "http://host/path@not-userinfo",
            "not a url",
        ] {
            assert_eq!(split_userinfo(url), (url.to_string(), None), "{url}");
        }
        // A password containing '@' (unencoded): the last '@' of the authority ends it.
        assert_eq!(
            split_userinfo("http://u:p@ss@host/v1"),
            ("http://host/v1".to_string(), Some("u:p@ss".to_string()))
        );
        assert_eq!(with_userinfo("http://a:b@h/", "c:d"), "http://a:b@h/");
    }
}
