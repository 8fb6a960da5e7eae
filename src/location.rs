//! Where in a text file something is: the line and column of a byte offset, for messages.

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
