//! A RON file's shape: every value with its byte span, so that an error found anywhere (by
//! `ron`, by a block's `validate`, by the graph check) can name the line, the column and the
//! field path, and so that a vehicle file can override single fields of its topology.
//!
//! [`parse_tree`] does not convert values: `ron` does that. It only needs to agree with `ron` on
//! where each value starts and ends, which the shared syntax makes easy: comments, strings, raw
//! strings, chars, numbers, identifiers, `Name(..)` structs and tuples, `[..]` and `{..}`.

use core::fmt;
use core::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One value of a RON document and where it is.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// Byte range of the whole value in its file.
    pub span: Range<usize>,
    /// What kind of value it is.
    pub kind: NodeKind,
}

/// The kinds of RON value the scanner tells apart.
#[derive(Clone, Debug, PartialEq)]
pub enum NodeKind {
    /// A number, string, char, bool or bare identifier (a unit enum variant such as `Cylinder`).
    Atom,
    /// `Name(field: value, ..)` or `(field: value, ..)`.
    Struct {
        /// Span of the leading name, if any.
        name: Option<Range<usize>>,
        /// The fields, in file order.
        fields: Vec<Field>,
    },
    /// `Name(value, ..)`, `(value, ..)` or `Name()`: tuples, tuple structs, newtype variants and
    /// `Some(..)`.
    Tuple {
        /// Span of the leading name, if any.
        name: Option<Range<usize>>,
        /// The items, in file order.
        items: Vec<Node>,
    },
    /// `[value, ..]`.
    Seq(Vec<Node>),
    /// `{key: value, ..}`.
    Map(Vec<(Node, Node)>),
}

/// A named field of a struct value.
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    /// The field's name.
    pub name: String,
    /// Byte range of the name.
    pub name_span: Range<usize>,
    /// The value.
    pub value: Node,
}

/// One step of a field path: `.name`, `[index]` or `."key"`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Segment {
    /// A struct field.
    Field(String),
    /// An element of a sequence or tuple.
    Index(usize),
    /// An entry of a map, by its string key.
    Key(String),
}

/// A field path such as `blocks.gearbox.forward_ratios[2]`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldPath(pub Vec<Segment>);

impl FieldPath {
    /// The path of the document itself.
    pub fn root() -> Self {
        FieldPath(Vec::new())
    }

    /// This path followed by field `name`.
    pub fn field(&self, name: &str) -> Self {
        self.with(Segment::Field(name.to_owned()))
    }

    /// This path followed by element `index`.
    pub fn index(&self, index: usize) -> Self {
        self.with(Segment::Index(index))
    }

    /// This path followed by map key `key`.
    pub fn key(&self, key: &str) -> Self {
        self.with(Segment::Key(key.to_owned()))
    }

    /// This path followed by `other`.
    pub fn join(&self, other: &FieldPath) -> Self {
        let mut path = self.clone();
        path.0.extend(other.0.iter().cloned());
        path
    }

    fn with(&self, segment: Segment) -> Self {
        let mut path = self.clone();
        path.0.push(segment);
        path
    }

    /// Parses a dotted path as the crates' setting errors write it: `torque_curve[3].1`,
    /// `tire.relaxation_length[0]`, `forward_ratios[2]`. A numeric component after a dot is a
    /// tuple index.
    pub fn parse(text: &str) -> Self {
        let mut segments = Vec::new();
        for part in text.split('.').filter(|p| !p.is_empty()) {
            let (name, mut rest) = match part.find('[') {
                Some(i) => (&part[..i], &part[i..]),
                None => (part, ""),
            };
            if !name.is_empty() {
                segments.push(match name.parse::<usize>() {
                    Ok(i) => Segment::Index(i),
                    Err(_) => Segment::Field(name.to_owned()),
                });
            }
            while let Some(end) = rest.find(']') {
                if let Ok(i) = rest[1..end].parse::<usize>() {
                    segments.push(Segment::Index(i));
                }
                rest = &rest[end + 1..];
            }
        }
        FieldPath(segments)
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, segment) in self.0.iter().enumerate() {
            match segment {
                Segment::Field(name) | Segment::Key(name) if i == 0 => write!(f, "{name}")?,
                Segment::Field(name) | Segment::Key(name) => write!(f, ".{name}")?,
                Segment::Index(index) => write!(f, "[{index}]")?,
            }
        }
        Ok(())
    }
}

