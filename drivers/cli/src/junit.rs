//! JUnit XML for `ptxeq corpus --junit FILE` (what CI systems ingest).
//!
//! Written by hand: one `<testsuite>` of `<testcase>`s is all CI needs, and
//! the only subtle part is escaping, which [`escape`] does (XML special
//! characters, and control characters XML 1.0 cannot carry at all).

use std::fmt::Write as _;
use std::time::Duration;

/// How one case ended, in JUnit terms.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JunitStatus {
    Passed,
    /// `<failure message=..>details</failure>`.
    Failed {
        message: String,
        details: String,
    },
    /// `<skipped message=../>`: pending, or not decided.
    Skipped {
        message: String,
    },
}

/// One `<testcase>`.
#[derive(Clone, Debug)]
pub struct JunitCase {
    /// `family/case`: the family is the class name, the rest the name.
    pub name: String,
    pub time: Duration,
    pub status: JunitStatus,
    /// Extra text (`<system-out>`).
    pub output: String,
}

/// Escapes `s` for XML text and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' | '\t' | '\r' => out.push(c),
            // Not representable in XML 1.0, even escaped.
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => {
                out.push('\u{fffd}');
            }
            c => out.push(c),
        }
    }
    out
}

/// The whole report.
pub fn render(suite: &str, cases: &[JunitCase], total: Duration) -> String {
    let failures = cases
        .iter()
        .filter(|c| matches!(c.status, JunitStatus::Failed { .. }))
        .count();
    let skipped = cases
        .iter()
        .filter(|c| matches!(c.status, JunitStatus::Skipped { .. }))
        .count();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"{s}\" tests=\"{n}\" failures=\"{failures}\" skipped=\"{skipped}\" time=\"{t:.3}\">",
        s = escape(suite),
        n = cases.len(),
        t = total.as_secs_f64()
    );
    let _ = writeln!(
        out,
        "  <testsuite name=\"{s}\" tests=\"{n}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\" time=\"{t:.3}\">",
        s = escape(suite),
        n = cases.len(),
        t = total.as_secs_f64()
    );
    for c in cases {
        let (class, name) = c.name.split_once('/').unwrap_or(("corpus", &c.name));
        let _ = write!(
            out,
            "    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3}\"",
            escape(class),
            escape(name),
            c.time.as_secs_f64()
        );
        if c.status == JunitStatus::Passed && c.output.is_empty() {
            out.push_str("/>\n");
            continue;
        }
        out.push_str(">\n");
        match &c.status {
            JunitStatus::Passed => {}
            JunitStatus::Failed { message, details } => {
                let _ = writeln!(
                    out,
                    "      <failure message=\"{}\">{}</failure>",
                    escape(message),
                    escape(details)
                );
            }
            JunitStatus::Skipped { message } => {
                let _ = writeln!(out, "      <skipped message=\"{}\"/>", escape(message));
            }
        }
        if !c.output.is_empty() {
            let _ = writeln!(out, "      <system-out>{}</system-out>", escape(&c.output));
        }
        out.push_str("    </testcase>\n");
    }
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping() {
        assert_eq!(
            escape("a<b & \"c\" 'd'>"),
            "a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;"
        );
        assert_eq!(escape("bell\u{7}\nok"), "bell\u{fffd}\nok");
    }

    #[test]
    fn report_shape() {
        let cases = vec![
            JunitCase {
                name: "races/a".into(),
                time: Duration::from_millis(5),
                status: JunitStatus::Passed,
                output: String::new(),
            },
            JunitCase {
                name: "softmax/b<&>".into(),
                time: Duration::from_millis(7),
                status: JunitStatus::Failed {
                    message: "expected `equivalent`, got `race`".into(),
                    details: "x < y".into(),
                },
                output: String::new(),
            },
            JunitCase {
                name: "top".into(),
                time: Duration::ZERO,
                status: JunitStatus::Skipped {
                    message: "pending".into(),
                },
                output: "note".into(),
            },
        ];
        let xml = render("ptxeq corpus", &cases, Duration::from_secs(1));
        assert!(
            xml.contains("tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"1\""),
            "{xml}"
        );
        assert!(
            xml.contains("<testcase classname=\"races\" name=\"a\" time=\"0.005\"/>"),
            "{xml}"
        );
        assert!(xml.contains("name=\"b&lt;&amp;&gt;\""), "{xml}");
        assert!(
            xml.contains(
                "<failure message=\"expected `equivalent`, got `race`\">x &lt; y</failure>"
            ),
            "{xml}"
        );
        assert!(xml.contains("classname=\"corpus\" name=\"top\""), "{xml}");
        assert!(xml.contains("<system-out>note</system-out>"), "{xml}");
        // The passing case is self-closed, the other two are closed.
        assert_eq!(xml.matches("<testcase ").count(), 3);
        assert_eq!(xml.matches("</testcase>").count(), 2);
        assert!(xml.ends_with("</testsuite>\n</testsuites>\n"));
    }
}
