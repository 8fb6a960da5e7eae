//! Where in a TOML file something is: the line and column of a byte offset, the key path
//! at a position, and the diagnosis of a TOML reader error (shared by parameter and model
//! files), for messages.

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub line: usize,
    pub col: usize,
}

impl Location {
    /// Line and column (both 1-based) of byte `offset` in `src`.
    pub fn of_offset(src: &str, offset: usize) -> Location {
        let offset = offset.min(src.len());
        let before = &src[..offset];
        let line = before.matches('\n').count() + 1;
        let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
        Location { line, col }
    }
}

/// One problem in a TOML file: key path, position, value, rule and fix (a parameter file's
/// problems, and a TOML reader error in any file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub key: String,
    pub location: Option<Location>,
    pub value: Option<String>,
    pub rule: String,
    pub fix: String,
}

impl Problem {
    /// The problem a TOML reader error describes.
    pub fn of_toml(src: &str, e: &toml::de::Error) -> Problem {
        let span = e.span();
        let location = span.as_ref().map(|s| Location::of_offset(src, s.start));
        let message = e.message().trim().to_string();
        let key = span
            .as_ref()
            .and_then(|s| key_path_at(src, s.start))
            .unwrap_or_else(|| "<document>".to_string());
        // For an unknown key the span covers the key itself, which is not a value.
        let value = span
            .as_ref()
            .and_then(|s| src.get(s.clone()))
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty() && !v.contains('\n') && v.len() < 80)
            .filter(|_| !message.starts_with("unknown field"));
        let (rule, fix) = if message.starts_with("unknown field") {
            (
                message.clone(),
                "remove the key or correct its spelling; unknown keys are never ignored",
            )
        } else if message.starts_with("invalid type") {
            (
                message.clone(),
                "write the value with the type the key takes (integers unquoted, names quoted)",
            )
        } else if message.starts_with("missing field") {
            (message.clone(), "add the key")
        } else {
            (
                format!("TOML syntax: {message}"),
                "fix the TOML syntax at this position",
            )
        };
        Problem {
            key,
            location,
            value,
            rule,
            fix: fix.to_string(),
        }
    }
}

/// Best-effort key path for the text at `offset`: the nearest table header above it plus
/// the key on its line (`array.rows`); a table of an array of tables is numbered from 0
/// (`layer[2].kernel`).
pub fn key_path_at(src: &str, offset: usize) -> Option<String> {
    let line_start = src
        .get(..offset.min(src.len()))?
        .rfind('\n')
        .map_or(0, |i| i + 1);
    // The header line at or above `offset`, with the text before it.
    let mut header = None;
    let mut start = line_start;
    loop {
        let end = src[start..].find('\n').map_or(src.len(), |i| start + i);
        let line = src[start..end].trim();
        if line.starts_with('[') {
            header = Some((start, line));
            break;
        }
        if start == 0 {
            break;
        }
        start = src[..start - 1].rfind('\n').map_or(0, |i| i + 1);
    }
    let table = header.map(|(at, h)| {
        let name = h.trim_matches(|c| c == '[' || c == ']').trim();
        if h.starts_with("[[") {
            let index = src[..at].lines().filter(|l| l.trim() == h).count();
            format!("{name}[{index}]")
        } else {
            name.to_string()
        }
    });
    let line_end = src[line_start..]
        .find('\n')
        .map_or(src.len(), |i| line_start + i);
    let key = src[line_start..line_end]
        .split_once('=')
        .map(|(k, _)| k.trim().to_string())
        .filter(|k| !k.is_empty() && !k.starts_with('['));
    match (table, key) {
        (Some(t), Some(k)) => Some(format!("{t}.{k}")),
        (None, Some(k)) => Some(k),
        (t, None) => t,
    }
}

/// Where key `key` is set in table `table` (`""` for the top level), or in the `[[table]]`
/// whose `name` is `name`: the key's line, else the table's header, else nothing.
pub fn locate_key(src: &str, table: &str, name: Option<&str>, key: &str) -> Option<Location> {
    // The tables of the file: header, offset of the header line, its lines with offsets.
    type Section<'s> = (&'s str, usize, Vec<(usize, &'s str)>);
    let mut sections: Vec<Section> = vec![("", 0, Vec::new())];
    let mut at = 0;
    for line in src.split_inclusive('\n') {
        let t = line.trim();
        if t.starts_with('[') {
            sections.push((t, at, Vec::new()));
        } else if let Some(s) = sections.last_mut() {
            s.2.push((at + (line.len() - line.trim_start().len()), t));
        }
        at += line.len();
    }
    let key_of = |l: &str| l.split_once('=').map(|(k, _)| k.trim().to_string());
    let quoted = name.map(|n| format!("\"{n}\""));
    let section = sections.iter().find(|(h, _, lines)| {
        let hname = h.trim_matches(|c| c == '[' || c == ']').trim();
        hname == table
            && match &quoted {
                None => true,
                Some(q) => lines
                    .iter()
                    .any(|(_, l)| key_of(l).as_deref() == Some("name") && l.ends_with(q.as_str())),
            }
    })?;
    let offset = section
        .2
        .iter()
        .find(|(_, l)| key_of(l).as_deref() == Some(key))
        .map_or(section.1, |(o, _)| *o);
    Some(Location::of_offset(src, offset))
}

/// Read a TOML file as text: a missing file and a file that is not UTF-8 are different
/// problems with different fixes, `(rule, fix)`.
pub fn read_text(
    path: &std::path::Path,
    kind: &str,
    samples: &str,
) -> Result<String, (String, String)> {
    // A parameter file or model is text of a few kilobytes; 64 MiB is far beyond any. What
    // is not a regular file (a device such as /dev/zero, a FIFO) is refused unread.
    let fix = || format!("check the path; {samples}");
    let m = std::fs::metadata(path).map_err(|e| (format!("cannot read the {kind}: {e}"), fix()))?;
    if !m.is_file() || m.len() > 64 << 20 {
        return Err((
            format!(
                "the {kind} {} is not a regular file of at most 64 MiB",
                path.display()
            ),
            fix(),
        ));
    }
    let bytes = std::fs::read(path).map_err(|e| (format!("cannot read the {kind}: {e}"), fix()))?;
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let valid = std::str::from_utf8(&e.as_bytes()[..at]).unwrap_or_default();
        let l = Location::of_offset(valid, at);
        (
            format!(
                "a {kind} is UTF-8 text (TOML); byte {at} (line {}, column {}) is not",
                l.line, l.col
            ),
            "save the file as UTF-8".to_string(),
        )
    })
}