impl Node {
    /// The value's leading name (`Engine` in `Engine(..)`), if any.
    pub fn name<'a>(&self, text: &'a str) -> Option<&'a str> {
        match &self.kind {
            NodeKind::Struct { name, .. } | NodeKind::Tuple { name, .. } => {
                name.clone().map(|n| &text[n])
            }
            NodeKind::Atom => {
                let atom = &text[self.span.clone()];
                atom.starts_with(|c: char| c.is_alphabetic() || c == '_')
                    .then_some(atom)
            }
            _ => None,
        }
    }

    /// The string this value holds, if it is a plain string literal (no escapes).
    pub fn string<'a>(&self, text: &'a str) -> Option<&'a str> {
        let atom = &text[self.span.clone()];
        match self.kind {
            NodeKind::Atom if atom.len() >= 2 && atom.starts_with('"') && atom.ends_with('"') => {
                Some(&atom[1..atom.len() - 1])
            }
            _ => None,
        }
    }

    /// The field called `name`, if this is a struct that has it.
    pub fn field(&self, name: &str) -> Option<&Field> {
        match &self.kind {
            NodeKind::Struct { fields, .. } => fields.iter().find(|f| f.name == name),
            _ => None,
        }
    }

    /// The entries of a map, as (key string, value); entries whose key is not a plain string
    /// are skipped.
    pub fn entries<'a, 'n>(&'n self, text: &'a str) -> Vec<(&'a str, &'n Node)> {
        match &self.kind {
            NodeKind::Map(entries) => entries
                .iter()
                .filter_map(|(k, v)| k.string(text).map(|k| (k, v)))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// The key of the first map entry whose key is the string `key`, if this is a map that has
    /// it (errors about the key itself, such as an unknown name, point at it).
    pub fn key(&self, text: &str, key: &str) -> Option<&Node> {
        match &self.kind {
            NodeKind::Map(entries) => entries
                .iter()
                .map(|(k, _)| k)
                .find(|k| k.string(text) == Some(key)),
            _ => None,
        }
    }

    /// The value at `path` below this one. Newtype wrappers (`Some(x)`, `Variant(x)`) are looked
    /// through when the path goes on into a struct field or a sequence.
    pub fn find(&self, text: &str, path: &[Segment]) -> Option<&Node> {
        let Some((first, rest)) = path.split_first() else {
            return Some(self);
        };
        let next = match (&self.kind, first) {
            (NodeKind::Struct { fields, .. }, Segment::Field(name)) => {
                fields.iter().find(|f| &f.name == name).map(|f| &f.value)
            }
            (NodeKind::Tuple { items, .. }, Segment::Index(i)) if items.len() != 1 => items.get(*i),
            (NodeKind::Tuple { items, .. }, _) if items.len() == 1 => {
                return items[0].find(text, path);
            }
            (NodeKind::Tuple { items, .. }, Segment::Index(i)) => items.get(*i),
            (NodeKind::Seq(items), Segment::Index(i)) => items.get(*i),
            (NodeKind::Map(entries), Segment::Key(key) | Segment::Field(key)) => entries
                .iter()
                .find(|(k, _)| k.string(text) == Some(key.as_str()))
                .map(|(_, v)| v),
            _ => None,
        }?;
        next.find(text, rest)
    }

    /// The value at `path` below this one or, where the file leaves the end of the path to its
    /// default, at the deepest part of it the file writes (this value itself at worst): where
    /// an error about `path` points.
    pub fn find_written(&self, text: &str, path: &[Segment]) -> &Node {
        (0..=path.len())
            .rev()
            .find_map(|len| self.find(text, &path[..len]))
            .unwrap_or(self)
    }

    /// The deepest value that contains byte `offset`, with its path below this one. Offsets in
    /// a field's name count as the field.
    pub fn locate(&self, text: &str, offset: usize) -> (FieldPath, &Node) {
        let mut path = FieldPath::root();
        let mut node = self;
        'descend: loop {
            match &node.kind {
                NodeKind::Struct { fields, .. } => {
                    for f in fields {
                        if f.name_span.contains(&offset) || f.value.span.contains(&offset) {
                            path.0.push(Segment::Field(f.name.clone()));
                            node = &f.value;
                            continue 'descend;
                        }
                    }
                }
                NodeKind::Tuple { items, .. } | NodeKind::Seq(items) => {
                    for (i, item) in items.iter().enumerate() {
                        if item.span.contains(&offset) {
                            if items.len() > 1 || matches!(node.kind, NodeKind::Seq(_)) {
                                path.0.push(Segment::Index(i));
                            }
                            node = item;
                            continue 'descend;
                        }
                    }
                }
                NodeKind::Map(entries) => {
                    for (k, v) in entries {
                        if k.span.contains(&offset) || v.span.contains(&offset) {
                            let key = k.string(text).unwrap_or(&text[k.span.clone()]);
                            path.0.push(Segment::Key(key.to_owned()));
                            node = v;
                            continue 'descend;
                        }
                    }
                }
                NodeKind::Atom => {}
            }
            return (path, node);
        }
    }
}

