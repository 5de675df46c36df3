//! A small JSON writer: objects keep the order their members were added in,
//! output is indented two spaces. (Reading JSON is `crate::json`.)

/// A JSON value to write.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
    Arr(Vec<Value>),
    Obj(Vec<(String, Value)>),
}

impl Value {
    /// An object from `(key, value)` pairs.
    pub(crate) fn obj<const N: usize>(members: [(&str, Value); N]) -> Value {
        Value::Obj(members.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
    }

    /// A string.
    pub(crate) fn str(s: impl Into<String>) -> Value {
        Value::Str(s.into())
    }

    /// A number, or `null` if it is not finite (JSON has no NaN).
    pub(crate) fn num(n: f64) -> Value {
        if n.is_finite() { Value::Num(n) } else { Value::Null }
    }

    /// `null` for `None`.
    pub(crate) fn opt(n: Option<f64>) -> Value {
        n.map_or(Value::Null, Value::num)
    }

    /// The document as indented text, ending in a newline.
    pub(crate) fn to_pretty(&self) -> String {
        let mut out = String::new();
        self.write(&mut out, 0);
        out.push('\n');
        out
    }

    fn write(&self, out: &mut String, depth: usize) {
        let indent = |out: &mut String, d: usize| {
            out.push('\n');
            out.push_str(&"  ".repeat(d));
        };
        match self {
            Value::Null => out.push_str("null"),
            Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Value::Num(n) if n.fract() == 0.0 && n.abs() < 1e15 => out.push_str(&format!("{}", *n as i64)),
            Value::Num(n) => out.push_str(&format!("{n}")),
            Value::Str(s) => quote(out, s),
            Value::Arr(items) if items.is_empty() => out.push_str("[]"),
            Value::Obj(members) if members.is_empty() => out.push_str("{}"),
            Value::Arr(items) => {
                // Arrays of plain values stay on one line.
                let flat = items.iter().all(|v| !matches!(v, Value::Arr(_) | Value::Obj(_)));
                out.push('[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                        if flat {
                            out.push(' ');
                        }
                    }
                    if !flat {
                        indent(out, depth + 1);
                    }
                    v.write(out, depth + 1);
                }
                if !flat {
                    indent(out, depth);
                }
                out.push(']');
            }
            Value::Obj(members) => {
                out.push('{');
                for (i, (k, v)) in members.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    indent(out, depth + 1);
                    quote(out, k);
                    out.push_str(": ");
                    v.write(out, depth + 1);
                }
                indent(out, depth);
                out.push('}');
            }
        }
    }
}

fn quote(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::Json;

    #[test]
    fn writes_what_the_reader_reads() {
        let v = Value::obj([
            ("name", Value::str("a \"b\"\n\\ é\u{1}")),
            ("n", Value::num(318.0)),
            ("x", Value::num(0.25)),
            ("nan", Value::num(f64::NAN)),
            ("none", Value::opt(None)),
            ("ok", Value::Bool(true)),
            ("list", Value::Arr(vec![Value::num(1.0), Value::num(2.5)])),
            ("rows", Value::Arr(vec![Value::obj([("k", Value::Null)]), Value::Obj(vec![])])),
            ("empty", Value::Arr(vec![])),
        ]);
        let text = v.to_pretty();
        let j = Json::parse(&text).unwrap();
        assert_eq!(j.get("name").as_str(), Some("a \"b\"\n\\ é\u{1}"));
        assert_eq!(j.get("n"), &Json::Number(318.0));
        assert_eq!(j.get("x"), &Json::Number(0.25));
        assert_eq!(j.get("nan"), &Json::Null);
        assert_eq!(j.get("list").items().len(), 2);
        assert_eq!(j.get("rows").items().len(), 2);
        assert!(text.contains("\"n\": 318,"));
        assert!(text.contains("[1, 2.5]"));
        assert!(text.find("\"name\"").unwrap() < text.find("\"n\"").unwrap(), "order kept");
    }
}
