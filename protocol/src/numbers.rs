//! Counts as people (and models) read them. Shared by every crate that writes a count into a
//! note, a tool result or the screen, so `1,234` looks the same everywhere.

/// `1234567` → `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A count for a narrow column or a status line: `950`, `5.2k`, `16k`, `200k`, `1.5M` — whole
/// thousands from ten thousand on, as people name windows.
pub fn short_count(n: u64) -> String {
    /// `tenths` as `12.3` or, when whole, `12`.
    fn tenths_text(tenths: u128, unit: &str) -> String {
        match tenths % 10 {
            0 => format!("{}{unit}", tenths / 10),
            d => format!("{}.{d}{unit}", tenths / 10),
        }
    }
    // Wide enough that rounding never overflows, whatever a pod reports.
    let n = u128::from(n);
    if n < 1_000 {
        return n.to_string();
    }
    let k_tenths = (n * 10 + 500) / 1_000;
    if k_tenths < 100 {
        return tenths_text(k_tenths, "k");
    }
    let k = (n + 500) / 1_000;
    if k < 1_000 {
        return format!("{k}k");
    }
    let m_tenths = (n * 10 + 500_000) / 1_000_000;
    if m_tenths < 100 {
        return tenths_text(m_tenths, "M");
    }
    format!("{}M", (n + 500_000) / 1_000_000)
}

#[cfg(test)]
mod tests {
    use super::{short_count, thousands};

    #[test]
    fn counts_shorten_readably() {
        let cases = [
            (0, "0"),
            (950, "950"),
            (1_000, "1k"),
            (4_096, "4.1k"),
            (5_200, "5.2k"),
            (9_960, "10k"),
            (16_000, "16k"),
            (16_384, "16k"),
            (131_072, "131k"),
            (200_000, "200k"),
            (999_600, "1M"),
            (1_500_000, "1.5M"),
            (10_000_000, "10M"),
            (u64::MAX, "18446744073710M"),
        ];
        for (n, text) in cases {
            assert_eq!(short_count(n), text, "{n}");
        }
    }

    #[test]
    fn thousands_groups_digits() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(795_200), "795,200");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(thousands(u64::MAX), "18,446,744,073,709,551,615");
    }
}