/// A source file: its path (for messages), its text and its parsed shape.
#[derive(Clone, Debug)]
pub struct SourceFile {
    /// The path as the user named it (relative to the asset folder when loaded as an asset).
    pub path: PathBuf,
    /// The file's text.
    pub text: Arc<str>,
}

impl SourceFile {
    /// A source file called `path` holding `text`. A UTF-8 byte-order mark at the start (some
    /// editors write one) is dropped: lines and columns count the text after it.
    pub fn new(path: impl AsRef<Path>, text: impl Into<Arc<str>>) -> Self {
        let text: Arc<str> = text.into();
        SourceFile {
            path: path.as_ref().to_owned(),
            text: match text.strip_prefix('\u{feff}') {
                Some(rest) => rest.into(),
                None => text,
            },
        }
    }

    /// 1-based line and column (in characters) of byte `offset`.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        line_col(&self.text, offset)
    }
}

/// 1-based line and column (in characters) of byte `offset` in `text`.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = floor_char_boundary(text, offset.min(text.len()));
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count() + 1)
}

/// Byte offset of 1-based `line` and `column` (in characters) in `text`, clamped to the text.
pub fn offset_of(text: &str, line: usize, column: usize) -> usize {
    let mut start = 0;
    for _ in 1..line.max(1) {
        match text[start..].find('\n') {
            Some(i) => start += i + 1,
            None => return text.len(),
        }
    }
    let line_text = &text[start..text[start..].find('\n').map_or(text.len(), |i| start + i)];
    start
        + line_text
            .char_indices()
            .nth(column.saturating_sub(1))
            .map_or(line_text.len(), |(i, _)| i)
}

fn floor_char_boundary(text: &str, mut offset: usize) -> usize {
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

/// Where and why the scanner stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScanError {
    /// Byte offset of the problem.
    pub offset: usize,
    /// The field path of the value the scanner was reading (the innermost one that had begun),
    /// e.g. `chassis` for a comma missing between two chassis fields.
    pub path: FieldPath,
    /// What was expected.
    pub reason: String,
}

/// Deepest nesting the scanner follows (as deep as `ron`'s default recursion limit).
const MAX_DEPTH: usize = 128;

/// Parses the shape of a RON document: the single top-level value, after any `#![enable(..)]`
/// attributes.
pub fn parse_tree(text: &str) -> Result<Node, ScanError> {
    let mut scanner = Scanner::new(text, 0);
    scanner.skip_trivia()?;
    while scanner.peek() == Some(b'#') {
        scanner.skip_attribute()?;
        scanner.skip_trivia()?;
    }
    let node = scanner.value()?;
    scanner.skip_trivia()?;
    if scanner.pos < scanner.bytes.len() {
        return Err(scanner.error("the end of the file after the value"));
    }
    Ok(node)
}

/// Byte offset of the first character at or after `offset` that is not blank space or part of
/// a comment (`offset` itself inside an unterminated block comment).
pub fn next_token(text: &str, offset: usize) -> usize {
    let mut scanner = Scanner::new(text, offset.min(text.len()));
    match scanner.skip_trivia() {
        Ok(()) => scanner.pos,
        Err(_) => offset,
    }
}

struct Scanner<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    depth: usize,
    /// Path of the value being read, for errors.
    path: Vec<Segment>,
}

impl<'a> Scanner<'a> {
    fn new(text: &'a str, pos: usize) -> Self {
        Scanner {
            text,
            bytes: text.as_bytes(),
            pos,
            depth: 0,
            path: Vec::new(),
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn error(&self, expected: &str) -> ScanError {
        ScanError {
            offset: self.pos,
            path: FieldPath(self.path.clone()),
            reason: format!("expected {expected}"),
        }
    }

    /// A value at `segment` below the current path.
    fn value_at(&mut self, segment: Option<Segment>) -> Result<Node, ScanError> {
        let pushed = segment.map(|s| self.path.push(s)).is_some();
        let node = self.value()?;
        if pushed {
            self.path.pop();
        }
        Ok(node)
    }

    fn skip_trivia(&mut self) -> Result<(), ScanError> {
        loop {
            match self.peek() {
                Some(c) if c.is_ascii_whitespace() => self.pos += 1,
                Some(b'/') if self.bytes.get(self.pos + 1) == Some(&b'/') => {
                    while self.peek().is_some_and(|c| c != b'\n') {
                        self.pos += 1;
                    }
                }
                Some(b'/') if self.bytes.get(self.pos + 1) == Some(&b'*') => {
                    let start = self.pos;
                    self.pos += 2;
                    let mut depth = 1;
                    while depth > 0 {
                        match (self.peek(), self.bytes.get(self.pos + 1)) {
                            (None, _) => {
                                self.pos = start;
                                return Err(self.error("the end of this block comment"));
                            }
                            (Some(b'*'), Some(b'/')) => {
                                depth -= 1;
                                self.pos += 2;
                            }
                            (Some(b'/'), Some(b'*')) => {
                                depth += 1;
                                self.pos += 2;
                            }
                            _ => self.pos += 1,
                        }
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    fn skip_attribute(&mut self) -> Result<(), ScanError> {
        // `#![enable(...)]`
        while let Some(c) = self.peek() {
            self.pos += 1;
            if c == b']' {
                return Ok(());
            }
        }
        Err(self.error("`]` closing the attribute"))
    }

    fn expect(&mut self, c: u8, what: &str) -> Result<(), ScanError> {
        self.skip_trivia()?;
        if self.peek() == Some(c) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.error(what))
        }
    }

    fn value(&mut self) -> Result<Node, ScanError> {
        self.skip_trivia()?;
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error("less deeply nested values"));
        }
        let start = self.pos;
        let node = match self.peek() {
            None => Err(self.error("a value")),
            Some(b'[') => {
                self.pos += 1;
                let items = self.list(start, b']', |s, i| s.value_at(Some(Segment::Index(i))))?;
                Ok(Node {
                    span: start..self.pos,
                    kind: NodeKind::Seq(items),
                })
            }
            Some(b'{') => {
                self.pos += 1;
                let entries = self.list(start, b'}', |s, _| {
                    let key = s.value()?;
                    s.expect(b':', "`:` after the map key")?;
                    let name = key
                        .string(s.text)
                        .unwrap_or(&s.text[key.span.clone()])
                        .to_owned();
                    Ok((key, s.value_at(Some(Segment::Key(name)))?))
                })?;
                Ok(Node {
                    span: start..self.pos,
                    kind: NodeKind::Map(entries),
                })
            }
            Some(b'(') => self.parenthesised(start, None),
            Some(b'"') => self.string(start),
            Some(b'\'') => self.char_literal(start),
            Some(b'r') if matches!(self.bytes.get(self.pos + 1), Some(b'"' | b'#')) => {
                self.raw_string(start)
            }
            Some(b'b') if self.bytes.get(self.pos + 1) == Some(&b'"') => {
                self.pos += 1;
                self.string(start)
            }
            Some(c) if c.is_ascii_alphabetic() || c == b'_' => {
                self.identifier();
                let name = start..self.pos;
                let after = self.pos;
                self.skip_trivia()?;
                if self.peek() == Some(b'(') {
                    self.parenthesised(start, Some(name))
                } else {
                    self.pos = after;
                    Ok(Node {
                        span: start..after,
                        kind: NodeKind::Atom,
                    })
                }
            }
            Some(c) if c.is_ascii_digit() || matches!(c, b'-' | b'+' | b'.') => {
                while self.peek().is_some_and(|c| {
                    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-' | b'+')
                }) {
                    // A sign only starts a number or follows an exponent.
                    if matches!(self.peek(), Some(b'-' | b'+'))
                        && self.pos > start
                        && !matches!(self.bytes[self.pos - 1], b'e' | b'E')
                    {
                        break;
                    }
                    self.pos += 1;
                }
                Ok(Node {
                    span: start..self.pos,
                    kind: NodeKind::Atom,
                })
            }
            Some(_) => Err(self.error("a value")),
        };
        self.depth -= 1;
        node
    }

    fn identifier(&mut self) {
        if self.bytes[self.pos..].starts_with(b"r#") {
            self.pos += 2;
        }
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80)
        {
            self.pos += 1;
        }
    }

    /// `(..)` after an optional name: a struct when the first item is `ident:`.
    fn parenthesised(
        &mut self,
        start: usize,
        name: Option<Range<usize>>,
    ) -> Result<Node, ScanError> {
        let open = self.pos;
        self.pos += 1; // (
        self.skip_trivia()?;
        let is_struct = {
            let save = self.pos;
            let mut is_struct = false;
            if self
                .peek()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
            {
                self.identifier();
                self.skip_trivia()?;
                is_struct =
                    self.peek() == Some(b':') && self.bytes.get(self.pos + 1) != Some(&b':');
            }
            self.pos = save;
            is_struct
        };
        let kind = if is_struct {
            let fields = self.list(open, b')', |s, _| {
                s.skip_trivia()?;
                let name_start = s.pos;
                if !s
                    .peek()
                    .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
                {
                    return Err(s.error("a field name"));
                }
                s.identifier();
                let name_span = name_start..s.pos;
                s.expect(b':', "`:` after the field name")?;
                let name = s.text[name_span.clone()]
                    .trim_start_matches("r#")
                    .to_owned();
                let value = s.value_at(Some(Segment::Field(name.clone())))?;
                Ok(Field {
                    name,
                    name_span,
                    value,
                })
            })?;
            NodeKind::Struct { name, fields }
        } else {
            // A named tuple's first item is usually a newtype's content (`Some(x)`, `Csv(x)`):
            // its path is the tuple's, as [`Node::locate`] has it for newtypes.
            let named = name.is_some();
            let items = self.list(open, b')', |s, i| {
                s.value_at((!named || i > 0).then_some(Segment::Index(i)))
            })?;
            NodeKind::Tuple { name, items }
        };
        Ok(Node {
            span: start..self.pos,
            kind,
        })
    }

    /// Comma-separated items up to `close` (a trailing comma is allowed), after the opening
    /// bracket at `open`; consumes `close`. `item` gets each item's index.
    fn list<T>(
        &mut self,
        open: usize,
        close: u8,
        mut item: impl FnMut(&mut Self, usize) -> Result<T, ScanError>,
    ) -> Result<Vec<T>, ScanError> {
        let closing = |s: &Self| {
            let (line, column) = line_col(s.text, open);
            format!(
                "`{}` closing the `{}` at line {line}, column {column}",
                close as char, s.bytes[open] as char
            )
        };
        let mut items = Vec::new();
        loop {
            self.skip_trivia()?;
            match self.peek() {
                Some(c) if c == close => {
                    self.pos += 1;
                    return Ok(items);
                }
                None => return Err(self.error(&closing(self))),
                _ => {}
            }
            items.push(item(self, items.len())?);
            self.skip_trivia()?;
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(c) if c == close => {}
                _ => return Err(self.error(&format!("`,` or {}", closing(self)))),
            }
        }
    }

    fn string(&mut self, start: usize) -> Result<Node, ScanError> {
        self.pos += 1; // "
        loop {
            match self.peek() {
                None => {
                    self.pos = start;
                    return Err(self.error("the end of this string"));
                }
                Some(b'\\') => self.pos += 2,
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(Node {
                        span: start..self.pos,
                        kind: NodeKind::Atom,
                    });
                }
                Some(_) => self.pos += 1,
            }
        }
    }

    fn raw_string(&mut self, start: usize) -> Result<Node, ScanError> {
        self.pos += 1; // r
        let mut hashes = 0;
        while self.peek() == Some(b'#') {
            hashes += 1;
            self.pos += 1;
        }
        if self.peek() != Some(b'"') {
            return Err(self.error("`\"` opening the raw string"));
        }
        self.pos += 1;
        let closing: Vec<u8> = core::iter::once(b'"')
            .chain(core::iter::repeat_n(b'#', hashes))
            .collect();
        match self.bytes[self.pos..]
            .windows(closing.len())
            .position(|w| w == closing.as_slice())
        {
            Some(i) => {
                self.pos += i + closing.len();
                Ok(Node {
                    span: start..self.pos,
                    kind: NodeKind::Atom,
                })
            }
            None => {
                self.pos = start;
                Err(self.error("the end of this raw string"))
            }
        }
    }

    fn char_literal(&mut self, start: usize) -> Result<Node, ScanError> {
        self.pos += 1; // '
        if self.peek() == Some(b'\\') {
            self.pos += 1;
        }
        // One character, possibly several bytes, up to the closing quote.
        match self.bytes[self.pos + 1.min(self.bytes.len() - self.pos)..]
            .iter()
            .position(|&c| c == b'\'')
        {
            Some(i) => {
                self.pos += 1 + i + 1;
                Ok(Node {
                    span: start..self.pos,
                    kind: NodeKind::Atom,
                })
            }
            None => {
                self.pos = start;
                Err(self.error("the end of this char"))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = r##"#![enable(implicit_some)]
// a comment
Vehicle(
    name: "car", /* block /* nested */ comment */
    blocks: {
        "gearbox": Gearbox(forward_ratios: [3.5, 2.1, -0.0], shift_time: 0.2),
        "engine": Engine,
    },
    pos: (1.0, -2e-3, 3),
    tire: Some(MagicFormula((d: 1.0))),
    raw: r#"x"y"#,
    c: '\'',
)"##;

    #[test]
    fn finds_paths_and_locates_offsets() {
        let tree = parse_tree(DOC).unwrap();
        let path = FieldPath::parse("blocks.gearbox.forward_ratios[2]");
        let node = tree.find(DOC, &path.0).unwrap();
        assert_eq!(&DOC[node.span.clone()], "-0.0");
        let (found, _) = tree.locate(DOC, node.span.start);
        assert_eq!(found.to_string(), "blocks.gearbox.forward_ratios[2]");
        let engine = tree
            .find(DOC, &FieldPath::parse("blocks.engine").0)
            .unwrap();
        assert_eq!(engine.name(DOC), Some("Engine"));
        let y = tree.find(DOC, &FieldPath::parse("pos[1]").0).unwrap();
        assert_eq!(&DOC[y.span.clone()], "-2e-3");
        let d = tree.find(DOC, &FieldPath::parse("tire.d").0).unwrap();
        assert_eq!(&DOC[d.span.clone()], "1.0");
        assert_eq!(line_col(DOC, node.span.start), (6, 55));
        assert_eq!(offset_of(DOC, 6, 55), node.span.start);
    }

    #[test]
    fn reports_where_the_syntax_breaks() {
        let err = parse_tree("Vehicle(name: \"x\" mass: 3)").unwrap_err();
        assert_eq!(err.offset, 18);
        assert_eq!(err.path, FieldPath::root());
        assert_eq!(
            err.reason,
            "expected `,` or `)` closing the `(` at line 1, column 8"
        );
        let err = parse_tree("(a: {\"k\": [1, (2, 3 4)]})").unwrap_err();
        assert_eq!(err.path.to_string(), "a.k[1]");
        assert_eq!(err.offset, 20);
        let err = parse_tree("(a: Some(\"open))").unwrap_err();
        assert_eq!((err.offset, err.path.to_string()), (9, "a".to_owned()));
        assert_eq!(next_token("x  // c\n /* d */ y", 1), 17);
        assert!(parse_tree("[1, 2").is_err());
        assert!(parse_tree("\"open").is_err());
        assert!(parse_tree(&"[".repeat(1000)).is_err());
    }
}
